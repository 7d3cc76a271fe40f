#include "delegate/execution/input_bounds.h"

#include <cstdint>

namespace executorch_openvino::delegate {
namespace {

using executorch::aten::ScalarType;

template <typename T>
std::optional<std::string> first_outside(const T* values, size_t count, const blob::InputBound& bound) {
  for (size_t i = 0; i < count; ++i) {
    const int64_t value = static_cast<int64_t>(values[i]);
    if (value < bound.low || value >= bound.high) {
      return std::to_string(value) + (count > 1 ? " at element " + std::to_string(i) : "");
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> first_out_of_bounds(const executorch::runtime::EValue& value,
                                               const blob::InputBound& bound) {
  if (value.isInt()) {
    const int64_t scalar = value.toInt();
    return first_outside(&scalar, 1, bound);
  }
  if (!value.isTensor()) return std::nullopt;
  const executorch::aten::Tensor& tensor = value.toTensor();
  const size_t count = static_cast<size_t>(tensor.numel());
  switch (tensor.scalar_type()) {
    case ScalarType::Long: return first_outside(tensor.const_data_ptr<int64_t>(), count, bound);
    case ScalarType::Int: return first_outside(tensor.const_data_ptr<int32_t>(), count, bound);
    case ScalarType::Short: return first_outside(tensor.const_data_ptr<int16_t>(), count, bound);
    case ScalarType::Char: return first_outside(tensor.const_data_ptr<int8_t>(), count, bound);
    case ScalarType::Byte: return first_outside(tensor.const_data_ptr<uint8_t>(), count, bound);
    default: return std::nullopt;
  }
}

}  // namespace executorch_openvino::delegate
