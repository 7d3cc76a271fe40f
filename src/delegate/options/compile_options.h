// What to compile for: the device and OpenVINO properties, read from the program's compile specs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <executorch/runtime/backend/interface.h>

#include "common/outcome.h"
#include "openvino_api/objects.h"

namespace executorch_openvino::delegate {

// Informational lines the layers below the ExecuTorch boundary have to say (an option ignored, a cache
// file not used); the backend logs them (delegate/backend/errors.h), so those layers write no log.
using Notes = std::vector<std::string>;

struct CompileOptions {
  std::string device = "CPU";
  std::vector<openvino_api::Property> properties;
  // How a language model's grown KV caches are run (the "attention" option): kGrownAttention, as
  // exported (OpenVINO state); kPagedAttention, OpenVINO's paged attention over caches the delegate
  // holds (src/openvino_state/paged_attention.cpp), where the state helper can rewrite the model;
  // kAutoAttention (the default), paged where it can run and nothing asks otherwise (apply_defaults).
  std::string attention = "auto";
  // The program's "weights" spec ("int8:0", "int4:128"; empty when the exporter left the weights as
  // they were): how the IR's weights were compressed, which chooses a default (compute_form.h).
  std::string weights;
};
inline constexpr const char* kAutoAttention = "auto";
inline constexpr const char* kGrownAttention = "grown";
inline constexpr const char* kPagedAttention = "paged";

// "device" picks the device; keys spelled like OpenVINO properties (A-Z, 0-9, '_') are passed to
// compile_model; anything else is refused, naming the key. A spec naming a file or folder is ignored,
// with a note.
Outcome<CompileOptions> parse_compile_specs(executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> specs,
                                            Notes& notes);

// The device a blob of ExecuTorch's own OpenVINO partitioner was compiled for: its "device" spec,
// or CPU when it has none. Its other specs configured that compilation and are not ours to apply.
std::string upstream_device(executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> specs);

// The precision words of the "precision" spec and option, as INFERENCE_PRECISION_HINT values:
// "exact" -> "f32"; "fast" -> kDeviceDefaultPrecision, which apply_defaults removes so that the
// device's own default applies (bf16 or f16 where the hardware has it). Anything else fails,
// naming the two words.
inline constexpr const char* kDeviceDefaultPrecision = "";
Outcome<std::string> precision_hint(const std::string& word);

// AUTO, HETERO:..., MULTI:..., BATCH:...: devices that choose the real devices as a model loads.
bool is_virtual_device(const std::string& device);

// CPU, or one CPU by its number (CPU.0).
inline bool is_cpu_device(const std::string& device) { return device == "CPU" || device.rfind("CPU.", 0) == 0; }

// The value of an OpenVINO property in `options`, or nullptr when unset.
const std::string* find_property(const CompileOptions& options, const char* key);

// Properties that change how a model compiles (CACHE_DIR and ENABLE_MMAP only change how it is
// loaded), sorted by key: what a precompiled model must have been compiled with to be used, and what
// python/executorch_openvino/container/compile_specs.py's load_time_properties() says a load compiles with.
std::vector<std::pair<std::string, std::string>> compilation_properties(const CompileOptions& options);

// Defaults for what neither the program nor the run-time options set, and checks (the exporter, which
// may run without this library, writes the compilation defaults again for the precompiled models it
// makes: python/executorch_openvino/container/compile_specs.py, load_time_properties;
// tests/python/container/test_load_time_properties.py holds the two equal):
//   PERFORMANCE_HINT=LATENCY: ExecuTorch calls a delegate synchronously, one request at a time;
//     threads and streams are left to OpenVINO.
//   INFERENCE_PRECISION_HINT=f32 on CPU and on virtual devices (AUTO, HETERO:..., which may pick
//     the CPU): OpenVINO's CPU default is bf16 where the processor has it, and an fp32 PyTorch
//     model should give fp32 results. GPU and NPU keep their own defaults. precision=fast
//     (kDeviceDefaultPrecision) leaves every device its own default.
//   CACHE_DIR (from any channel): the model cache folder (model_file_cache.h; OpenVINO's own
//     CACHE_DIR for virtual devices). A folder that cannot be created or written is dropped with a
//     warning (returned), never a failure.
//   attention=auto becomes grown where paged attention cannot serve: a device other than the CPU,
//     or a model cache in use (a cache asks for quick loads, and a paged model cannot be stored).
//     Otherwise it stays auto: paged for a model whose blob says its caches grow (blob section 9)
//     and that the helper can rewrite.
//   DYNAMIC_QUANTIZATION_GROUP_SIZE: the dynamic_quantization option resolved, from the program's
//     weights spec (compute_form.h: resolve_compute_form).
std::string apply_defaults(CompileOptions& options);

}  // namespace executorch_openvino::delegate
