// Scalar arguments for rank-0 model inputs: ExecuTorch passes symbolic sizes and values computed
// outside the delegate (an LLM's sequence length) as Int, Double or Bool values, not tensors.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <executorch_openvino/backend.h>

#include "case_helpers.h"
#include "delegate_harness.h"
#include "ir_case.h"

namespace executorch_openvino::testing {
namespace {

using executorch::runtime::EValue;

// scalar_inputs: out = flag ? x * scale + n : x, with x f32 [4], n i64 [], scale f32 [], flag bool [].
class ScalarInputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_ = load_ir_case("scalar_inputs");
    ASSERT_EQ(harness_.init(c_.blob, c_.specs), Error::Ok) << last_error();
    inputs_ = make_inputs(c_);
    outputs_ = make_outputs(c_);
  }
  const float* x() const { return reinterpret_cast<const float*>(inputs_[0]->data()); }
  const float* out() const { return reinterpret_cast<const float*>(outputs_[0]->data()); }

  Error run(EValue n, EValue scale, EValue flag) {
    return harness_.execute_values({inputs_[0]->value(), &n, &scale, &flag, outputs_[0]->value()});
  }

  IrCase c_;
  DelegateHarness harness_;
  std::vector<std::unique_ptr<HostTensor>> inputs_, outputs_;
};

TEST_F(ScalarInputsTest, IntDoubleAndBoolValuesFeedRankZeroInputs) {
  ASSERT_EQ(run(EValue(static_cast<int64_t>(3)), EValue(0.5), EValue(true)), Error::Ok) << last_error();
  expect_outputs_match(c_, outputs_);
}

TEST_F(ScalarInputsTest, EachCallSeesItsOwnValues) {
  // The values live in storage the request reads in place: a new value must reach every call.
  for (int64_t n : {0, 7, -2}) {
    for (double scale : {2.0, -0.25}) {
      ASSERT_EQ(run(EValue(n), EValue(scale), EValue(true)), Error::Ok) << last_error();
      for (int k = 0; k < 4; ++k) EXPECT_FLOAT_EQ(out()[k], x()[k] * static_cast<float>(scale) + n) << n << " " << scale;
    }
  }
  ASSERT_EQ(run(EValue(static_cast<int64_t>(5)), EValue(3.0), EValue(false)), Error::Ok) << last_error();
  for (int k = 0; k < 4; ++k) EXPECT_FLOAT_EQ(out()[k], x()[k]);
}

TEST_F(ScalarInputsTest, ZeroDimensionalTensorsWorkToo) {
  // The same inputs as tensors (the case's own), then scalars again.
  ASSERT_EQ(harness_.execute(args_of(inputs_, outputs_)), Error::Ok) << last_error();
  expect_outputs_match(c_, outputs_);
  ASSERT_EQ(run(EValue(static_cast<int64_t>(1)), EValue(1.0), EValue(true)), Error::Ok) << last_error();
  for (int k = 0; k < 4; ++k) EXPECT_FLOAT_EQ(out()[k], x()[k] + 1);
}

TEST_F(ScalarInputsTest, AScalarOfTheWrongKindIsRefusedNamingTheInput) {
  EXPECT_EQ(run(EValue(2.5), EValue(0.5), EValue(true)), Error::InvalidArgument);
  EXPECT_NE(last_error().find("input 1 'n': got a double, but the model expects a tensor i64 []"), std::string::npos)
      << last_error();
  EXPECT_EQ(run(EValue(static_cast<int64_t>(1)), EValue(0.5), EValue(static_cast<int64_t>(1))),
            Error::InvalidArgument);
  EXPECT_NE(last_error().find("input 3 'flag': got an int"), std::string::npos) << last_error();
  // A scalar for a tensor input.
  EValue number(static_cast<int64_t>(3));
  EValue n(static_cast<int64_t>(3)), scale(0.5), flag(true);
  EXPECT_EQ(harness_.execute_values({&number, &n, &scale, &flag, outputs_[0]->value()}), Error::InvalidArgument);
  EXPECT_NE(last_error().find("input 0 'x': got an int, but the model expects a tensor f32 [4]"), std::string::npos)
      << last_error();
  // And the handle still works.
  ASSERT_EQ(run(EValue(static_cast<int64_t>(3)), EValue(0.5), EValue(true)), Error::Ok) << last_error();
  expect_outputs_match(c_, outputs_);
}

}  // namespace
}  // namespace executorch_openvino::testing
