// Whisper's timestamp rules (src/generation/timestamp_rule.h) on hand-made rows: each rule's mask at
// the point in a window where it applies, and the refusal of ids the rules cannot use. The engine's
// choices under the rules are compared with transformers' processors in
// tests/python/generation/test_timestamp_rule.py; these pin each rule alone.
#include <gtest/gtest.h>

#include <vector>

#include "generation/timestamp_rule.h"

namespace executorch_openvino::generation {
namespace {

constexpr size_t kVocab = 16;  // 0..9 text, 10 end, 11 no-timestamps, 12..15 timestamps

TimestampRule rule() {
  TimestampRule made;
  made.timestamp_begin = 12;
  made.no_timestamps = 11;
  made.eos = 10;
  made.begin_index = 2;
  made.from_probability = false;
  return made;
}

std::vector<int64_t> allowed_after(const TimestampRule& made, const std::vector<int64_t>& history,
                                   const std::vector<float>& row = std::vector<float>(kVocab, 0.f)) {
  TokenBits bits((kVocab + 31) / 32, ~0u);
  made.restrict(row.data(), kVocab, history, bits);
  std::vector<int64_t> allowed;
  for (int64_t token = 0; token < static_cast<int64_t>(kVocab); ++token)
    if (token_allowed(bits, token)) allowed.push_back(token);
  return allowed;
}

TEST(TimestampRuleTest, EachRuleWhereItApplies) {
  const TimestampRule made = rule();
  // The window's first token: a timestamp.
  EXPECT_EQ(allowed_after(made, {0, 1}), (std::vector<int64_t>{12, 13, 14, 15}));
  TimestampRule first_soon = made;
  first_soon.max_initial = 1;
  EXPECT_EQ(allowed_after(first_soon, {0, 1}), (std::vector<int64_t>{12, 13}));
  // A lone timestamp after text: its pair (not earlier) or the end; no text.
  EXPECT_EQ(allowed_after(made, {0, 1, 13, 4, 14}), (std::vector<int64_t>{10, 14, 15}));
  // A closed pair: text or the end, no timestamp.
  EXPECT_EQ(allowed_after(made, {0, 1, 13, 4, 14, 14}),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  // Text after a timestamp: a later timestamp only (never the same again).
  EXPECT_EQ(allowed_after(made, {0, 1, 13, 4}),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 14, 15}));
}

TEST(TimestampRuleTest, TimestampsTogetherLikelierThanAnyTextTokenWin) {
  TimestampRule made = rule();
  made.from_probability = true;
  std::vector<float> row(kVocab, 0.f);
  row[3] = 1.0f;  // the likeliest single token is text...
  for (int64_t t = 12; t < 16; ++t) row[t] = 0.5f;
  // ...but the timestamps still allowed after 13 (14 and 15) together weigh log(2 e^0.5) = 1.19 > 1.0.
  // Counted over every timestamp, refused ones too, a 0.3 text token would lose as well; see below.
  const std::vector<int64_t> after_text = allowed_after(made, {0, 1, 13, 4}, row);
  EXPECT_EQ(after_text, (std::vector<int64_t>{14, 15}));
  // With the text token at 1.5 (above 1.19, below log(4 e^0.5) = 1.89) text stays: only the
  // timestamps the rules left count.
  row[3] = 1.5f;
  EXPECT_EQ(allowed_after(made, {0, 1, 13, 4}, row).size(), 13u);
}

TEST(TimestampRuleTest, IdsTheRulesCannotUseAreRefused) {
  TimestampRule made = rule();
  EXPECT_TRUE(made.validate(kVocab).ok());
  made.timestamp_begin = kVocab;
  EXPECT_FALSE(made.validate(kVocab).ok());
  made = rule();
  made.eos = 13;
  EXPECT_FALSE(made.validate(kVocab).ok());
  made = rule();
  made.no_timestamps = -1;
  EXPECT_FALSE(made.validate(kVocab).ok());
}

}  // namespace
}  // namespace executorch_openvino::generation
