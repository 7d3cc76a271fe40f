// The hash that identifies blob sections, cache keys and cached model files: every single-bit change
// and every length change must change it, at every length around its 32-byte blocks and 8-byte words.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "delegate/compiling/content_hash.h"

namespace executorch_openvino::delegate {
namespace {

std::vector<uint8_t> pattern(size_t size) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(i * 131 + 7);
  return bytes;
}

TEST(ContentHashTest, EveryBitFlipChangesTheHashAtEveryLengthUpTo80Bytes) {
  for (size_t size = 1; size <= 80; ++size) {
    std::vector<uint8_t> bytes = pattern(size);
    const uint64_t original = content_hash(bytes.data(), size);
    for (size_t bit = 0; bit < size * 8; ++bit) {
      bytes[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      ASSERT_NE(content_hash(bytes.data(), size), original) << "size " << size << ", bit " << bit;
      bytes[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    }
  }
}

TEST(ContentHashTest, ZerosOfDifferentLengthsHashDifferently) {
  const std::vector<uint8_t> zeros(200, 0);
  std::set<uint64_t> seen;
  for (size_t size = 0; size <= zeros.size(); ++size) seen.insert(content_hash(zeros.data(), size));
  EXPECT_EQ(seen.size(), zeros.size() + 1);
}

TEST(ContentHashTest, SeedsGiveDifferentHashesOfTheSameBytes) {
  const std::vector<uint8_t> bytes = pattern(1000);
  std::set<uint64_t> seen;
  for (uint64_t seed = 0; seed < 64; ++seed) seen.insert(content_hash(bytes.data(), bytes.size(), seed));
  EXPECT_EQ(seen.size(), 64u);
}

TEST(ContentHashTest, SwappedBlocksHashDifferently) {
  // Four lanes are combined in order: the same words in other lanes must not give the same hash.
  std::vector<uint8_t> bytes = pattern(64);
  const uint64_t original = content_hash(bytes.data(), bytes.size());
  std::swap_ranges(bytes.begin(), bytes.begin() + 8, bytes.begin() + 8);
  EXPECT_NE(content_hash(bytes.data(), bytes.size()), original);
}

}  // namespace
}  // namespace executorch_openvino::delegate
