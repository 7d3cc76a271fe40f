#include "delegate/execution/scalar_binding.h"

#include <cstring>
#include <string>

namespace executorch_openvino::delegate {
namespace {

const char* kind_of(const executorch::runtime::EValue& value) {
  if (value.isInt()) return "an int";
  if (value.isDouble()) return "a double";
  if (value.isBool()) return "a bool";
  return "another kind of value";
}

bool fits(const executorch::runtime::EValue& value, openvino_api::ElementType type) {
  using T = openvino_api::ElementType;
  if (value.isInt()) return type == T::kI64 || type == T::kI32;
  if (value.isDouble()) return type == T::kF32 || type == T::kF64;
  if (value.isBool()) return type == T::kBoolean;
  return false;
}

template <typename T>
void store(unsigned char* storage, T value) {
  std::memcpy(storage, &value, sizeof(T));
}

}  // namespace

Status check_scalar(const executorch::runtime::EValue& value, const openvino_api::PortInfo& port, size_t index) {
  if (!port.dims.empty() || !fits(value, port.type)) {
    return Failure{FailureKind::kInvalidArgument,
                   "input " + std::to_string(index) + (port.name.empty() ? "" : " '" + port.name + "'") + ": got " +
                       kind_of(value) + ", but the model expects a tensor " + openvino_api::element_type_name(port.type) + " " +
                       port.shape_text()};
  }
  return ok_status();
}

Status ScalarBinding::set(openvino_api::Runtime& runtime, openvino_api::ov_infer_request* request, size_t index,
                          const executorch::runtime::EValue& value, openvino_api::ElementType type) {
  using T = openvino_api::ElementType;
  switch (type) {
    case T::kI64: store<int64_t>(storage_, value.toInt()); break;
    case T::kI32: store<int32_t>(storage_, static_cast<int32_t>(value.toInt())); break;
    case T::kF64: store<double>(storage_, value.toDouble()); break;
    case T::kF32: store<float>(storage_, static_cast<float>(value.toDouble())); break;
    default: store<bool>(storage_, value.toBool()); break;
  }
  if (tensor_) return ok_status();  // the request reads storage_ in place
  Outcome<openvino_api::TensorPtr> wrapped = openvino_api::wrap_host_memory(runtime, type, nullptr, 0, storage_);
  if (!wrapped.ok()) return wrapped.failure();
  if (Status bound = openvino_api::set_input(runtime, request, index, wrapped->get()); !bound.ok()) return bound;
  tensor_ = std::move(wrapped).value();
  return ok_status();
}

}  // namespace executorch_openvino::delegate
