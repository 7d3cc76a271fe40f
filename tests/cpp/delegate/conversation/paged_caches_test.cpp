// The check every call of a paged model passes (src/delegate/conversation/paged_caches.cpp): paged attention is
// causal and reads no mask, so a call whose mask is anything else is refused rather than computed
// differently from eager PyTorch; given by the call or, once it ran, computed by the model.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "delegate/conversation/paged_caches.h"
#include "host_tensor.h"

namespace executorch_openvino::testing {
namespace {

// A [rows, context] boolean mask, row i attending to positions 0 .. position + i.
std::vector<uint8_t> causal(int64_t rows, int64_t context, int64_t position) {
  std::vector<uint8_t> cells(static_cast<size_t>(rows * context), 0);
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t column = 0; column <= position + row && column < context; ++column) cells[row * context + column] = 1;
  }
  return cells;
}

std::string refusal(HostTensor& mask, int64_t position) {
  Status checked = delegate::check_causal_mask(mask.tensor(), position);
  return checked.ok() ? std::string() : checked.failure().message;
}

TEST(PagedCachesTest, ACausalMaskPassesAtEveryPositionUpToTheContext) {
  for (int64_t position : {0, 1, 5, 12}) {
    HostTensor mask(ScalarType::Bool, {4, 16}, causal(4, 16, position));
    EXPECT_EQ(refusal(mask, position), "") << position;
  }
  HostTensor one(ScalarType::Bool, {1, 16}, causal(1, 16, 15));  // the last position
  EXPECT_EQ(refusal(one, 15), "");
}

TEST(PagedCachesTest, AMaskThatSeesTheFutureOrHidesThePastIsRefusedNamingWhere) {
  std::vector<uint8_t> future = causal(3, 16, 4);
  future[1 * 16 + 9] = 1;  // row 1 (position 5) attends to position 9
  HostTensor ahead(ScalarType::Bool, {3, 16}, future);
  EXPECT_NE(refusal(ahead, 4).find("not causal at row 1, column 9"), std::string::npos) << refusal(ahead, 4);

  std::vector<uint8_t> hidden = causal(3, 16, 4);
  hidden[2 * 16 + 0] = 0;  // row 2 (position 6) does not attend to position 0: a padded or windowed mask
  HostTensor padded(ScalarType::Bool, {3, 16}, hidden);
  EXPECT_NE(refusal(padded, 4).find("not causal at row 2, column 0"), std::string::npos) << refusal(padded, 4);
  EXPECT_NE(refusal(padded, 4).find("attention=grown"), std::string::npos);

  // The right mask for another first position is the wrong one for this call.
  HostTensor shifted(ScalarType::Bool, {3, 16}, causal(3, 16, 5));
  EXPECT_NE(refusal(shifted, 4), "");
}

TEST(PagedCachesTest, PositionsPastTheContextAndOtherKindsOfMaskAreRefused) {
  HostTensor mask(ScalarType::Bool, {4, 16}, causal(4, 16, 12));
  EXPECT_NE(refusal(mask, 13).find("do not fit the context of 16"), std::string::npos) << refusal(mask, 13);
  HostTensor additive(ScalarType::Float, {2, 16});
  EXPECT_NE(refusal(additive, 0).find("boolean"), std::string::npos);
  HostTensor flat(ScalarType::Bool, {16}, causal(1, 16, 0));
  EXPECT_NE(refusal(flat, 0).find("boolean [positions, context]"), std::string::npos);
}

// A mask the model computes is read from its output as plain booleans, and checked the same way.
TEST(PagedCachesTest, AComputedMaskIsCheckedAsAGivenOneIs) {
  auto check = [](const std::vector<uint8_t>& cells, int64_t rows, int64_t position) {
    Status checked =
        delegate::check_causal_mask(reinterpret_cast<const bool*>(cells.data()), rows, 16, position);
    return checked.ok() ? std::string() : checked.failure().message;
  };
  EXPECT_EQ(check(causal(3, 16, 7), 3, 7), "");
  std::vector<uint8_t> windowed = causal(3, 16, 7);
  windowed[2 * 16 + 1] = 0;  // row 2 (position 9) no longer sees position 1: a sliding window
  EXPECT_NE(check(windowed, 3, 7).find("not causal at row 2, column 1"), std::string::npos) << check(windowed, 3, 7);
  EXPECT_NE(check(causal(3, 16, 14), 3, 14).find("do not fit the context of 16"), std::string::npos);
}

}  // namespace
}  // namespace executorch_openvino::testing
