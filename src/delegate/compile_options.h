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

}  // namespace executorch_openvino::delegate
