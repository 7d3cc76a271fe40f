// One compiled model per (blob content, device, options) in the process: a second partition loaded
// from the same blob with the same effective options reuses the first one's compiled model (and
// gets its own infer request). The model is freed when the last partition using it is destroyed.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "blob/delegate_blob.h"
#include "common/outcome.h"
#include "delegate/options/compile_options.h"
#include "delegate/compiling/model_compiler.h"
#include "openvino_api/runtime.h"

namespace executorch_openvino::delegate {

struct CacheStats {
  size_t compiled = 0;  // models compiled or imported since the process started
  size_t reused = 0;    // loads served by a live compiled model
  size_t live = 0;      // compiled models alive now
};

// Thread-safe. Concurrent loads of the same key compile once; the others wait for it and share it.
// A miss is compile()d (`request` with the model-file cache's entry filled in, when a cache folder is
// in use; `notes` receives its notes, first load only). A hit reads neither the blob after the lookup
// nor the weights: weights in named data are identified by the key the blob records.
Outcome<std::shared_ptr<const CompiledModel>> shared_compiled_model(openvino_api::Runtime& runtime,
                                                                    CompileRequest request, Notes& notes);

// The same for a blob made by ExecuTorch's own OpenVINO partitioner: a compiled model exported for
// `options.device`, imported with the options in effect.
Outcome<std::shared_ptr<const CompiledModel>> shared_upstream_model(openvino_api::Runtime& runtime, const void* data,
                                                                    size_t size, const CompileOptions& options);

CacheStats compiled_model_stats();

// One line per live compiled model: device, source (ir / precompiled), users, and the properties
// OpenVINO reports for it.
std::string describe_compiled_models();

}  // namespace executorch_openvino::delegate
