#include "delegate/compiled_method.h"

#include <new>
#include <string>

namespace executorch_openvino::delegate {

using executorch::runtime::EValue;
using executorch::runtime::FreeableBuffer;
using executorch::runtime::Span;

Outcome<CompiledMethod*> CompiledMethod::create(void* storage, ov::Runtime& runtime, CompiledModel compiled,
                                                FreeableBuffer* processed) {
  Outcome<ov::InferRequestPtr> request = ov::create_infer_request(runtime, compiled.model.get());
  if (!request.ok()) return request.failure();
  auto* method = new (storage) CompiledMethod(runtime, std::move(compiled), processed);
  method->request_ = std::move(request).value();
  return method;
}

CompiledMethod::CompiledMethod(ov::Runtime& runtime, CompiledModel compiled, FreeableBuffer* processed)
    : runtime_(runtime),
      compiled_(std::move(compiled)),
      request_(nullptr, {}),
      input_bindings_(compiled_.inputs.size()),
      output_bindings_(compiled_.outputs.size()),
      processed_(processed) {}

CompiledMethod::~CompiledMethod() {
  // Order matters: tensors and the request before the compiled model, and the compiled model before
  // the blob whose weights it may still read.
  input_bindings_.clear();
  output_bindings_.clear();
  request_.reset();
  compiled_.model.reset();
  if (processed_ != nullptr) processed_->Free();
}

Status CompiledMethod::execute(Span<EValue*> args) {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t inputs = compiled_.inputs.size();
  const size_t outputs = compiled_.outputs.size();
  if (args.size() != inputs + outputs) {
    return Failure{FailureKind::kInvalidArgument,
                   "expected " + std::to_string(inputs) + " inputs and " + std::to_string(outputs) + " outputs (" +
                       std::to_string(inputs + outputs) + " arguments), got " + std::to_string(args.size())};
  }
  // Check everything before binding anything, so a bad call leaves the request as it was.
  for (size_t i = 0; i < args.size(); ++i) {
    const bool is_input = i < inputs;
    const size_t index = is_input ? i : i - inputs;
    const char* role = is_input ? "input" : "output";
    const EValue* value = args[i];
    if (value == nullptr || !value->isTensor()) {
      return Failure{FailureKind::kInvalidArgument,
                     std::string(role) + " " + std::to_string(index) + ": expected a tensor, got another kind of value"};
    }
    // A tensor identical to the one bound last call was checked then (the usual steady state).
    const TensorBinding& binding = is_input ? input_bindings_[index] : output_bindings_[index];
    if (binding.matches(value->toTensor())) continue;
    const ov::PortInfo& port = is_input ? compiled_.inputs[index] : compiled_.outputs[index];
    if (Status checked = check_tensor(value->toTensor(), port, role, index); !checked.ok()) return checked;
  }
  if (Status bound = bind_all(args); !bound.ok()) return bound;
  return ov::infer(runtime_, request_.get());
}

Status CompiledMethod::bind_all(Span<EValue*> args) {
  const size_t inputs = compiled_.inputs.size();
  for (size_t i = 0; i < inputs; ++i) {
    Status bound = input_bindings_[i].bind(runtime_, request_.get(), true, i, args[i]->toTensor(),
                                           compiled_.inputs[i].type);
    if (!bound.ok()) return bound;
  }
  for (size_t i = 0; i < compiled_.outputs.size(); ++i) {
    Status bound = output_bindings_[i].bind(runtime_, request_.get(), false, i, args[inputs + i]->toTensor(),
                                            compiled_.outputs[i].type);
    if (!bound.ok()) return bound;
  }
  return ok_status();
}

}  // namespace executorch_openvino::delegate
