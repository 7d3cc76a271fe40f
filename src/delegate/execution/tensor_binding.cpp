#include "delegate/execution/tensor_binding.h"

#include <string>

#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>

namespace executorch_openvino::delegate {
namespace {

std::string describe(const char* role, size_t index, const openvino_api::PortInfo& port) {
  std::string text = std::string(role) + " " + std::to_string(index);
  if (!port.name.empty()) text += " '" + port.name + "'";
  return text;
}

std::string sizes_text(const Tensor& tensor) {
  std::string text = "[";
  for (size_t i = 0; i < tensor.sizes().size(); ++i) {
    if (i > 0) text += ",";
    text += std::to_string(tensor.sizes()[i]);
  }
  return text + "]";
}

// Whether the tensor's memory is dense row-major. A tensor made without a dim order has none
// (null data): that is the default, contiguous layout.
bool is_contiguous(const Tensor& tensor) {
  const auto dim_order = tensor.dim_order();
  if (dim_order.data() == nullptr) return true;
  for (size_t d = 0; d < dim_order.size(); ++d) {
    if (dim_order[d] != d) return false;
  }
  return true;
}

}  // namespace

std::optional<openvino_api::ElementType> element_type_of(ScalarType type) {
  switch (type) {
    case ScalarType::Bool: return openvino_api::ElementType::kBoolean;
    case ScalarType::BFloat16: return openvino_api::ElementType::kBF16;
    case ScalarType::Half: return openvino_api::ElementType::kF16;
    case ScalarType::Float: return openvino_api::ElementType::kF32;
    case ScalarType::Double: return openvino_api::ElementType::kF64;
    case ScalarType::Char: return openvino_api::ElementType::kI8;
    case ScalarType::Short: return openvino_api::ElementType::kI16;
    case ScalarType::Int: return openvino_api::ElementType::kI32;
    case ScalarType::Long: return openvino_api::ElementType::kI64;
    case ScalarType::Byte: return openvino_api::ElementType::kU8;
    case ScalarType::UInt16: return openvino_api::ElementType::kU16;
    case ScalarType::UInt32: return openvino_api::ElementType::kU32;
    case ScalarType::UInt64: return openvino_api::ElementType::kU64;
    default: return std::nullopt;
  }
}

Status check_tensor(const Tensor& tensor, const openvino_api::PortInfo& port, const char* role, size_t index) {
  const std::optional<openvino_api::ElementType> type = element_type_of(tensor.scalar_type());
  if (!type || *type != port.type) {
    return Failure{FailureKind::kInvalidArgument,
                   describe(role, index, port) + ": dtype " + executorch::runtime::toString(tensor.scalar_type()) +
                       ", but the model expects " + openvino_api::element_type_name(port.type)};
  }
  const auto sizes = tensor.sizes();
  bool shape_ok = sizes.size() == port.dims.size();
  for (size_t d = 0; shape_ok && d < sizes.size(); ++d) {
    const openvino_api::Dimension& dim = port.dims[d];
    shape_ok = sizes[d] >= dim.min && (dim.max < 0 || sizes[d] <= dim.max);
  }
  if (!shape_ok) {
    return Failure{FailureKind::kInvalidArgument, describe(role, index, port) + ": shape " + sizes_text(tensor) +
                                                      ", but the model expects " + port.shape_text()};
  }
  if (!is_contiguous(tensor)) {
    // OpenVINO takes dense row-major memory; a channels-last tensor passed as is would be read
    // with the wrong strides and give wrong results without any error.
    return Failure{FailureKind::kInvalidArgument,
                   describe(role, index, port) + ": non-contiguous dim order (e.g. channels-last) is not supported; "
                                                 "pass a contiguous tensor"};
  }
  return ok_status();
}

bool TensorBinding::matches(const Tensor& tensor) const {
  const auto sizes = tensor.sizes();
  if (rank_ != sizes.size() || data_ != tensor.const_data_ptr() || type_ != tensor.scalar_type()) return false;
  for (size_t d = 0; d < rank_; ++d) {
    if (dims_[d] != sizes[d]) return false;
  }
  return is_contiguous(tensor);
}

Status TensorBinding::bind(openvino_api::Runtime& runtime, openvino_api::ov_infer_request* request, bool is_input, size_t index,
                           const Tensor& tensor, openvino_api::ElementType type) {
  if (matches(tensor)) return ok_status();

  const auto sizes = tensor.sizes();
  if (sizes.size() > kMaxRank) {
    return Failure{FailureKind::kInvalidArgument, "rank " + std::to_string(sizes.size()) + " exceeds " +
                                                      std::to_string(kMaxRank)};
  }
  std::array<int64_t, kMaxRank> dims{};
  for (size_t d = 0; d < sizes.size(); ++d) dims[d] = sizes[d];

  Outcome<openvino_api::TensorPtr> wrapped =
      openvino_api::wrap_host_memory(runtime, type, dims.data(), sizes.size(), tensor.mutable_data_ptr());
  if (!wrapped.ok()) return wrapped.failure();
  Status bound = is_input ? openvino_api::set_input(runtime, request, index, wrapped->get())
                          : openvino_api::set_output(runtime, request, index, wrapped->get());
  if (!bound.ok()) {
    reset();
    return bound;
  }
  // The request holds its own reference to the tensor; ours only keeps the wrapper for reuse.
  tensor_ = std::move(wrapped).value();
  data_ = tensor.const_data_ptr();
  type_ = tensor.scalar_type();
  rank_ = sizes.size();
  dims_ = dims;
  return ok_status();
}

}  // namespace executorch_openvino::delegate
