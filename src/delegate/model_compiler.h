// From a parsed delegate blob to a model compiled for the chosen device.
#pragma once

#include <vector>

#include "blob/delegate_blob.h"
#include "common/outcome.h"
#include "delegate/compile_options.h"
#include "openvino_api/objects.h"
#include "openvino_api/runtime.h"

namespace executorch_openvino::delegate {

struct CompiledModel {
  ov::CompiledModelPtr model;
  std::vector<ov::PortInfo> inputs;
  std::vector<ov::PortInfo> outputs;
};

// Reads the IR (weights used in place, not copied), checks the device is present, compiles.
// The compiled model may keep pointing into the blob's weights: the caller keeps them alive.
Outcome<CompiledModel> compile(ov::Runtime& runtime, const blob::ParsedBlob& parsed, const CompileOptions& options);

// Whether `device` names a device the runtime has. Virtual devices (AUTO, HETERO:..., MULTI:...,
// BATCH:...) are left to OpenVINO; "GPU" matches "GPU.0". The failure lists the devices there are.
Status check_device(ov::Runtime& runtime, const std::string& device);

}  // namespace executorch_openvino::delegate
