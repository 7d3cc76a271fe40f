// From a parsed delegate blob to a model compiled for the chosen device: a precompiled model
// imported when it fits the device, options and OpenVINO version, else the IR compiled.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "blob/delegate_blob.h"
#include "common/outcome.h"
#include "delegate/compiling/aligned_bytes.h"
#include "delegate/options/compile_options.h"
#include "delegate/compiling/model_file_cache.h"
#include "openvino_api/objects.h"
#include "openvino_api/runtime.h"

namespace executorch_openvino::delegate {

// Immutable once made; shared by every method loaded from the same blob with the same options.
struct CompiledModel {
  // What the compiled model may read in place: the IR's weights (OpenVINO's CPU plugin uses some
  // constants from them) or the imported model's bytes (import keeps pointing into them). Declared
  // first so it is destroyed last.
  AlignedBytes backing;
  openvino_api::CompiledModelPtr model;
  std::vector<openvino_api::PortInfo> inputs;
  std::vector<openvino_api::PortInfo> outputs;
  std::string device;
  enum class Source { kIr, kPrecompiled, kModelCache, kUpstream } source = Source::kIr;
  // "KEY=value" for the properties OpenVINO reports back (hint, threads, streams, precision,
  // execution devices, profiling), for get_option-style diagnostics and tests.
  std::string effective_properties;
  bool profiling = false;
  bool paged = false;  // its attention runs paged (attention=paged; delegate/compiling/paged_model.h)
  // A paged model's causal mask when the model computes it: its last output, kept out of `outputs`
  // (the program's) and read by the delegate after each call.
  std::optional<openvino_api::PortInfo> computed_mask;
};

// The IR's weights, asked for only when the IR itself is compiled: an imported model reads none, so
// weights kept in the program's named data are fetched only then (delegate/named_weights.h).
using ReadWeights = std::function<Outcome<blob::Span>()>;

// Reads the IR or imports a fitting precompiled model, after checking the device is present. What
// OpenVINO may keep reading (weights, or the precompiled bytes) is copied once into memory the
// compiled model owns. `notes` receives what is worth saying: why none of the blob's precompiled
// models was used, why a cached file was not, why the attention was left as exported. `release_blob` is called as soon as neither `parsed` nor the weights
// are read any more (before the IR is compiled), so the blob and the copy of its weights are not
// both held while OpenVINO compiles: peak memory at load stays near native OpenVINO's.
// With a `cache_entry` (a cache folder and a physical device), no fitting precompiled model, and a
// usable cached file, that file is imported; otherwise the IR is compiled (without OpenVINO's own
// CACHE_DIR) and the result stored for next time.
Outcome<std::unique_ptr<CompiledModel>> compile(openvino_api::Runtime& runtime, const blob::ParsedBlob& parsed,
                                                const ReadWeights& read_weights, const CompileOptions& options,
                                                Notes* notes,
                                                const std::function<void()>& release_blob = {},
                                                const CacheEntry* cache_entry = nullptr);

// A blob from ExecuTorch's own OpenVINO partitioner: a compiled model exported for
// `options.device`, imported with the options in effect (its bytes copied and kept).
Outcome<std::unique_ptr<CompiledModel>> import_upstream(openvino_api::Runtime& runtime, const void* data, size_t size,
                                                        const CompileOptions& options);

// A source's name in diagnostics: "ir", "precompiled", "cache", "upstream".
const char* source_name(CompiledModel::Source source);

// Whether `device` names a device the runtime has. Virtual devices (AUTO, HETERO:..., MULTI:...,
// BATCH:...) are left to OpenVINO; "GPU" matches "GPU.0". The failure lists the devices there are.
Status check_device(openvino_api::Runtime& runtime, const std::string& device);

// Properties that change how a model compiles (CACHE_DIR and ENABLE_MMAP only change how it is
// loaded), sorted by key: what a precompiled model must have been compiled with to be used.
std::vector<std::pair<std::string, std::string>> compilation_properties(const CompileOptions& options);

}  // namespace executorch_openvino::delegate
