#include "case_helpers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include <executorch_openvino/backend.h>

namespace executorch_openvino::testing {

std::string last_error() { return executorch_openvino_last_error(); }

std::vector<std::unique_ptr<HostTensor>> make_inputs(const IrCase& c) {
  std::vector<std::unique_ptr<HostTensor>> tensors;
  for (const TensorFile& f : c.inputs) tensors.push_back(std::make_unique<HostTensor>(f.type, f.sizes, f.bytes));
  return tensors;
}

std::vector<std::unique_ptr<HostTensor>> make_outputs(const IrCase& c) {
  std::vector<std::unique_ptr<HostTensor>> tensors;
  for (const TensorFile& f : c.expected_outputs) tensors.push_back(std::make_unique<HostTensor>(f.type, f.sizes));
  return tensors;
}

std::vector<HostTensor*> args_of(const std::vector<std::unique_ptr<HostTensor>>& inputs,
                                 const std::vector<std::unique_ptr<HostTensor>>& outputs) {
  std::vector<HostTensor*> args;
  for (const auto& t : inputs) args.push_back(t.get());
  for (const auto& t : outputs) args.push_back(t.get());
  return args;
}

void expect_outputs_match(const IrCase& c, const std::vector<std::unique_ptr<HostTensor>>& outputs) {
  ASSERT_EQ(outputs.size(), c.expected_outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorFile& expected = c.expected_outputs[i];
    const HostTensor& actual = *outputs[i];
    ASSERT_EQ(actual.bytes().size(), expected.bytes.size()) << "output " << i;
    if (expected.type == ScalarType::Float) {
      const size_t n = expected.bytes.size() / sizeof(float);
      std::vector<float> want(n), got(n);
      std::memcpy(want.data(), expected.bytes.data(), expected.bytes.size());
      std::memcpy(got.data(), actual.bytes().data(), actual.bytes().size());
      for (size_t k = 0; k < n; ++k) {
        ASSERT_NEAR(got[k], want[k], 1e-4f + 1e-5f * std::fabs(want[k])) << c.name << " output " << i << "[" << k << "]";
      }
    } else {
      EXPECT_EQ(actual.bytes(), expected.bytes) << c.name << " output " << i;
    }
  }
}

}  // namespace executorch_openvino::testing
