// Helpers the backend tests share: tensors for an IrCase, argument lists, output checks.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <executorch/runtime/backend/options.h>

#include "delegate_harness.h"
#include "host_tensor.h"
#include "ir_case.h"

namespace executorch_openvino::testing {

// The delegate's full last error on this thread.
std::string last_error();

std::vector<std::unique_ptr<HostTensor>> make_inputs(const IrCase& c);
std::vector<std::unique_ptr<HostTensor>> make_outputs(const IrCase& c);
std::vector<HostTensor*> args_of(const std::vector<std::unique_ptr<HostTensor>>& inputs,
                                 const std::vector<std::unique_ptr<HostTensor>>& outputs);

// Float outputs within a tight tolerance of NumPy's when the model computes in f32 (the default);
// within that precision's rounding of the largest output when it computes in bf16 or f16 (the
// compiled model's INFERENCE_PRECISION_HINT); integer and boolean outputs exactly.
void expect_outputs_match(const IrCase& c, const std::vector<std::unique_ptr<HostTensor>>& outputs,
                          const std::string& precision = "f32");

// Runs `c` once through `harness` (initialised with it) on fresh tensors, and checks that the call
// succeeds and its outputs match NumPy's (expect_outputs_match).
void expect_runs_correctly(DelegateHarness& harness, const IrCase& c, const std::string& precision = "f32");

// Load-time options for our backend (ExecuTorch's BackendOption).
executorch::runtime::BackendOption text_option(const char* key, const char* value);
executorch::runtime::BackendOption int_option(const char* key, int value);

// The live compiled models, one map of key=value per line of describe_compiled_models().
std::vector<std::map<std::string, std::string>> compiled_models();

// The one live compiled model's fields (a test holding one harness at a time); fails the test when
// there is not exactly one.
std::map<std::string, std::string> only_model();

// describe_runtime() as key=value pairs.
std::map<std::string, std::string> runtime_description();

}  // namespace executorch_openvino::testing
