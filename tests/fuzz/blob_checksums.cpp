#include "blob_checksums.h"

#include <algorithm>

#include "blob/crc32.h"
#include "blob/delegate_blob.h"

namespace executorch_openvino::fuzz {
namespace {

using namespace executorch_openvino::blob;

uint64_t read_le(const uint8_t* p, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i) value = value << 8 | p[i];
  return value;
}

bool write_u32(uint8_t* p, uint32_t value) {
  bool changed = false;
  for (int i = 0; i < 4; ++i) {
    const auto byte = static_cast<uint8_t>(value >> (8 * i));
    changed |= p[i] != byte;
    p[i] = byte;
  }
  return changed;
}

}  // namespace

bool repair_checksums(std::vector<uint8_t>& blob) {
  const size_t size = blob.size();
  if (size < kFixedHeaderSize) return false;
  uint8_t* data = blob.data();
  bool changed = false;

  // Section CRCs first: the header CRC covers the table they live in.
  const uint64_t count = read_le(data + kSectionCountOffset, 4);
  const uint64_t entries_in_buffer = (size - kFixedHeaderSize) / kEntrySize;
  for (uint64_t i = 0; i < std::min<uint64_t>(count, entries_in_buffer); ++i) {
    uint8_t* entry = data + kFixedHeaderSize + i * kEntrySize;
    const uint64_t offset = read_le(entry + kEntryOffsetOffset, 8);
    const uint64_t length = read_le(entry + kEntryLengthOffset, 8);
    if (offset > size || length > size - offset) continue;
    changed |= write_u32(entry + kEntryCrcOffset, crc32(data + offset, static_cast<size_t>(length)));
  }

  const uint64_t header_size = read_le(data + kHeaderSizeOffset, 4);
  if (header_size >= kFixedHeaderSize && header_size <= size) {
    static const uint8_t kZero[4] = {0, 0, 0, 0};
    uint32_t crc = crc32(data, kHeaderCrcOffset);
    crc = crc32(kZero, sizeof(kZero), crc);
    crc = crc32(data + kFixedHeaderSize, static_cast<size_t>(header_size) - kFixedHeaderSize, crc);
    changed |= write_u32(data + kHeaderCrcOffset, crc);
  }
  return changed;
}

}  // namespace executorch_openvino::fuzz
