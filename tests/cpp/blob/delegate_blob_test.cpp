// The delegate blob container: build()/parse() round trips, and parse() refusing every kind of
// damaged or malformed input with a message that names the problem, without reading outside the
// buffer it is given. Malformed-but-well-sealed blobs come from a small serialiser in this file
// that writes header, table and payloads with correct checksums, so each test reaches the one
// rule it is about instead of stopping at a checksum.
//
// Cross-language agreement (a blob from the Python writer) is covered by
// tests/python/container/test_blob_format.py, which checks the Python output against the same layout.
#include "blob/delegate_blob.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "blob/crc32.h"

namespace executorch_openvino::blob {
namespace {

constexpr uint32_t kXmlKind = static_cast<uint32_t>(SectionKind::kIrXml);
constexpr uint32_t kWeightsKind = static_cast<uint32_t>(SectionKind::kIrWeights);
constexpr uint32_t kPrecompiledKind = static_cast<uint32_t>(SectionKind::kPrecompiled);
// CRC-32 of the 392-byte blob tests/python/container/test_blob_format.py pins as GOLDEN_PRECOMPILED_HEX.
constexpr uint32_t kGoldenPrecompiledCrc = 0x03e5567e;
constexpr uint32_t kInputArgumentsKind = static_cast<uint32_t>(SectionKind::kInputArguments);
// CRC-32 of the 276-byte blob tests/python/container/test_blob_format.py pins as GOLDEN_INPUT_ARGUMENTS_CRC.
constexpr uint32_t kGoldenInputArgumentsCrc = 0xdd3ef05a;
constexpr uint32_t kNamedWeightsKind = static_cast<uint32_t>(SectionKind::kNamedWeights);
// CRC-32 of the blob tests/python/container/test_blob_format.py pins as GOLDEN_NAMED_WEIGHTS_CRC.
constexpr uint32_t kGoldenNamedWeightsCrc = 0x4f7ad705;
constexpr uint32_t kInputBoundsKind = static_cast<uint32_t>(SectionKind::kInputBounds);
// Pinned in tests/python/container/test_blob_format.py too (GOLDEN_INPUT_BOUNDS_CRC).
constexpr uint32_t kGoldenInputBoundsCrc = 0x49cdeadf;
constexpr uint32_t kGrownCachesKind = static_cast<uint32_t>(SectionKind::kGrownCaches);
// Pinned in tests/python/container/test_blob_format.py too (GOLDEN_GROWN_CACHES_CRC).
constexpr uint32_t kGoldenGrownCachesCrc = 0x555fd50b;
constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

// ---- little-endian access to raw bytes ----

void put(std::vector<uint8_t>& bytes, size_t at, uint64_t value, size_t width) {
  for (size_t i = 0; i < width; ++i) bytes.at(at + i) = static_cast<uint8_t>(value >> (8 * i));
}

uint64_t get(const std::vector<uint8_t>& bytes, size_t at, size_t width) {
  uint64_t value = 0;
  for (size_t i = 0; i < width; ++i) value |= static_cast<uint64_t>(bytes.at(at + i)) << (8 * i);
  return value;
}

size_t entry_at(size_t index) { return kFixedHeaderSize + index * kEntrySize; }

// Recomputes the header CRC (over header and table, the CRC field taken as zero).
void reseal_header(std::vector<uint8_t>& bytes) {
  const size_t header_size = static_cast<size_t>(get(bytes, kHeaderSizeOffset, 4));
  std::vector<uint8_t> copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(header_size));
  put(copy, kHeaderCrcOffset, 0, 4);
  put(bytes, kHeaderCrcOffset, crc32(copy.data(), copy.size()), 4);
}

// ---- a serialiser for hand-made blobs ----

struct Section {
  uint32_t kind;
  uint64_t offset;
  std::vector<uint8_t> payload;          // written at `offset` (when it fits a buffer we can allocate)
  std::optional<uint64_t> length = {};  // the table's length field; defaults to payload.size()
};

struct Layout {
  uint16_t major = kMajorVersion;
  uint16_t minor = kMinorVersion;
  uint32_t flags = 0;
  std::vector<Section> sections;
};

std::vector<uint8_t> bytes_of(const std::string& text) { return {text.begin(), text.end()}; }

// Writes `layout` with a correct header size, total size, header CRC and per-section CRCs (each
// over the bytes the entry designates, when those lie inside the blob).
std::vector<uint8_t> serialise(const Layout& layout) {
  const size_t header_size = kFixedHeaderSize + layout.sections.size() * kEntrySize;
  size_t total = header_size;
  for (const Section& s : layout.sections) {
    if (s.offset <= (1u << 20)) total = std::max(total, static_cast<size_t>(s.offset) + s.payload.size());
  }
  std::vector<uint8_t> out(total, 0);
  std::memcpy(out.data(), kMagic, sizeof(kMagic));
  put(out, kMajorOffset, layout.major, 2);
  put(out, kMinorOffset, layout.minor, 2);
  put(out, kHeaderSizeOffset, header_size, 4);
  put(out, kSectionCountOffset, layout.sections.size(), 4);
  put(out, kTotalSizeOffset, total, 8);
  put(out, kFlagsOffset, layout.flags, 4);
  for (const Section& s : layout.sections) {
    if (s.offset <= (1u << 20)) std::copy(s.payload.begin(), s.payload.end(), out.begin() + s.offset);
  }
  for (size_t i = 0; i < layout.sections.size(); ++i) {
    const Section& s = layout.sections[i];
    const uint64_t length = s.length.value_or(s.payload.size());
    const bool inside = s.offset <= total && length <= total - s.offset;
    const uint32_t crc = inside ? crc32(out.data() + s.offset, static_cast<size_t>(length))
                                : crc32(s.payload.data(), s.payload.size());
    put(out, entry_at(i) + kEntryKindOffset, s.kind, 4);
    put(out, entry_at(i) + kEntryCrcOffset, crc, 4);
    put(out, entry_at(i) + kEntryOffsetOffset, s.offset, 8);
    put(out, entry_at(i) + kEntryLengthOffset, length, 8);
  }
  reseal_header(out);
  return out;
}

// ---- assertions ----

ParseResult parse_bytes(const std::vector<uint8_t>& bytes) { return parse(bytes.data(), bytes.size()); }

::testing::AssertionResult fails(const ParseResult& result) {
  if (result.blob) return ::testing::AssertionFailure() << "parse() accepted the blob";
  if (result.error.empty()) return ::testing::AssertionFailure() << "parse() failed without a message";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult fails_with(const ParseResult& result, const std::string& needle) {
  if (result.blob) return ::testing::AssertionFailure() << "parse() accepted the blob; expected \"" << needle << "\"";
  if (result.error.find(needle) == std::string::npos) {
    return ::testing::AssertionFailure() << "error \"" << result.error << "\" does not mention \"" << needle << "\"";
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult succeeds(const ParseResult& result) {
  if (!result.blob) return ::testing::AssertionFailure() << "parse() refused the blob: " << result.error;
  if (!result.error.empty()) return ::testing::AssertionFailure() << "success with an error: " << result.error;
  return ::testing::AssertionSuccess();
}

std::string text_of(const Span& span) { return {reinterpret_cast<const char*>(span.data), span.size}; }
std::vector<uint8_t> bytes_of(const Span& span) { return {span.data, span.data + span.size}; }

class DelegateBlobTest : public ::testing::Test {
 protected:
  const std::string xml_ = "<?xml version=\"1.0\"?>\n<net name=\"test\" version=\"11\"><layers/><edges/></net>\n";
  const std::vector<uint8_t> weights_ = make_weights(1000);
  const std::vector<uint8_t> blob_ = build({xml_, weights_});

  static std::vector<uint8_t> make_weights(size_t n) {
    std::vector<uint8_t> w(n);
    for (size_t i = 0; i < n; ++i) w[i] = static_cast<uint8_t>(i * 131 + 7);
    return w;
  }

  // Where build() put each payload (entry 0 is the XML, entry 1 the weights).
  uint64_t payload_offset(size_t entry) const { return get(blob_, entry_at(entry) + kEntryOffsetOffset, 8); }

  // A version 1.`minor` blob of the XML and, after it, one section of `kind` per payload, each 128
  // bytes after the one before (payloads of up to 128 bytes), parsed.
  ParseResult with_sections(uint16_t minor, uint32_t kind, const std::vector<std::vector<uint8_t>>& payloads) const {
    Layout layout{1, minor, 0, {Section{kXmlKind, 128, bytes_of(xml_)}}};
    uint64_t offset = (128 + xml_.size() + 63) / 64 * 64;
    for (const std::vector<uint8_t>& payload : payloads) {
      layout.sections.push_back(Section{kind, offset, payload});
      offset += 128;
    }
    return parse_bytes(serialise(layout));
  }
};

// ---------------------------------------------------------------------------------------------
// Round trips

TEST_F(DelegateBlobTest, RoundTripsTheXmlAndTheWeights) {
  const ParseResult result = parse_bytes(blob_);
  ASSERT_TRUE(succeeds(result));
  EXPECT_EQ(text_of(result.blob->ir_xml), xml_);
  EXPECT_EQ(bytes_of(result.blob->ir_weights), weights_);
  EXPECT_EQ(result.blob->minor_version, 1);  // the version of the newest kind written
}

TEST_F(DelegateBlobTest, RoundTripsAModelWithoutWeights) {
  const std::vector<uint8_t> blob = build({xml_, {}});
  const ParseResult result = parse_bytes(blob);
  ASSERT_TRUE(succeeds(result));
  EXPECT_EQ(text_of(result.blob->ir_xml), xml_);
  EXPECT_EQ(result.blob->ir_weights.size, 0u);
}

TEST_F(DelegateBlobTest, RoundTripsXmlOfEveryLengthAroundTheAlignment) {
  for (size_t length = 1; length <= 3 * kPayloadAlignment + 1; ++length) {
    SCOPED_TRACE("xml length " + std::to_string(length));
    const std::string xml(length, 'x');
    for (size_t weights : {size_t{0}, size_t{1}, size_t{64}, size_t{65}}) {
      const std::vector<uint8_t> w = make_weights(weights);
      const std::vector<uint8_t> blob = build({xml, w});
      const ParseResult result = parse_bytes(blob);
      ASSERT_TRUE(succeeds(result));
      ASSERT_EQ(text_of(result.blob->ir_xml), xml);
      ASSERT_EQ(bytes_of(result.blob->ir_weights), w);
    }
  }
}

TEST_F(DelegateBlobTest, PlacesEveryPayloadAtAMultipleOf64) {
  for (size_t length : {1, 17, 63, 64, 65, 200}) {
    const std::vector<uint8_t> blob = build({std::string(length, 'x'), make_weights(length)});
    const ParseResult result = parse_bytes(blob);
    ASSERT_TRUE(succeeds(result));
    EXPECT_EQ(static_cast<size_t>(result.blob->ir_xml.data - blob.data()) % kPayloadAlignment, 0u);
    EXPECT_EQ(static_cast<size_t>(result.blob->ir_weights.data - blob.data()) % kPayloadAlignment, 0u);
    for (size_t i = 0; i < 2; ++i) EXPECT_EQ(get(blob, entry_at(i) + kEntryOffsetOffset, 8) % kPayloadAlignment, 0u);
  }
}

TEST_F(DelegateBlobTest, ReturnsViewsIntoTheInputBufferWithoutCopying) {
  const ParseResult result = parse_bytes(blob_);
  ASSERT_TRUE(succeeds(result));
  const uint8_t* begin = blob_.data();
  const uint8_t* end = blob_.data() + blob_.size();
  EXPECT_EQ(result.blob->ir_xml.data, begin + payload_offset(0));
  EXPECT_EQ(result.blob->ir_weights.data, begin + payload_offset(1));
  EXPECT_LE(result.blob->ir_xml.data + result.blob->ir_xml.size, end);
  EXPECT_LE(result.blob->ir_weights.data + result.blob->ir_weights.size, end);
}

TEST_F(DelegateBlobTest, WritesTheDocumentedHeader) {
  EXPECT_EQ(std::memcmp(blob_.data(), "EOVB", 4), 0);
  EXPECT_EQ(get(blob_, kMajorOffset, 2), 1u);
  EXPECT_EQ(get(blob_, kMinorOffset, 2), 1u);  // no kind newer than 1.1's written
  EXPECT_EQ(get(blob_, kHeaderSizeOffset, 4), 32u + 2 * 24u);
  EXPECT_EQ(get(blob_, kSectionCountOffset, 4), 2u);
  EXPECT_EQ(get(blob_, kTotalSizeOffset, 8), blob_.size());
  EXPECT_EQ(get(blob_, kFlagsOffset, 4), 0u);
  EXPECT_EQ(get(blob_, entry_at(0) + kEntryKindOffset, 4), 1u);
  EXPECT_EQ(get(blob_, entry_at(0) + kEntryCrcOffset, 4), crc32(xml_.data(), xml_.size()));
  EXPECT_EQ(get(blob_, entry_at(0) + kEntryLengthOffset, 8), xml_.size());
  EXPECT_EQ(get(blob_, entry_at(1) + kEntryKindOffset, 4), 2u);
  EXPECT_EQ(get(blob_, entry_at(1) + kEntryCrcOffset, 4), crc32(weights_.data(), weights_.size()));
  EXPECT_EQ(get(blob_, entry_at(1) + kEntryLengthOffset, 8), weights_.size());
  EXPECT_EQ(payload_offset(0), 128u);  // the 80-byte header and table, rounded up to 64
  EXPECT_EQ(payload_offset(1), 128u + 128u);  // the 76-byte XML, rounded up to 64
  EXPECT_EQ(blob_.size(), payload_offset(1) + weights_.size());
}

// The same bytes are pinned in tests/python/container/test_blob_format.py for the Python writer, so the two
// writers agree byte for byte (a change here must be made there too, and is a format change).
TEST_F(DelegateBlobTest, BuildsTheGoldenBytesSharedWithThePythonWriter) {
  const std::string golden_hex =
      "454f5642010001005000000002000000c30000000000000000000000dbc86f6e"
      "01000000224d056880000000000000000600000000000000020000001d80bc55"
      "c000000000000000030000000000000000000000000000000000000000000000"
      "0000000000000000000000000000000000000000000000000000000000000000"
      "3c6e65742f3e0000000000000000000000000000000000000000000000000000"
      "0000000000000000000000000000000000000000000000000000000000000000"
      "010203";
  std::vector<uint8_t> golden;
  for (size_t i = 0; i < golden_hex.size(); i += 2) {
    golden.push_back(static_cast<uint8_t>(std::stoul(golden_hex.substr(i, 2), nullptr, 16)));
  }
  EXPECT_EQ(build({"<net/>", {1, 2, 3}}), golden);
}

// The hand-made blobs below are only meaningful if the serialiser agrees with build().
TEST_F(DelegateBlobTest, TestSerialiserReproducesBuildByteForByte) {
  const std::vector<uint8_t> handmade = serialise(
      Layout{kMajorVersion, 1, 0,
             {Section{kXmlKind, payload_offset(0), bytes_of(xml_)}, Section{kWeightsKind, payload_offset(1), weights_}}});
  EXPECT_EQ(handmade, blob_);
}

// ---------------------------------------------------------------------------------------------
// Damage to the header and section table

struct FieldChange {
  std::string name;
  size_t offset;
  size_t width;
  uint64_t (*change)(uint64_t);
};

TEST_F(DelegateBlobTest, RefusesAChangeToAnySingleHeaderOrTableField) {
  auto plus_one = [](uint64_t v) { return v + 1; };
  auto minus_one = [](uint64_t v) { return v - 1; };
  auto flip_low_bit = [](uint64_t v) { return v ^ 1; };
  auto flip_high_bit = [](uint64_t v) { return v ^ (uint64_t{1} << 31); };
  std::vector<FieldChange> changes = {
      {"magic", kMagicOffset, 4, [](uint64_t v) { return v ^ 0x20; }},  // "eOVB"
      {"major version (up)", kMajorOffset, 2, plus_one},
      {"major version (down)", kMajorOffset, 2, minus_one},
      {"minor version", kMinorOffset, 2, plus_one},  // allowed by itself, but the header CRC covers it
      {"header size (up)", kHeaderSizeOffset, 4, [](uint64_t v) { return v + kEntrySize; }},
      {"header size (down)", kHeaderSizeOffset, 4, minus_one},
      {"section count (up)", kSectionCountOffset, 4, plus_one},
      {"section count (down)", kSectionCountOffset, 4, minus_one},
      {"section count (zero)", kSectionCountOffset, 4, [](uint64_t) { return uint64_t{0}; }},
      {"total size (up)", kTotalSizeOffset, 8, plus_one},
      {"total size (down)", kTotalSizeOffset, 8, minus_one},
      {"flags", kFlagsOffset, 4, flip_low_bit},
      {"flags (high bit)", kFlagsOffset, 4, flip_high_bit},
      {"header CRC", kHeaderCrcOffset, 4, flip_low_bit},
  };
  for (size_t i = 0; i < 2; ++i) {
    const std::string entry = "entry " + std::to_string(i) + " ";
    changes.push_back({entry + "kind", entry_at(i) + kEntryKindOffset, 4, [](uint64_t v) { return v ^ 3; }});
    changes.push_back({entry + "kind (unknown)", entry_at(i) + kEntryKindOffset, 4, [](uint64_t) { return uint64_t{99}; }});
    changes.push_back({entry + "crc", entry_at(i) + kEntryCrcOffset, 4, flip_low_bit});
    changes.push_back({entry + "offset (by one)", entry_at(i) + kEntryOffsetOffset, 8, plus_one});
    changes.push_back({entry + "offset (by 64)", entry_at(i) + kEntryOffsetOffset, 8,
                       [](uint64_t v) { return v + kPayloadAlignment; }});
    changes.push_back({entry + "length (up)", entry_at(i) + kEntryLengthOffset, 8, plus_one});
    changes.push_back({entry + "length (down)", entry_at(i) + kEntryLengthOffset, 8, minus_one});
  }
  for (const FieldChange& c : changes) {
    SCOPED_TRACE(c.name);
    std::vector<uint8_t> damaged = blob_;
    put(damaged, c.offset, c.change(get(damaged, c.offset, c.width)), c.width);
    ASSERT_NE(damaged, blob_);
    EXPECT_TRUE(fails(parse_bytes(damaged)));
  }
}

TEST_F(DelegateBlobTest, NamesTheFieldThatIsWrong) {
  auto with = [&](size_t offset, uint64_t value, size_t width) {
    std::vector<uint8_t> b = blob_;
    put(b, offset, value, width);
    return b;
  };
  EXPECT_TRUE(fails_with(parse_bytes(with(kMagicOffset, 0x42564F46, 4)), "magic"));
  EXPECT_TRUE(fails_with(parse_bytes(with(kMajorOffset, 2, 2)), "major version 2"));
  EXPECT_TRUE(fails_with(parse_bytes(with(kSectionCountOffset, 0, 4)), "section count 0"));
  EXPECT_TRUE(fails_with(parse_bytes(with(kSectionCountOffset, kMaxSections + 1, 4)), "section count 65"));
  EXPECT_TRUE(fails_with(parse_bytes(with(kSectionCountOffset, 3, 4)), "header size"));
  EXPECT_TRUE(fails_with(parse_bytes(with(kHeaderSizeOffset, 81, 4)), "header size 81"));
  EXPECT_TRUE(fails_with(parse_bytes(with(kTotalSizeOffset, blob_.size() + 1, 8)), "header says"));
  EXPECT_TRUE(fails_with(parse_bytes(with(kFlagsOffset, 2, 4)), "unknown flags value 2"));  // bit 0 is known
  EXPECT_TRUE(fails_with(parse_bytes(with(kMinorOffset, 3, 2)), "header checksum"));
  EXPECT_TRUE(fails_with(parse_bytes(with(entry_at(1) + kEntryLengthOffset, 3, 8)), "header checksum"));
}

TEST_F(DelegateBlobTest, RefusesEverySingleBitFlipInTheHeaderAndTable) {
  const size_t header_size = kFixedHeaderSize + 2 * kEntrySize;
  for (size_t bit = 0; bit < header_size * 8; ++bit) {
    std::vector<uint8_t> damaged = blob_;
    damaged[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    ASSERT_TRUE(fails(parse_bytes(damaged))) << "byte " << bit / 8 << ", bit " << bit % 8;
  }
}

// With the header CRC recomputed, a changed entry still has to be caught by the rule it breaks.
TEST_F(DelegateBlobTest, RefusesAChangedEntryEvenWhenTheHeaderIsResealed) {
  struct Case {
    std::string name;
    size_t offset;
    size_t width;
    uint64_t value;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"xml crc", entry_at(0) + kEntryCrcOffset, 4, 0, "checksum mismatch"},
      {"weights crc", entry_at(1) + kEntryCrcOffset, 4, 0, "checksum mismatch"},
      {"xml offset misaligned", entry_at(0) + kEntryOffsetOffset, 8, payload_offset(0) + 1, "not a multiple of 64"},
      {"xml offset onto weights", entry_at(0) + kEntryOffsetOffset, 8, payload_offset(1), "checksum mismatch"},
      {"xml offset inside header", entry_at(0) + kEntryOffsetOffset, 8, 0, "outside the payload area"},
      {"weights past the end", entry_at(1) + kEntryOffsetOffset, 8, payload_offset(1) + 64, "outside the payload area"},
      {"xml shorter", entry_at(0) + kEntryLengthOffset, 8, xml_.size() - 1, "checksum mismatch"},
      {"weights longer", entry_at(1) + kEntryLengthOffset, 8, weights_.size() + 1, "outside the payload area"},
      {"xml as weights", entry_at(0) + kEntryKindOffset, 4, kWeightsKind, "more than one IR weights section"},
      {"weights as xml", entry_at(1) + kEntryKindOffset, 4, kXmlKind, "more than one IR XML section"},
      {"xml as unknown", entry_at(0) + kEntryKindOffset, 4, 99, "no IR XML section"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<uint8_t> damaged = blob_;
    put(damaged, c.offset, c.value, c.width);
    reseal_header(damaged);
    EXPECT_TRUE(fails_with(parse_bytes(damaged), c.expected));
  }
}

// ---------------------------------------------------------------------------------------------
// Truncation and padding

TEST_F(DelegateBlobTest, RefusesEveryTruncationWithoutReadingPastTheEnd) {
  for (size_t length = 0; length < blob_.size(); ++length) {
    // An exactly sized heap copy, so AddressSanitizer reports any read past the prefix.
    std::unique_ptr<uint8_t[]> prefix(new uint8_t[length]);
    if (length > 0) std::memcpy(prefix.get(), blob_.data(), length);
    ASSERT_TRUE(fails(parse(prefix.get(), length))) << "length " << length;
  }
}

TEST_F(DelegateBlobTest, RefusesEveryTruncationOfAModelWithoutWeights) {
  const std::vector<uint8_t> blob = build({xml_, {}});
  for (size_t length = 0; length < blob.size(); ++length) {
    std::unique_ptr<uint8_t[]> prefix(new uint8_t[length]);
    if (length > 0) std::memcpy(prefix.get(), blob.data(), length);
    ASSERT_TRUE(fails(parse(prefix.get(), length))) << "length " << length;
  }
}

TEST_F(DelegateBlobTest, RefusesANullBuffer) {
  EXPECT_TRUE(fails_with(parse(nullptr, 0), "null buffer"));
  EXPECT_TRUE(fails_with(parse(nullptr, 4096), "null buffer"));
}

TEST_F(DelegateBlobTest, RefusesAHeaderThatClaimsMoreBytesThanTheBlob) {
  // 32 bytes whose header promises one section (a 56-byte header) and a 32-byte total size.
  std::vector<uint8_t> bytes(kFixedHeaderSize, 0);
  std::memcpy(bytes.data(), kMagic, sizeof(kMagic));
  put(bytes, kMajorOffset, kMajorVersion, 2);
  put(bytes, kHeaderSizeOffset, kFixedHeaderSize + kEntrySize, 4);
  put(bytes, kSectionCountOffset, 1, 4);
  put(bytes, kTotalSizeOffset, bytes.size(), 8);
  put(bytes, kHeaderCrcOffset, crc32(bytes.data(), bytes.size()), 4);
  std::unique_ptr<uint8_t[]> exact(new uint8_t[bytes.size()]);
  std::memcpy(exact.get(), bytes.data(), bytes.size());
  EXPECT_TRUE(fails_with(parse(exact.get(), bytes.size()), "exceeds the blob"));
}

TEST_F(DelegateBlobTest, RefusesTrailingBytes) {
  std::vector<uint8_t> padded = blob_;
  padded.push_back(0);
  EXPECT_TRUE(fails_with(parse_bytes(padded), "padded"));
}

// ---------------------------------------------------------------------------------------------
// Damage to payloads

TEST_F(DelegateBlobTest, RefusesAFlippedByteInTheXml) {
  for (size_t i = 0; i < xml_.size(); ++i) {
    std::vector<uint8_t> damaged = blob_;
    damaged[payload_offset(0) + i] ^= 0x01;
    ASSERT_TRUE(fails_with(parse_bytes(damaged), "section 0 (kind 1) checksum mismatch")) << "xml byte " << i;
  }
}

TEST_F(DelegateBlobTest, RefusesAFlippedByteInTheWeights) {
  for (size_t i : {size_t{0}, size_t{1}, weights_.size() / 2, weights_.size() - 1}) {
    std::vector<uint8_t> damaged = blob_;
    damaged[payload_offset(1) + i] ^= 0x80;
    ASSERT_TRUE(fails_with(parse_bytes(damaged), "section 1 (kind 2) checksum mismatch")) << "weights byte " << i;
  }
}

// Padding between payloads belongs to no section and is not checksummed (writers fill it with
// zeros). Documented here so a change to that rule is a deliberate one.
TEST_F(DelegateBlobTest, DoesNotCheckTheAlignmentPadding) {
  const size_t padding = payload_offset(0) + xml_.size();
  ASSERT_LT(padding, payload_offset(1));
  std::vector<uint8_t> changed = blob_;
  changed[padding] = 0xAA;
  EXPECT_TRUE(succeeds(parse_bytes(changed)));
}

// ---------------------------------------------------------------------------------------------
// Well-sealed blobs that break a structural rule

TEST_F(DelegateBlobTest, RefusesOverlappingSections) {
  const std::vector<uint8_t> xml(100, 'x');  // [128, 228)
  const std::vector<uint8_t> blob = serialise(
      Layout{1, 0, 0, {Section{kXmlKind, 128, xml}, Section{kWeightsKind, 192, make_weights(64)}}});
  EXPECT_TRUE(fails_with(parse_bytes(blob), "section 1 (kind 2) overlaps section 0"));
}

TEST_F(DelegateBlobTest, RefusesTwoSectionsAtTheSameOffset) {
  const std::vector<uint8_t> blob = serialise(
      Layout{1, 0, 0, {Section{kXmlKind, 128, bytes_of(xml_)}, Section{99, 128, {}, uint64_t{10}}}});
  EXPECT_TRUE(fails_with(parse_bytes(blob), "overlaps section 0"));
}

TEST_F(DelegateBlobTest, AcceptsAnEmptySectionAtTheOffsetOfAnother) {
  // An empty section occupies no bytes, so it overlaps nothing.
  const std::vector<uint8_t> blob = serialise(
      Layout{1, 0, 0, {Section{kXmlKind, 128, bytes_of(xml_)}, Section{kWeightsKind, 128, {}}}});
  const ParseResult result = parse_bytes(blob);
  ASSERT_TRUE(succeeds(result));
  EXPECT_EQ(result.blob->ir_weights.size, 0u);
}

TEST_F(DelegateBlobTest, RefusesAMisalignedSectionOffset) {
  const std::vector<uint8_t> blob = serialise(Layout{1, 0, 0, {Section{kXmlKind, 96, bytes_of(xml_)}}});
  EXPECT_TRUE(fails_with(parse_bytes(blob), "starts at 96, not a multiple of 64"));
}

TEST_F(DelegateBlobTest, RefusesASectionWhoseEndOverflows64Bits) {
  // 256 + (2^64 - 256) wraps to 0: a naive `offset + length <= size` check would pass it.
  const std::vector<uint8_t> blob = serialise(Layout{
      1, 0, 0, {Section{kXmlKind, 128, bytes_of(xml_)}, Section{kWeightsKind, 256, {}, kU64Max - 255}}});
  EXPECT_TRUE(fails_with(parse_bytes(blob), "outside the payload area"));
}

TEST_F(DelegateBlobTest, RefusesASectionWhoseOffsetIsNearTheTopOf64Bits) {
  const std::vector<uint8_t> blob = serialise(Layout{
      1, 0, 0, {Section{kXmlKind, 128, bytes_of(xml_)}, Section{kWeightsKind, kU64Max - 63, {}, uint64_t{64}}}});
  EXPECT_TRUE(fails_with(parse_bytes(blob), "outside the payload area"));
}

TEST_F(DelegateBlobTest, RefusesASectionStartingInsideTheHeader) {
  const std::vector<uint8_t> blob = serialise(Layout{1, 0, 0, {Section{kXmlKind, 0, {}, uint64_t{16}}}});
  EXPECT_TRUE(fails_with(parse_bytes(blob), "outside the payload area"));
}

TEST_F(DelegateBlobTest, RefusesTwoXmlSections) {
  const std::vector<uint8_t> blob =
      serialise(Layout{1, 0, 0, {Section{kXmlKind, 128, bytes_of(xml_)}, Section{kXmlKind, 256, bytes_of(xml_)}}});
  EXPECT_TRUE(fails_with(parse_bytes(blob), "more than one IR XML section"));
}

TEST_F(DelegateBlobTest, RefusesTwoWeightsSections) {
  const std::vector<uint8_t> blob = serialise(Layout{1, 0, 0,
                                                     {Section{kXmlKind, 128, bytes_of(xml_)},
                                                      Section{kWeightsKind, 256, make_weights(8)},
                                                      Section{kWeightsKind, 320, make_weights(8)}}});
  EXPECT_TRUE(fails_with(parse_bytes(blob), "more than one IR weights section"));
}

TEST_F(DelegateBlobTest, RefusesABlobWithoutAnXmlSection) {
  const std::vector<uint8_t> blob = serialise(Layout{1, 0, 0, {Section{kWeightsKind, 64, weights_}}});
  EXPECT_TRUE(fails_with(parse_bytes(blob), "no IR XML section"));
}

TEST_F(DelegateBlobTest, RefusesAnEmptyXmlSection) {
  const std::vector<uint8_t> blob =
      serialise(Layout{1, 0, 0, {Section{kXmlKind, 128, {}}, Section{kWeightsKind, 128, weights_}}});
  EXPECT_TRUE(fails_with(parse_bytes(blob), "the IR XML section is empty"));
}

TEST_F(DelegateBlobTest, RefusesMajorVersionTwo) {
  const std::vector<uint8_t> blob = serialise(Layout{2, 0, 0, {Section{kXmlKind, 64, bytes_of(xml_)}}});
  EXPECT_TRUE(fails_with(parse_bytes(blob), "format major version 2 is not supported"));
}

TEST_F(DelegateBlobTest, RefusesMajorVersionZero) {
  const std::vector<uint8_t> blob = serialise(Layout{0, 0, 0, {Section{kXmlKind, 64, bytes_of(xml_)}}});
  EXPECT_TRUE(fails_with(parse_bytes(blob), "format major version 0 is not supported"));
}

TEST_F(DelegateBlobTest, RefusesNonZeroFlags) {
  const std::vector<uint8_t> blob = serialise(Layout{1, 0, 4, {Section{kXmlKind, 64, bytes_of(xml_)}}});
  EXPECT_TRUE(fails_with(parse_bytes(blob), "unknown flags"));
}

TEST_F(DelegateBlobTest, RefusesMoreThanTheMaximumNumberOfSections) {
  Layout layout{1, 0, 0, {Section{kXmlKind, 0, bytes_of(xml_)}}};
  for (uint32_t i = 1; i <= kMaxSections; ++i) layout.sections.push_back(Section{99, 0, {}});
  const uint64_t payload_start = (kFixedHeaderSize + layout.sections.size() * kEntrySize + 63) / 64 * 64;
  for (Section& s : layout.sections) s.offset = payload_start;
  EXPECT_TRUE(fails_with(parse_bytes(serialise(layout)), "section count 65 is outside 1..64"));

  layout.sections.pop_back();  // exactly the maximum is fine
  for (Section& s : layout.sections) s.offset = (kFixedHeaderSize + layout.sections.size() * kEntrySize + 63) / 64 * 64;
  EXPECT_TRUE(succeeds(parse_bytes(serialise(layout))));
}

// ---------------------------------------------------------------------------------------------
// Forward compatibility

TEST_F(DelegateBlobTest, IgnoresASectionOfAnUnknownKind) {
  const std::vector<uint8_t> blob = serialise(Layout{1, 0, 0,
                                                     {Section{kXmlKind, 128, bytes_of(xml_)},
                                                      Section{99, 256, bytes_of("from a newer writer")},
                                                      Section{kWeightsKind, 320, weights_}}});
  const ParseResult result = parse_bytes(blob);
  ASSERT_TRUE(succeeds(result));
  EXPECT_EQ(text_of(result.blob->ir_xml), xml_);
  EXPECT_EQ(bytes_of(result.blob->ir_weights), weights_);
}

TEST_F(DelegateBlobTest, AcceptsANewerMinorVersionAndReportsIt) {
  const std::vector<uint8_t> blob = serialise(
      Layout{1, 7, 0, {Section{98, 128, bytes_of("from a newer writer")}, Section{kXmlKind, 192, bytes_of(xml_)}}});
  const ParseResult result = parse_bytes(blob);
  ASSERT_TRUE(succeeds(result));
  EXPECT_EQ(result.blob->minor_version, 7);
  EXPECT_EQ(text_of(result.blob->ir_xml), xml_);
  EXPECT_EQ(result.blob->ir_weights.size, 0u);
}

TEST_F(DelegateBlobTest, StillChecksThePayloadOfAnUnknownKind) {
  std::vector<uint8_t> blob = serialise(
      Layout{1, 0, 0, {Section{kXmlKind, 128, bytes_of(xml_)}, Section{99, 256, bytes_of("from a newer writer")}}});
  blob[256] ^= 0x01;
  EXPECT_TRUE(fails_with(parse_bytes(blob), "section 1 (kind 99) checksum mismatch"));
}

// ---------------------------------------------------------------------------------------------
// Precompiled models (1.1)

TEST_F(DelegateBlobTest, RoundTripsPrecompiledModels) {
  const std::vector<PrecompiledInput> models = {
      {"CPU", "2026.4.1-x", {{"INFERENCE_PRECISION_HINT", "f32"}, {"PERFORMANCE_HINT", "LATENCY"}}, {9, 8, 7}},
      {"GPU", "2026.4.1-x", {}, std::vector<uint8_t>(100, 5)},
  };
  const std::vector<uint8_t> blob = build({xml_, weights_, models});
  const ParseResult result = parse_bytes(blob);
  ASSERT_TRUE(succeeds(result));
  ASSERT_EQ(result.blob->precompiled.size(), 2u);
  const PrecompiledModel& cpu = result.blob->precompiled[0];
  EXPECT_EQ(cpu.device, "CPU");
  EXPECT_EQ(cpu.openvino_version, "2026.4.1-x");
  EXPECT_EQ(cpu.properties, models[0].properties);
  EXPECT_EQ(bytes_of(cpu.model), models[0].model);
  EXPECT_EQ(bytes_of(result.blob->precompiled[1].model), models[1].model);
  EXPECT_EQ(text_of(result.blob->ir_xml), xml_);
}

// Pinned in tests/python/container/test_blob_format.py too: both writers lay out precompiled models alike.
TEST_F(DelegateBlobTest, BuildsTheGoldenPrecompiledBytesSharedWithThePythonWriter) {
  const std::vector<uint8_t> blob =
      build({"<net/>", {1, 2, 3},
            {{"CPU", "2026.4.1-x", {{"INFERENCE_PRECISION_HINT", "f32"}, {"PERFORMANCE_HINT", "LATENCY"}},
              {'c', 'o', 'm', 'p', 'i', 'l', 'e', 'd'}}}});
  EXPECT_EQ(crc32(blob.data(), blob.size()), kGoldenPrecompiledCrc) << "size " << blob.size();
}

// Pinned in tests/python/container/test_blob_format.py too: both writers lay out input arguments alike.
TEST_F(DelegateBlobTest, BuildsTheGoldenInputArgumentsBytesSharedWithThePythonWriter) {
  const std::vector<uint8_t> blob = build({"<net/>", {1, 2, 3}, {}, InputArguments{5, {0, 2, 4}}});
  EXPECT_EQ(blob.size(), 276u);
  EXPECT_EQ(crc32(blob.data(), blob.size()), kGoldenInputArgumentsCrc);
}

TEST_F(DelegateBlobTest, RoundTripsInputArgumentsAndTheirAbsence) {
  ParseResult with = parse_bytes(build({xml_, weights_, {}, InputArguments{16, {0, 2, 3, 4, 5}}}));
  ASSERT_TRUE(succeeds(with));
  EXPECT_EQ(with.blob->minor_version, 2);
  ASSERT_TRUE(with.blob->input_arguments.has_value());
  EXPECT_EQ(with.blob->input_arguments->call_inputs, 16u);
  EXPECT_EQ(with.blob->input_arguments->of_ir_input, (std::vector<uint32_t>{0, 2, 3, 4, 5}));
  ParseResult none_read = parse_bytes(build({xml_, weights_, {}, InputArguments{2, {}}}));
  ASSERT_TRUE(succeeds(none_read));
  ASSERT_TRUE(none_read.blob->input_arguments.has_value());  // reads no input: not "every input"
  EXPECT_TRUE(none_read.blob->input_arguments->of_ir_input.empty());
  ParseResult without = parse_bytes(build({xml_, weights_}));
  ASSERT_TRUE(succeeds(without));
  EXPECT_FALSE(without.blob->input_arguments.has_value());
}

TEST_F(DelegateBlobTest, RefusesMalformedInputArgumentsSections) {
  const uint64_t after_xml = (128 + xml_.size() + 63) / 64 * 64;
  auto with_payloads = [&](const std::vector<std::vector<uint32_t>>& payloads) {
    Layout layout{1, 2, 0, {Section{kXmlKind, 128, bytes_of(xml_)}}};
    uint64_t offset = after_xml;
    for (const std::vector<uint32_t>& words : payloads) {
      std::vector<uint8_t> bytes(words.size() * 4);
      for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(words[i / 4] >> (8 * (i % 4)));
      layout.sections.push_back(Section{kInputArgumentsKind, offset, bytes});
      offset += 64;
    }
    return parse_bytes(serialise(layout));
  };
  EXPECT_TRUE(succeeds(with_payloads({{3, 2, 0, 2}})));
  EXPECT_TRUE(fails_with(with_payloads({{3}}), "not two counts"));
  EXPECT_TRUE(fails_with(with_payloads({{3, 5, 0, 1}}), "declares 5 IR inputs but holds 2"));
  EXPECT_TRUE(fails_with(with_payloads({{3, 2, 1, 1}}), "not increasing below 3"));
  EXPECT_TRUE(fails_with(with_payloads({{3, 2, 2, 1}}), "not increasing below 3"));
  EXPECT_TRUE(fails_with(with_payloads({{3, 1, 3}}), "maps IR input 0 to call input 3"));
  EXPECT_TRUE(fails_with(with_payloads({{3, 1, 0}, {3, 1, 1}}), "more than one input arguments section"));
}

// Pinned in tests/python/container/test_blob_format.py too: both writers lay out named weights alike.
TEST_F(DelegateBlobTest, BuildsTheGoldenNamedWeightsBytesSharedWithThePythonWriter) {
  const std::vector<uint8_t> blob = build({"<net/>", {}, {}, std::nullopt, NamedWeights{"weights.k", 3, 0x55bc801d}});
  EXPECT_EQ(blob.size(), 217u);
  EXPECT_EQ(crc32(blob.data(), blob.size()), kGoldenNamedWeightsCrc);
}

TEST_F(DelegateBlobTest, RoundTripsNamedWeightsWithTheirFlag) {
  const std::vector<uint8_t> blob =
      build({xml_, {}, {}, InputArguments{2, {1}}, NamedWeights{"executorch_openvino.weights.ab", 1u << 30, 7}});
  EXPECT_EQ(get(blob, kFlagsOffset, 4), kFlagNamedWeights);
  ParseResult parsed = parse_bytes(blob);
  ASSERT_TRUE(succeeds(parsed));
  EXPECT_EQ(parsed.blob->minor_version, 3);
  ASSERT_TRUE(parsed.blob->named_weights.has_value());
  EXPECT_EQ(parsed.blob->named_weights->key, "executorch_openvino.weights.ab");
  EXPECT_EQ(parsed.blob->named_weights->size, 1u << 30);
  EXPECT_EQ(parsed.blob->named_weights->crc, 7u);
  EXPECT_EQ(parsed.blob->ir_weights.size, 0u);
  EXPECT_TRUE(parsed.blob->input_arguments.has_value());
  EXPECT_FALSE(parse_bytes(blob_).blob->named_weights.has_value());
  EXPECT_EQ(get(blob_, kFlagsOffset, 4), 0u);
}

TEST_F(DelegateBlobTest, RefusesMalformedNamedWeightsSections) {
  auto named = [](uint64_t size, uint32_t key_size, const std::string& key) {
    std::vector<uint8_t> p(16, 0);
    put(p, 0, size, 8);
    put(p, 8, 0x1234, 4);
    put(p, 12, key_size, 4);
    p.insert(p.end(), key.begin(), key.end());
    return p;
  };
  const uint64_t after_xml = (192 + xml_.size() + 63) / 64 * 64;
  auto with = [&](uint32_t flags, const std::vector<std::vector<uint8_t>>& payloads, bool weights = false) {
    Layout layout{1, 3, flags, {Section{kXmlKind, 192, bytes_of(xml_)}}};
    uint64_t offset = after_xml;
    for (const std::vector<uint8_t>& payload : payloads) {
      layout.sections.push_back(Section{kNamedWeightsKind, offset, payload});
      offset += 128;
    }
    if (weights) layout.sections.push_back(Section{kWeightsKind, offset, {1, 2, 3}});
    return parse_bytes(serialise(layout));
  };
  EXPECT_TRUE(succeeds(with(kFlagNamedWeights, {named(10, 3, "abc")})));
  EXPECT_TRUE(fails_with(with(kFlagNamedWeights, {{1, 2, 3}}), "too short"));
  EXPECT_TRUE(fails_with(with(kFlagNamedWeights, {named(10, 0, "")}), "declares a key of 0 bytes"));
  EXPECT_TRUE(fails_with(with(kFlagNamedWeights, {named(10, 4, "abc")}), "declares a key of 4 bytes in 3"));
  EXPECT_TRUE(fails_with(with(kFlagNamedWeights, {named(10, 3, std::string("a\0c", 3))}), "NUL"));
  EXPECT_TRUE(fails_with(with(kFlagNamedWeights, {named(10, 1, "a"), named(10, 1, "b")}),
                         "more than one named weights section"));
  EXPECT_TRUE(fails_with(with(0, {named(10, 3, "abc")}), "without the flag"));
  EXPECT_TRUE(fails_with(with(kFlagNamedWeights, {}), "no named weights section"));
  EXPECT_TRUE(fails_with(with(kFlagNamedWeights, {named(10, 3, "abc")}, true), "also names weights"));
}

// Pinned in tests/python/container/test_blob_format.py too: both writers lay out input bounds alike.
TEST_F(DelegateBlobTest, BuildsTheGoldenInputBoundsBytesSharedWithThePythonWriter) {
  const std::vector<uint8_t> blob =
      build({"<net/>", {1, 2, 3}, {}, std::nullopt, std::nullopt, {{0, 0, 96}, {2, -4096, 4096}}});
  EXPECT_EQ(blob.size(), 312u);
  EXPECT_EQ(crc32(blob.data(), blob.size()), kGoldenInputBoundsCrc);
}

TEST_F(DelegateBlobTest, RoundTripsInputBoundsAndTheirAbsence) {
  ParseResult with = parse_bytes(build({xml_, weights_, {}, InputArguments{4, {0, 1, 3}}, std::nullopt,
                                       {{0, 0, 96}, {2, INT64_MIN, INT64_MAX}}}));
  ASSERT_TRUE(succeeds(with));
  EXPECT_EQ(with.blob->minor_version, 4);
  ASSERT_EQ(with.blob->input_bounds.size(), 2u);
  EXPECT_EQ(with.blob->input_bounds[0].input, 0u);
  EXPECT_EQ(with.blob->input_bounds[0].low, 0);
  EXPECT_EQ(with.blob->input_bounds[0].high, 96);
  EXPECT_EQ(with.blob->input_bounds[1].input, 2u);
  EXPECT_EQ(with.blob->input_bounds[1].low, INT64_MIN);
  EXPECT_EQ(with.blob->input_bounds[1].high, INT64_MAX);
  EXPECT_TRUE(with.blob->input_arguments.has_value());
  EXPECT_TRUE(parse_bytes(build({xml_, weights_})).blob->input_bounds.empty());
}

TEST_F(DelegateBlobTest, RefusesMalformedInputBoundsSections) {
  struct Bound {
    uint32_t input;
    int64_t low, high;
  };
  auto bounds = [](uint32_t count, const std::vector<Bound>& entries) {
    std::vector<uint8_t> p(8 + 24 * entries.size(), 0);
    put(p, 0, count, 4);
    for (size_t i = 0; i < entries.size(); ++i) {
      put(p, 8 + 24 * i, entries[i].input, 4);
      put(p, 16 + 24 * i, static_cast<uint64_t>(entries[i].low), 8);
      put(p, 24 + 24 * i, static_cast<uint64_t>(entries[i].high), 8);
    }
    return p;
  };
  auto with = [&](const std::vector<std::vector<uint8_t>>& payloads) {
    return with_sections(4, kInputBoundsKind, payloads);
  };
  EXPECT_TRUE(succeeds(with({bounds(2, {{0, 0, 5}, {3, -1, 1}})})));
  EXPECT_TRUE(fails_with(with({{1, 0, 0}}), "not a count and a list of 24-byte bounds"));
  EXPECT_TRUE(fails_with(with({bounds(3, {{0, 0, 5}, {3, -1, 1}})}), "declares 3 bounds but holds 2"));
  EXPECT_TRUE(fails_with(with({bounds(2, {{3, 0, 5}, {3, -1, 1}})}), "bounds input 3 after input 3"));
  EXPECT_TRUE(fails_with(with({bounds(1, {{0, 5, 5}})}), "to an empty range [5, 5)"));
  EXPECT_TRUE(fails_with(with({bounds(1, {{0, 0, 5}}), bounds(1, {{1, 0, 5}})}), "more than one input bounds section"));
}

// ---------------------------------------------------------------------------------------------
// Grown caches (1.5)

// Pinned in tests/python/container/test_blob_format.py too: both writers say it alike.
TEST_F(DelegateBlobTest, BuildsTheGoldenGrownCachesBytesSharedWithThePythonWriter) {
  const std::vector<uint8_t> blob = build({"<net/>", {1, 2, 3}, {}, std::nullopt, std::nullopt, {}, 3});
  EXPECT_EQ(blob.size(), 264u);
  EXPECT_EQ(crc32(blob.data(), blob.size()), kGoldenGrownCachesCrc);
}

// A blob written before 1.5 (no such section) reads as saying nothing: the runtime then runs its
// caches as exported under attention=auto (docs/delegate-blob-format.md).
TEST_F(DelegateBlobTest, RoundTripsGrownCachesAndTheirAbsence) {
  ParseResult with = parse_bytes(build({xml_, weights_, {}, InputArguments{4, {0, 1, 3}}, std::nullopt, {}, 12}));
  ASSERT_TRUE(succeeds(with));
  EXPECT_EQ(with.blob->minor_version, 5);
  EXPECT_EQ(with.blob->grown_caches, 12u);
  EXPECT_TRUE(with.blob->input_arguments.has_value());
  ParseResult without = parse_bytes(build({xml_, weights_, {}, InputArguments{4, {0, 1, 3}}}));
  ASSERT_TRUE(succeeds(without));
  EXPECT_EQ(without.blob->minor_version, 2);
  EXPECT_EQ(without.blob->grown_caches, 0u);
}

TEST_F(DelegateBlobTest, RefusesMalformedGrownCachesSections) {
  auto grown = [](uint32_t count) {
    std::vector<uint8_t> p(8, 0);
    put(p, 0, count, 4);
    return p;
  };
  auto with = [&](const std::vector<std::vector<uint8_t>>& payloads) {
    return with_sections(5, kGrownCachesKind, payloads);
  };
  EXPECT_TRUE(succeeds(with({grown(2)})));
  EXPECT_TRUE(fails_with(with({{2, 0, 0, 0}}), "grown caches section 1 (kind 9) is 4 bytes, not a count and a zero"));
  EXPECT_TRUE(fails_with(with({grown(0)}), "counts no caches"));
  EXPECT_TRUE(fails_with(with({grown(1), grown(1)}), "more than one grown caches section"));
}

TEST_F(DelegateBlobTest, RefusesMalformedPrecompiledSections) {
  auto with_payload = [&](const std::vector<uint8_t>& payload) {
    return parse_bytes(serialise(
        Layout{1, 1, 0,
               {Section{kXmlKind, 128, bytes_of(xml_)},
                Section{kPrecompiledKind, (128 + xml_.size() + 63) / 64 * 64, payload}}}));
  };
  auto payload = [](const std::string& meta, size_t declared, const std::vector<uint8_t>& model) {
    std::vector<uint8_t> p(4, 0);
    for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(declared >> (8 * i));
    p.insert(p.end(), meta.begin(), meta.end());
    p.resize((p.size() + 63) / 64 * 64, 0);
    p.insert(p.end(), model.begin(), model.end());
    return p;
  };
  const std::string good = "device=CPU\nopenvino=2026.4.1\n";
  EXPECT_TRUE(succeeds(with_payload(payload(good, good.size(), {1}))));
  EXPECT_TRUE(fails_with(with_payload({1, 0}), "too short"));
  EXPECT_TRUE(fails_with(with_payload(payload(good, 100000, {1})), "declares 100000 bytes of metadata"));
  EXPECT_TRUE(fails_with(with_payload(payload(good, good.size(), {})), "no model bytes"));
  const std::string no_device = "openvino=2026.4.1\n";
  EXPECT_TRUE(fails_with(with_payload(payload(no_device, no_device.size(), {1})), "names no device"));
  const std::string no_version = "device=CPU\n";
  EXPECT_TRUE(fails_with(with_payload(payload(no_version, no_version.size(), {1})), "names no OpenVINO version"));
  const std::string not_text = std::string("device=CPU\x01\nopenvino=1\n");
  EXPECT_TRUE(fails_with(with_payload(payload(not_text, not_text.size(), {1})), "not text"));
  const std::string no_equals = "device=CPU\nopenvino=1\njunk\n";
  EXPECT_TRUE(fails_with(with_payload(payload(no_equals, no_equals.size(), {1})), "without key=value"));
}

}  // namespace
}  // namespace executorch_openvino::blob
