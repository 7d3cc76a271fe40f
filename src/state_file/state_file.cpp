#include "state_file/state_file.h"

#include <cstring>

#include "blob/crc32.h"

namespace executorch_openvino::state_file {
namespace {

// Little-endian fields: the header (magic, version, payload size, payload CRC-32), then the payload.
constexpr size_t kHeader = sizeof(kMagic) + 4 + 8 + 4;
// Bounds a reader keeps to before allocating, whatever a file says.
constexpr uint64_t kMaxCount = 1u << 16;
constexpr uint64_t kMaxForm = 4096;

void put(std::vector<uint8_t>& out, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

void put_bytes(std::vector<uint8_t>& out, const void* data, size_t size) {
  put(out, size, 8);
  const auto* begin = static_cast<const uint8_t*>(data);
  out.insert(out.end(), begin, begin + size);
}

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool get(uint64_t& value, size_t bytes) {
    if (size_ - at_ < bytes) return fail();
    value = 0;
    for (size_t i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(data_[at_ + i]) << (8 * i);
    at_ += bytes;
    return true;
  }
  bool get_bytes(std::vector<uint8_t>& out, uint64_t limit) {
    uint64_t size = 0;
    if (!get(size, 8)) return false;
    if (size > limit || size > size_ - at_) return fail();
    out.assign(data_ + at_, data_ + at_ + size);
    at_ += size;
    return true;
  }
  bool failed() const { return failed_; }
  size_t left() const { return size_ - at_; }

 private:
  bool fail() {
    failed_ = true;
    return false;
  }
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
  bool failed_ = false;
};

Failure refused(const std::string& why) {
  return Failure{FailureKind::kInvalidArgument, "not a usable state file: " + why};
}

}  // namespace

std::vector<uint8_t> encode(const StateFile& state) {
  std::vector<uint8_t> payload;
  put(payload, state.partitions.size(), 4);
  for (const PartitionState& partition : state.partitions) {
    put(payload, partition.program, 8);
    put_bytes(payload, partition.form.data(), partition.form.size());
    put(payload, static_cast<uint64_t>(partition.length), 8);
    put(payload, partition.parts.size(), 4);
    for (const std::vector<uint8_t>& part : partition.parts) put_bytes(payload, part.data(), part.size());
  }
  put_bytes(payload, state.application.data(), state.application.size());

  std::vector<uint8_t> out(kMagic, kMagic + sizeof(kMagic));
  put(out, kVersion, 4);
  put(out, payload.size(), 8);
  put(out, blob::crc32(payload.data(), payload.size()), 4);
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

Outcome<StateFile> decode(const uint8_t* data, size_t size) {
  if (size < sizeof(kMagic) || std::memcmp(data, kMagic, sizeof(kMagic)) != 0)
    return refused("it does not begin as one (" + std::to_string(size) + " bytes)");
  if (size < kHeader) return refused("it ends inside its header (a truncated file)");
  Reader header(data + sizeof(kMagic), kHeader - sizeof(kMagic));
  uint64_t version = 0, payload_size = 0, crc = 0;
  header.get(version, 4), header.get(payload_size, 8), header.get(crc, 4);
  if (version != kVersion)
    return refused("format version " + std::to_string(version) + ", this library reads " + std::to_string(kVersion));
  if (payload_size != size - kHeader)
    return refused("it holds " + std::to_string(size - kHeader) + " bytes after its header, which says " +
                   std::to_string(payload_size) + " (a truncated or extended file)");
  const uint8_t* payload = data + kHeader;
  if (blob::crc32(payload, payload_size) != crc) return refused("its CRC-32 does not match its content (a damaged file)");

  // The CRC matched: what follows was written by encode(), but a reader still trusts no size.
  Reader in(payload, payload_size);
  StateFile state;
  uint64_t partitions = 0;
  if (!in.get(partitions, 4) || partitions > kMaxCount) return refused("a bad partition count");
  for (uint64_t p = 0; p < partitions; ++p) {
    PartitionState partition;
    std::vector<uint8_t> form;
    uint64_t length = 0, parts = 0;
    if (!in.get(partition.program, 8) || !in.get_bytes(form, kMaxForm) || !in.get(length, 8) || !in.get(parts, 4) ||
        parts > kMaxCount || length > (uint64_t{1} << 40))
      return refused("partition " + std::to_string(p) + " is cut short or malformed");
    partition.form.assign(form.begin(), form.end());
    partition.length = static_cast<int64_t>(length);
    partition.parts.resize(parts);
    for (std::vector<uint8_t>& part : partition.parts) {
      if (!in.get_bytes(part, in.left())) return refused("partition " + std::to_string(p) + "'s caches are cut short");
    }
    state.partitions.push_back(std::move(partition));
  }
  if (!in.get_bytes(state.application, in.left()) || in.left() != 0) return refused("its last section is malformed");
  return state;
}

}  // namespace executorch_openvino::state_file
