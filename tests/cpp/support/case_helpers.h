// Helpers the backend tests share: tensors for an IrCase, argument lists, output checks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "host_tensor.h"
#include "ir_case.h"

namespace executorch_openvino::testing {

// The delegate's full last error on this thread.
std::string last_error();

std::vector<std::unique_ptr<HostTensor>> make_inputs(const IrCase& c);
std::vector<std::unique_ptr<HostTensor>> make_outputs(const IrCase& c);
std::vector<HostTensor*> args_of(const std::vector<std::unique_ptr<HostTensor>>& inputs,
                                 const std::vector<std::unique_ptr<HostTensor>>& outputs);

// Float outputs within a tight tolerance of NumPy's (fp32 inference precision is requested);
// integer and boolean outputs exactly.
void expect_outputs_match(const IrCase& c, const std::vector<std::unique_ptr<HostTensor>>& outputs);

}  // namespace executorch_openvino::testing
