// Checking ExecuTorch tensors against a compiled model's ports, and handing their memory to
// OpenVINO without copying.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include <executorch/runtime/core/exec_aten/exec_aten.h>

#include "common/outcome.h"
#include "openvino_api/objects.h"

namespace executorch_openvino::delegate {

using executorch::aten::ScalarType;
using executorch::aten::Tensor;

// ExecuTorch's dtype as an OpenVINO element type; nullopt for dtypes OpenVINO has no match for.
std::optional<openvino_api::ElementType> element_type_of(ScalarType type);

// Checks dtype, rank, each dimension and the dim order of `tensor` against `port`. The failure
// names the argument ("input 1 'x'") with what was expected and what came.
Status check_tensor(const Tensor& tensor, const openvino_api::PortInfo& port, const char* role, size_t index);

// One argument's binding to the infer request. Remembers the memory and shape it last bound, so a
// call with the same buffer (the usual case: ExecuTorch's memory plan keeps buffers stable) binds
// nothing, allocates nothing and creates no OpenVINO tensor.
class TensorBinding {
 public:
  static constexpr size_t kMaxRank = 16;  // ExecuTorch's own tensor rank limit

  // Whether `tensor` is exactly what was bound last time (same memory, dtype, shape, dense
  // layout). Such a tensor was checked then and needs neither checking nor binding now.
  bool matches(const Tensor& tensor) const;

  // `tensor` must have passed check_tensor for this port.
  Status bind(openvino_api::Runtime& runtime, openvino_api::ov_infer_request* request, bool is_input, size_t index,
              const Tensor& tensor, openvino_api::ElementType type);

  // Forgets the cached binding so the next bind() rebinds (after OpenVINO refused a binding).
  void reset() { rank_ = kUnbound; }

 private:
  static constexpr size_t kUnbound = static_cast<size_t>(-1);

  const void* data_ = nullptr;
  ScalarType type_ = ScalarType::Undefined;
  size_t rank_ = kUnbound;
  std::array<int64_t, kMaxRank> dims_{};
  openvino_api::TensorPtr tensor_;
};

}  // namespace executorch_openvino::delegate
