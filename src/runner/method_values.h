// The bridge between a method's declared inputs and outputs (ExecuTorch's MethodMeta and EValues)
// and what the runner exchanges with the user (.npy files, literal scalars, generated values).
// Kept apart from runner.cpp so the command's flow is not buried in dtype and layout details, and
// apart from npy.cpp so the file format stays free of ExecuTorch.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <executorch/extension/tensor/tensor_ptr.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/executor/method_meta.h>

#include "runner/npy.h"

namespace executorch_openvino::runner {

// A problem with the user's inputs or the method's values; what() says which input or output.
class ValueError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One value to pass to the method. `tensor` owns the storage `value` points into: the method keeps
// reading it (or copies it on every set_input), so it must outlive the runs.
struct PreparedInput {
  executorch::runtime::EValue value;
  executorch::extension::TensorPtr tensor;  // null for non-tensor inputs
  std::string description;                  // e.g. "float32 (1, 3, 224, 224), deterministic"
};

// What one --input argument may be: a .npy path, "int:VALUE", "float:VALUE", "bool:VALUE", or
// "default" (generate the input as if no --input was given).
//
// Builds every input of the method described by `meta`. `specs` is empty (all generated) or has
// exactly one entry per input. Generated tensors: floating types a fixed pseudo-random sequence in
// [-1, 1), integer types i % 7 (int64 inputs are often indices), bool alternating true/false.
// Non-tensor inputs (int, float, bool) have no sensible default and must be given. Throws
// ValueError naming the input on any mismatch of count, dtype, rank or shape.
std::vector<PreparedInput> prepare_inputs(const executorch::runtime::MethodMeta& meta,
                                          const std::vector<std::string>& specs);

// Copies output `index` into a C-ordered array for writing. Tensors keep their dtype (bfloat16,
// which .npy cannot hold, is widened to float32); int, float and bool outputs become 0-d arrays.
// Throws ValueError for outputs that have no .npy form (lists, strings, None).
npy::Array output_to_array(const executorch::runtime::EValue& value, size_t index);

// "float32 (1, 3, 224, 224)", plus the dim order when it is not the contiguous one.
std::string describe(const executorch::runtime::TensorInfo& info);
// "float32 (1, 5)" for tensors, "int 3" / "float 0.5" / "bool true" for scalars.
std::string describe(const executorch::runtime::EValue& value);

// PyTorch's name for an ExecuTorch scalar type ("float32", "int64", ...).
std::string scalar_type_name(executorch::aten::ScalarType type);

}  // namespace executorch_openvino::runner
