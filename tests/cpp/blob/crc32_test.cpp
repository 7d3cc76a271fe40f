// CRC-32 (zlib polynomial, slicing-by-8): published check values, continuation, and agreement with
// a one-byte-at-a-time reference over every length and alignment the 8-byte loop can meet.
#include "blob/crc32.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace executorch_openvino::blob {
namespace {

// The textbook bit-by-bit CRC-32 (reflected polynomial 0xEDB88320), continued from `crc`.
uint32_t reference_crc32(const uint8_t* data, size_t size, uint32_t crc = 0) {
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1u) ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
  }
  return ~crc;
}

uint32_t crc_of(const std::string& text) { return crc32(text.data(), text.size()); }

TEST(Crc32Test, MatchesThePublishedCheckValue) { EXPECT_EQ(crc_of("123456789"), 0xCBF43926u); }

TEST(Crc32Test, IsZeroForNoBytes) {
  EXPECT_EQ(crc32(nullptr, 0), 0u);
  EXPECT_EQ(crc_of(""), 0u);
}

TEST(Crc32Test, MatchesZlibForKnownStrings) {
  // Values from Python's zlib.crc32.
  EXPECT_EQ(crc_of("a"), 0xE8B7BE43u);
  EXPECT_EQ(crc_of("abc"), 0x352441C2u);
  EXPECT_EQ(crc_of("The quick brown fox jumps over the lazy dog"), 0x414FA339u);
  EXPECT_EQ(crc_of(std::string(32, '\0')), 0x190A55ADu);
  EXPECT_EQ(crc_of(std::string(32, '\xFF')), 0xFF6CAB0Bu);
}

TEST(Crc32Test, LeavesAZeroStartingValueUnchangedForNoBytes) {
  const uint8_t byte = 0x5A;
  const uint32_t crc = crc32(&byte, 1);
  EXPECT_EQ(crc32(&byte, 0, crc), crc);
}

TEST(Crc32Test, GivesTheSameValueWhenContinuedInPiecesAsInOneCall) {
  std::mt19937 rng(1234);
  std::vector<uint8_t> data(517);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  const uint32_t whole = crc32(data.data(), data.size());
  for (size_t split = 0; split <= data.size(); ++split) {
    SCOPED_TRACE("split at " + std::to_string(split));
    const uint32_t first = crc32(data.data(), split);
    EXPECT_EQ(crc32(data.data() + split, data.size() - split, first), whole);
  }
  // Many small uneven pieces, too.
  uint32_t running = 0;
  size_t at = 0;
  for (size_t piece = 1; at < data.size(); piece = piece % 13 + 1) {
    const size_t n = std::min(piece, data.size() - at);
    running = crc32(data.data() + at, n, running);
    at += n;
  }
  EXPECT_EQ(running, whole);
}

TEST(Crc32Test, AgreesWithABytewiseReferenceForEveryLengthAndAlignment) {
  std::mt19937 rng(42);
  std::vector<uint8_t> storage(300 + 16);
  for (auto& b : storage) b = static_cast<uint8_t>(rng());
  for (size_t start = 0; start < 16; ++start) {
    for (size_t length = 0; length <= 300; ++length) {
      // Copy into a fresh, exactly sized buffer so a read past the end is visible to sanitizers.
      std::vector<uint8_t> exact(storage.begin() + start, storage.begin() + start + length);
      SCOPED_TRACE("start " + std::to_string(start) + ", length " + std::to_string(length));
      ASSERT_EQ(crc32(exact.data(), exact.size()), reference_crc32(exact.data(), exact.size()));
      // And in place, from an unaligned address inside a larger buffer.
      ASSERT_EQ(crc32(storage.data() + start, length), reference_crc32(storage.data() + start, length));
    }
  }
}

TEST(Crc32Test, AgreesWithTheReferenceWhenContinuingFromANonZeroValue) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<uint8_t> data(rng() % 300);
    for (auto& b : data) b = static_cast<uint8_t>(rng());
    const uint32_t seed = static_cast<uint32_t>(rng());
    SCOPED_TRACE("round " + std::to_string(round));
    ASSERT_EQ(crc32(data.data(), data.size(), seed), reference_crc32(data.data(), data.size(), seed));
  }
}

// Weights of a megabyte and more go through the carry-less folding by 64 bytes, then 16, then the tables for
// the tail: lengths around each of those boundaries, from odd addresses and non-zero starting values. A
// 16-byte block left out of the folds (tried), or a tail not handed back to the tables, gives another value here.
TEST(Crc32Test, AgreesWithTheReferenceOnLargeBuffersAtEveryBoundaryOfTheFastPath) {
  std::mt19937 rng(99);
  std::vector<uint8_t> storage((1u << 20) + 200);
  for (auto& b : storage) b = static_cast<uint8_t>(rng());
  for (size_t length : {size_t{63}, size_t{64}, size_t{65}, size_t{79}, size_t{80}, size_t{127}, size_t{128},
                        size_t{129}, size_t{4096}, size_t{4111}, (size_t{1} << 20) - 1, size_t{1} << 20,
                        (size_t{1} << 20) + 15, (size_t{1} << 20) + 77}) {
    for (size_t start : {size_t{0}, size_t{3}}) {
      const uint32_t seed = static_cast<uint32_t>(rng());
      SCOPED_TRACE("length " + std::to_string(length) + ", start " + std::to_string(start));
      ASSERT_EQ(crc32(storage.data() + start, length, seed), reference_crc32(storage.data() + start, length, seed));
    }
  }
}

TEST(Crc32Test, ChangesWhenAnySingleBitFlips) {
  std::vector<uint8_t> data(40);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 37 + 11);
  const uint32_t original = crc32(data.data(), data.size());
  for (size_t bit = 0; bit < data.size() * 8; ++bit) {
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    EXPECT_NE(crc32(data.data(), data.size()), original) << "bit " << bit;
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
  }
}

}  // namespace
}  // namespace executorch_openvino::blob
