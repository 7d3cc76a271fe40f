// The state file format (src/state_file): what is written reads back the same, and every cut, flip
// or foreign version is refused with its reason (a reader that trusted a size or skipped the CRC
// would accept one of them).
#include "state_file/state_file.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sf = executorch_openvino::state_file;

namespace {

sf::StateFile sample() {
  sf::StateFile state;
  state.partitions.push_back({0x1234567890abcdefULL, "paged, 2 caches", 33, {std::vector<uint8_t>(128, 7), {1, 2, 3}}});
  state.partitions.push_back({42, "", 0, {}});
  state.application = {'E', 'O', 'V', 9, 8, 7};
  return state;
}

std::string refusal(const std::vector<uint8_t>& bytes) {
  auto decoded = sf::decode(bytes.data(), bytes.size());
  return decoded.ok() ? "" : decoded.failure().message;
}

}  // namespace

TEST(StateFile, WhatIsWrittenReadsBackTheSame) {
  const std::vector<uint8_t> bytes = sf::encode(sample());
  auto decoded = sf::decode(bytes.data(), bytes.size());
  ASSERT_TRUE(decoded.ok()) << decoded.failure().message;
  const sf::StateFile& state = decoded.value();
  ASSERT_EQ(state.partitions.size(), 2u);
  EXPECT_EQ(state.partitions[0].program, 0x1234567890abcdefULL);
  EXPECT_EQ(state.partitions[0].form, "paged, 2 caches");
  EXPECT_EQ(state.partitions[0].length, 33);
  EXPECT_EQ(state.partitions[0].parts, sample().partitions[0].parts);
  EXPECT_TRUE(state.partitions[1].parts.empty());
  EXPECT_EQ(state.application, sample().application);
  EXPECT_EQ(sf::encode(state), bytes);
}

TEST(StateFile, EveryTruncationIsRefused) {
  const std::vector<uint8_t> bytes = sf::encode(sample());
  for (size_t size = 0; size < bytes.size(); ++size) {
    const std::string why = refusal(std::vector<uint8_t>(bytes.begin(), bytes.begin() + size));
    EXPECT_FALSE(why.empty()) << "accepted the first " << size << " bytes";
  }
  EXPECT_NE(refusal(std::vector<uint8_t>(bytes.begin(), bytes.end() - 1)).find("truncated"), std::string::npos);
}

TEST(StateFile, AFlippedByteOrAnotherVersionIsRefused) {
  const std::vector<uint8_t> bytes = sf::encode(sample());
  for (size_t at = 24; at < bytes.size(); at += 7) {
    std::vector<uint8_t> flipped = bytes;
    flipped[at] ^= 0x10;
    EXPECT_NE(refusal(flipped).find("CRC-32"), std::string::npos) << "byte " << at;
  }
  std::vector<uint8_t> newer = bytes;
  newer[8] = 2;
  EXPECT_NE(refusal(newer).find("format version 2"), std::string::npos);
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  EXPECT_NE(refusal(longer).find("truncated or extended"), std::string::npos);
}
