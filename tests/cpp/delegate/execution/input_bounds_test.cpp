// Inputs the model indexes with (blob section 8, src/delegate/execution/input_bounds.cpp), through the backend
// as ExecuTorch drives it: a value outside its bound is refused before the inference, the request is
// left as it was, and the next good call computes right.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "blob/delegate_blob.h"
#include "case_helpers.h"
#include "delegate_harness.h"
#include "ir_case.h"

namespace executorch_openvino::testing {
namespace {

std::vector<uint8_t> with_input_bounds(const IrCase& c, std::vector<blob::InputBound> bounds) {
  blob::ParseResult parsed = blob::parse(c.blob.data(), c.blob.size());
  EXPECT_TRUE(parsed.blob.has_value()) << parsed.error;
  const blob::Span xml = parsed.blob->ir_xml, weights = parsed.blob->ir_weights;
  return blob::build({std::string(reinterpret_cast<const char*>(xml.data), xml.size),
                     std::vector<uint8_t>(weights.data, weights.data + weights.size), {}, std::nullopt, std::nullopt,
                     std::move(bounds)});
}

// int64_input's computation, x * 3 + 7, done here for values the case's NumPy reference lacks.
std::vector<uint8_t> times_three_plus_seven(const HostTensor& input) {
  std::vector<int64_t> values(input.nbytes() / sizeof(int64_t));
  std::memcpy(values.data(), input.bytes().data(), input.nbytes());
  for (int64_t& v : values) v = v * 3 + 7;
  const auto* bytes = reinterpret_cast<const uint8_t*>(values.data());
  return std::vector<uint8_t>(bytes, bytes + input.nbytes());
}

class BackendInputBoundsTest : public ::testing::Test {
 protected:
  // int64_input: indices i64 [5], bounded to [-50, 50) -> x * 3 + 7.
  void SetUp() override {
    c_ = load_ir_case("int64_input");
    ASSERT_EQ(harness_.init(with_input_bounds(c_, {{0, -50, 50}}), c_.specs), Error::Ok) << last_error();
    inputs_ = make_inputs(c_);
    outputs_ = make_outputs(c_);
  }
  int64_t* values() { return reinterpret_cast<int64_t*>(inputs_[0]->data()); }

  IrCase c_;
  DelegateHarness harness_;
  std::vector<std::unique_ptr<HostTensor>> inputs_, outputs_;
};

// The bound is inclusive below and exclusive above: both edges compute, each alone and together.
TEST_F(BackendInputBoundsTest, TheInclusiveEdgesOfTheBoundAreAccepted) {
  const std::vector<std::vector<int64_t>> edges = {
      {-50, 0, 0, 0, 0}, {0, 0, 0, 0, 49}, {-50, 49, -50, 49, -50}, {49, 49, 49, 49, 49}};
  for (const auto& edge : edges) {
    std::memcpy(values(), edge.data(), inputs_[0]->nbytes());
    std::memset(outputs_[0]->data(), 0x5A, outputs_[0]->nbytes());
    ASSERT_EQ(harness_.execute(args_of(inputs_, outputs_)), Error::Ok) << last_error();
    EXPECT_EQ(outputs_[0]->bytes(), times_three_plus_seven(*inputs_[0])) << "inputs " << ::testing::PrintToString(edge);
  }
}

TEST_F(BackendInputBoundsTest, AValueOutsideItsBoundIsRefusedNamingItAndChangesNothing) {
  ASSERT_EQ(harness_.execute(args_of(inputs_, outputs_)), Error::Ok) << last_error();
  expect_outputs_match(c_, outputs_);
  const std::vector<uint8_t> computed = outputs_[0]->bytes();
  // Just past each edge, then far past: the call is refused before the inference, so the output
  // buffer keeps the last good call's values.
  for (const int64_t outside : {int64_t{-51}, int64_t{50}, INT64_MIN, INT64_MAX}) {
    const int64_t kept = values()[3];
    values()[3] = outside;
    EXPECT_EQ(harness_.execute(args_of(inputs_, outputs_)), Error::InvalidArgument);
    EXPECT_NE(last_error().find("input 0 holds " + std::to_string(outside) + " at element 3, outside [-50, 50)"),
              std::string::npos)
        << last_error();
    EXPECT_EQ(outputs_[0]->bytes(), computed) << "a refused call wrote the output for " << outside;
    values()[3] = kept;
  }
  // Out-of-bounds values in buffers of their own, refused first: the call after them, on the first
  // buffers, computes as if the refused calls never happened.
  HostTensor bad_input(ScalarType::Long, {5}, std::vector<uint8_t>(5 * sizeof(int64_t), 0x7F));
  HostTensor other_output(ScalarType::Long, {5});
  EXPECT_EQ(harness_.execute({&bad_input, &other_output}), Error::InvalidArgument);
  EXPECT_EQ(other_output.bytes(), std::vector<uint8_t>(other_output.nbytes(), 0)) << "a refused call wrote its output";
  std::memset(outputs_[0]->data(), 0x5A, outputs_[0]->nbytes());
  ASSERT_EQ(harness_.execute(args_of(inputs_, outputs_)), Error::Ok) << last_error();
  expect_outputs_match(c_, outputs_);
}

TEST(BackendInputBoundsBlobTest, ABoundOfAnInputTheIrLacksIsAnInvalidBlob) {
  const IrCase c = load_ir_case("int64_input");
  DelegateHarness harness;
  EXPECT_EQ(harness.init(with_input_bounds(c, {{1, 0, 5}}), c.specs), Error::DelegateInvalidCompatibility);
  EXPECT_NE(last_error().find("bounds input 1 of an IR of 1 inputs"), std::string::npos) << last_error();
}

}  // namespace
}  // namespace executorch_openvino::testing
