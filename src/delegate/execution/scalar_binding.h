// A scalar argument (ExecuTorch's Int, Double or Bool value, e.g. a symbolic size or a position
// computed outside the delegate) handed to a rank-0 model input. The value is written into storage
// of our own that the infer request reads in place, bound once.
#pragma once

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/evalue.h>

#include "common/outcome.h"
#include "openvino_api/objects.h"

namespace executorch_openvino::delegate {

// Whether `value` is a scalar that can feed `port` (rank 0: Int to i64/i32, Double to f32/f64, Bool
// to boolean); the failure names the input and both kinds.
Status check_scalar(const executorch::runtime::EValue& value, const openvino_api::PortInfo& port, size_t index);

class ScalarBinding {
 public:
  // Writes `value` (which passed check_scalar) for the next inference, binding on first use.
  Status set(openvino_api::Runtime& runtime, openvino_api::ov_infer_request* request, size_t index,
             const executorch::runtime::EValue& value, openvino_api::ElementType type);

  // Forgets the binding (the request it was bound to is gone); the next set() binds again.
  void reset() { tensor_.reset(); }

 private:
  alignas(8) unsigned char storage_[8] = {};
  openvino_api::TensorPtr tensor_{nullptr, {}};
};

}  // namespace executorch_openvino::delegate
