// An ExecuTorch tensor over memory the test owns, wrapped in an EValue as a delegate receives it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/exec_aten/exec_aten.h>

namespace executorch_openvino::testing {

using executorch::aten::ScalarType;

class HostTensor {
 public:
  // `resizable`: ExecuTorch's DYNAMIC_BOUND tensor, which a delegate may shrink within `sizes`.
  HostTensor(ScalarType type, std::vector<int32_t> sizes, bool resizable = false);
  HostTensor(ScalarType type, std::vector<int32_t> sizes, const std::vector<uint8_t>& bytes);
  HostTensor(const HostTensor&) = delete;
  HostTensor& operator=(const HostTensor&) = delete;

  executorch::runtime::EValue* value() { return &value_; }
  executorch::aten::Tensor& tensor() { return tensor_; }
  uint8_t* data() { return bytes_.data(); }
  size_t nbytes() const { return bytes_.size(); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  ScalarType type() const { return type_; }

  // Marks the tensor channels-last (dim order 0,2,3,1) without moving data, for refusal tests.
  void make_channels_last();

  // The current sizes (a resizable tensor's may have changed).
  std::vector<int32_t> sizes() const;

 private:
  ScalarType type_;
  std::vector<int32_t> sizes_;
  std::vector<uint8_t> dim_order_;
  std::vector<int32_t> strides_;
  std::vector<uint8_t> bytes_;
  std::unique_ptr<executorch::aten::TensorImpl> impl_;
  executorch::aten::Tensor tensor_;
  executorch::runtime::EValue value_;
};

// "f32", "i64", "i32", "boolean", "u8" to ExecuTorch's dtype; throws on anything else.
ScalarType scalar_type_from_name(const std::string& name);
size_t element_size(ScalarType type);

}  // namespace executorch_openvino::testing
