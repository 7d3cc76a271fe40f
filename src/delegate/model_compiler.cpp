#include "delegate/model_compiler.h"

namespace executorch_openvino::delegate {
namespace {

bool is_virtual_device(const std::string& device) {
  if (device.find(':') != std::string::npos) return true;
  for (const char* name : {"AUTO", "HETERO", "MULTI", "BATCH"}) {
    if (device == name) return true;
  }
  return false;
}

}  // namespace

Status check_device(ov::Runtime& runtime, const std::string& device) {
  if (is_virtual_device(device)) return ok_status();
  Outcome<std::vector<std::string>> devices = runtime.available_devices();
  if (!devices.ok()) return devices.failure();
  std::string listed;
  for (const std::string& present : devices.value()) {
    if (present == device || present.rfind(device + ".", 0) == 0) return ok_status();
    listed += (listed.empty() ? "" : ", ") + present;
  }
  return Failure{FailureKind::kDeviceUnavailable,
                 "device '" + device + "' is not available; available devices: " + (listed.empty() ? "none" : listed)};
}

Outcome<CompiledModel> compile(ov::Runtime& runtime, const blob::ParsedBlob& parsed, const CompileOptions& options) {
  if (Status device = check_device(runtime, options.device); !device.ok()) return device.failure();

  Outcome<ov::ModelPtr> model =
      ov::read_model(runtime, reinterpret_cast<const char*>(parsed.ir_xml.data), parsed.ir_xml.size,
                     parsed.ir_weights.data, parsed.ir_weights.size);
  if (!model.ok()) return model.failure();

  Outcome<ov::CompiledModelPtr> compiled = ov::compile_model(runtime, model->get(), options.device, options.properties);
  if (!compiled.ok()) return compiled.failure();

  Outcome<std::vector<ov::PortInfo>> inputs = ov::input_ports(runtime, compiled->get());
  if (!inputs.ok()) return inputs.failure();
  Outcome<std::vector<ov::PortInfo>> outputs = ov::output_ports(runtime, compiled->get());
  if (!outputs.ok()) return outputs.failure();
  for (size_t i = 0; i < outputs->size(); ++i) {
    if (!outputs.value()[i].is_static()) {
      return Failure{FailureKind::kInvalidBlob, "output " + std::to_string(i) + " has the dynamic shape " +
                                                    outputs.value()[i].shape_text() +
                                                    "; this version runs models with static output shapes only"};
    }
  }
  return CompiledModel{std::move(compiled).value(), std::move(inputs).value(), std::move(outputs).value()};
}

}  // namespace executorch_openvino::delegate
