// What to compile for: the device and OpenVINO properties, read from the program's compile specs.
#pragma once

#include <string>
#include <vector>

#include <executorch/runtime/backend/interface.h>

#include "common/outcome.h"
#include "openvino_api/objects.h"

namespace executorch_openvino::delegate {

struct CompileOptions {
  std::string device = "CPU";
  std::vector<ov::Property> properties;
};

// "device" picks the device; keys spelled like OpenVINO properties (A-Z, 0-9, '_') are passed to
// compile_model; anything else is refused, naming the key.
Outcome<CompileOptions> parse_compile_specs(executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> specs);

inline constexpr const char kCacheDirVariable[] = "EXECUTORCH_OPENVINO_CACHE_DIR";

// Defaults for properties the program does not set:
//   PERFORMANCE_HINT=LATENCY: ExecuTorch calls a delegate synchronously, one request at a time;
//     threads and streams are left to OpenVINO.
//   CACHE_DIR from EXECUTORCH_OPENVINO_CACHE_DIR: OpenVINO stores compiled models there, and a
//     later load of the same model imports instead of compiling. A folder that cannot be created
//     or written is skipped with a warning (returned), never a failure.
std::string apply_defaults(CompileOptions& options);

}  // namespace executorch_openvino::delegate
