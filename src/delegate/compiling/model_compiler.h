// From a parsed delegate blob to a model compiled for the chosen device, taken from the first of its
// three sources that has one: a precompiled model in the blob that fits the device, options and
// OpenVINO release; the model-file cache (model_file_cache.h); the IR, rewritten for paged attention
// where the blob says its caches grow (paged_model.h), compiled, and stored in the model-file cache.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "blob/delegate_blob.h"
#include "common/outcome.h"
#include "delegate/compiling/compiled_model.h"
#include "delegate/compiling/held_weights.h"
#include "delegate/compiling/model_file_cache.h"
#include "delegate/options/compile_options.h"
#include "openvino_api/runtime.h"

namespace executorch_openvino::delegate {

// The IR's weights, asked for only when the IR itself is compiled: an imported model reads none, so
// weights kept in the program's named data are fetched only then (delegate/compiling/named_weights.h).
// Taken over by the compiled model, which reads them in place (held_weights.h).
using TakeWeights = std::function<Outcome<HeldWeights>()>;

// What compile() makes a model from.
struct CompileRequest {
  const blob::ParsedBlob& parsed;
  const CompileOptions& options;
  TakeWeights take_weights;
  // Called as soon as `parsed` is not read any more: when a precompiled model or the model cache
  // served, or the IR has been read (what of ExecuTorch's buffer the weights need, they have taken).
  std::function<void()> release_blob = {};
  // The model-file cache's file for this model, when a cache folder is in use and the device is a
  // physical one: imported when usable, else written after the IR is compiled (without OpenVINO's
  // own CACHE_DIR, which would store a second copy).
  std::optional<CacheEntry> cache_entry = std::nullopt;
};

// After checking the device is present. The compiled model keeps what OpenVINO may read: the IR's
// weights in place, or a copy of the imported bytes. `notes` receives what is worth saying:
// why none of the blob's precompiled models was used, why a cached file was not, why the attention
// was left as exported, why the model was not stored.
Outcome<std::unique_ptr<CompiledModel>> compile(openvino_api::Runtime& runtime, const CompileRequest& request,
                                                Notes& notes);

// A blob from ExecuTorch's own OpenVINO partitioner: a compiled model exported for
// `options.device`, imported with the options in effect (its bytes copied and kept).
Outcome<std::unique_ptr<CompiledModel>> import_upstream(openvino_api::Runtime& runtime, const void* data, size_t size,
                                                        const CompileOptions& options);

// Whether `device` names a device the runtime has. Virtual devices (AUTO, HETERO:..., MULTI:...,
// BATCH:...) are left to OpenVINO; "GPU" matches "GPU.0". The failure lists the devices there are.
Status check_device(openvino_api::Runtime& runtime, const std::string& device);

}  // namespace executorch_openvino::delegate
