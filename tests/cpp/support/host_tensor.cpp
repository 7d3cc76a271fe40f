#include "host_tensor.h"

#include <cstring>
#include <stdexcept>

namespace executorch_openvino::testing {
namespace {

size_t element_count(const std::vector<int32_t>& sizes) {
  size_t count = 1;
  for (int32_t s : sizes) count *= static_cast<size_t>(s);
  return count;
}

}  // namespace

std::vector<int32_t> HostTensor::sizes() const {
  const auto current = tensor_.sizes();
  return std::vector<int32_t>(current.begin(), current.end());
}

ScalarType scalar_type_from_name(const std::string& name) {
  if (name == "f32") return ScalarType::Float;
  if (name == "i64") return ScalarType::Long;
  if (name == "i32") return ScalarType::Int;
  if (name == "boolean") return ScalarType::Bool;
  if (name == "u8") return ScalarType::Byte;
  throw std::runtime_error("unknown dtype name " + name);
}

size_t element_size(ScalarType type) {
  switch (type) {
    case ScalarType::Float:
    case ScalarType::Int:
      return 4;
    case ScalarType::Long:
    case ScalarType::Double:
      return 8;
    case ScalarType::Half:
    case ScalarType::Short:
      return 2;
    default:
      return 1;
  }
}

HostTensor::HostTensor(ScalarType type, std::vector<int32_t> sizes, bool resizable)
    : type_(type),
      sizes_(std::move(sizes)),
      dim_order_(sizes_.size()),
      strides_(sizes_.size()),
      // One spare element keeps data() non-null for empty tensors.
      bytes_((element_count(sizes_) + 1) * element_size(type)),
      tensor_(nullptr),
      value_() {
  bytes_.resize(element_count(sizes_) * element_size(type));
  int32_t stride = 1;
  for (size_t d = sizes_.size(); d-- > 0;) {
    dim_order_[d] = static_cast<uint8_t>(d);
    strides_[d] = stride;
    stride *= sizes_[d];
  }
  impl_ = std::make_unique<executorch::aten::TensorImpl>(
      type_, static_cast<ssize_t>(sizes_.size()), sizes_.data(), bytes_.data(), dim_order_.data(), strides_.data(),
      resizable ? executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND : executorch::aten::TensorShapeDynamism::STATIC);
  tensor_ = executorch::aten::Tensor(impl_.get());
  value_ = executorch::runtime::EValue(tensor_);
}

HostTensor::HostTensor(ScalarType type, std::vector<int32_t> sizes, const std::vector<uint8_t>& bytes)
    : HostTensor(type, std::move(sizes)) {
  if (bytes.size() != bytes_.size()) throw std::runtime_error("tensor data has the wrong size");
  if (!bytes.empty()) std::memcpy(bytes_.data(), bytes.data(), bytes.size());
}

void HostTensor::make_channels_last() {
  if (sizes_.size() != 4) throw std::runtime_error("channels-last needs rank 4");
  dim_order_ = {0, 2, 3, 1};
  const int32_t c = sizes_[1], h = sizes_[2], w = sizes_[3];
  strides_ = {h * w * c, 1, w * c, c};
}

}  // namespace executorch_openvino::testing
