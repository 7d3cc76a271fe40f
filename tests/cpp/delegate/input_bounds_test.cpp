// Inputs the model indexes with (blob section 8, src/delegate/input_bounds.cpp), through the backend
// as ExecuTorch drives it: a value outside its bound is refused before the inference, the request is
// left as it was, and the next good call computes right.
#include <gtest/gtest.h>

#include <cstdint>
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
  return blob::build(std::string(reinterpret_cast<const char*>(xml.data), xml.size),
                     std::vector<uint8_t>(weights.data, weights.data + weights.size), {}, std::nullopt, std::nullopt,
                     std::move(bounds));
}

TEST(BackendInputBoundsTest, AValueOutsideItsBoundIsRefusedNamingItAndChangesNothing) {
  const IrCase c = load_ir_case("int64_input");  // indices i64 [5] in [-50, 50) -> x * 3 + 7
  DelegateHarness harness;
  ASSERT_EQ(harness.init(with_input_bounds(c, {{0, -50, 50}}), c.specs), Error::Ok) << last_error();
  auto inputs = make_inputs(c);
  auto outputs = make_outputs(c);
  ASSERT_EQ(harness.execute(args_of(inputs, outputs)), Error::Ok) << last_error();
  expect_outputs_match(c, outputs);
  auto* values = reinterpret_cast<int64_t*>(inputs[0]->data());
  for (const int64_t outside : {int64_t{50}, int64_t{-51}, INT64_MAX}) {
    const int64_t kept = values[3];
    values[3] = outside;
    EXPECT_EQ(harness.execute(args_of(inputs, outputs)), Error::InvalidArgument);
    EXPECT_NE(last_error().find("input 0 holds " + std::to_string(outside) + " at element 3, outside [-50, 50)"),
              std::string::npos)
        << last_error();
    values[3] = kept;
  }
  ASSERT_EQ(harness.execute(args_of(inputs, outputs)), Error::Ok) << last_error();
  expect_outputs_match(c, outputs);
}

TEST(BackendInputBoundsTest, ABoundOfAnInputTheIrLacksIsAnInvalidBlob) {
  const IrCase c = load_ir_case("int64_input");
  DelegateHarness harness;
  EXPECT_EQ(harness.init(with_input_bounds(c, {{1, 0, 5}}), c.specs), Error::DelegateInvalidCompatibility);
  EXPECT_NE(last_error().find("bounds input 1 of an IR of 1 inputs"), std::string::npos) << last_error();
}

}  // namespace
}  // namespace executorch_openvino::testing
