#include "generation/program_calls.h"

#include "executorch_openvino/backend.h"

namespace executorch_openvino::generation {

using executorch::extension::Module;
using executorch::runtime::Error;
using executorch::runtime::EValue;

Outcome<std::unique_ptr<Module>> open_program(const std::string& pte, const std::string& data) {
  auto module = data.empty() ? std::make_unique<Module>(pte, Module::LoadMode::Mmap)
                             : std::make_unique<Module>(pte, data, Module::LoadMode::Mmap);
  if (Error error = module->load(); error != Error::Ok)
    return Failure{FailureKind::kInvalidArgument, pte + ": " + why_failed("cannot load the program", error)};
  return module;
}

std::string why_failed(const std::string& what, executorch::runtime::Error error) {
  std::string text = what + " (ExecuTorch error " + std::to_string(static_cast<int>(error)) + ")";
  const char* reason = executorch_openvino_last_error();
  if (reason != nullptr && *reason != '\0') text += ": " + std::string(reason);
  executorch_openvino_clear_last_error();
  return text;
}

std::vector<int64_t> constant_method(executorch::extension::Module& module, const std::string& name) {
  auto names = module.method_names();
  if (!names.ok() || names->count(name) == 0) return {};
  auto values = module.execute(name);
  std::vector<int64_t> found;
  if (!values.ok()) return found;
  for (const EValue& value : *values)
    if (value.isInt()) found.push_back(value.toInt());
  return found;
}

}  // namespace executorch_openvino::generation
