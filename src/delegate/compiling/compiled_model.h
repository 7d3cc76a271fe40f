// A model compiled for a device, with what the delegate reads off it once: its ports, the properties
// OpenVINO reports back, and whether its attention runs paged. Immutable once made; shared by every
// partition loaded from the same blob with the same options (compiled_model_cache.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/outcome.h"
#include "delegate/compiling/model_bytes.h"
#include "delegate/compiling/held_weights.h"
#include "delegate/compiling/paged_model.h"
#include "delegate/options/compile_options.h"
#include "openvino_api/objects.h"
#include "openvino_api/runtime.h"

namespace executorch_openvino::delegate {

struct CompiledModel {
  // What an imported model may read in place: its bytes (import keeps pointing into them), a copy or a
  // mapped model-cache file (model_bytes.h). Declared first so it is destroyed last.
  ModelBytes backing;
  // The IR's weights, read in place when the IR was compiled (held_weights.h). Destroyed after `model`.
  HeldWeights weights;
  openvino_api::CompiledModelPtr model;
  std::vector<openvino_api::PortInfo> inputs;
  std::vector<openvino_api::PortInfo> outputs;
  std::string device;
  enum class Source { kIr, kPrecompiled, kModelCache, kUpstream } source = Source::kIr;
  // "KEY=value" for the properties OpenVINO reports back (hint, threads, streams, precision,
  // execution devices, profiling), for get_option-style diagnostics and tests.
  std::string effective_properties;
  bool profiling = false;
  // Set when its attention runs paged (attention=paged or auto; paged_model.h): where its own inputs are.
  std::optional<PagedLayout> paged;
  // A paged model's causal mask when the model computes it: its last output, kept out of `outputs`
  // (the program's) and read by the delegate after each call.
  std::optional<openvino_api::PortInfo> computed_mask;
  // What made it, hashed: the program's content, the device and the options (compiled_model_cache.h's
  // key). A state file records it, and a file from another program or options is refused.
  uint64_t identity = 0;
};

// A source's name in diagnostics: "ir", "precompiled", "cache", "upstream".
const char* source_name(CompiledModel::Source source);

// Fills in what is read off `result.model` once it is made: ports, paged layout, properties. A model
// without outputs, or whose paged attention is not in the form this library makes, is refused.
Status describe(openvino_api::Runtime& runtime, const CompileOptions& options, CompiledModel& result);

}  // namespace executorch_openvino::delegate
