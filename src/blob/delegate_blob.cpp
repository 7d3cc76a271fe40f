#include "blob/delegate_blob.h"

#include <algorithm>
#include <cstring>

#include "blob/crc32.h"

namespace executorch_openvino::blob {
namespace {

uint16_t read_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
uint32_t read_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}
uint64_t read_u64(const uint8_t* p) { return read_u32(p) | static_cast<uint64_t>(read_u32(p + 4)) << 32; }

void write_u16(uint8_t* p, uint16_t v) {
  for (int i = 0; i < 2; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void write_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void write_u64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

size_t align_up(size_t value) { return (value + kPayloadAlignment - 1) / kPayloadAlignment * kPayloadAlignment; }

ParseResult fail(std::string message) { return ParseResult{std::nullopt, std::move(message)}; }

// CRC of the header and section table with the CRC field itself taken as zero.
uint32_t header_crc(const uint8_t* data, size_t header_size) {
  static const uint8_t kZero[4] = {0, 0, 0, 0};
  uint32_t crc = crc32(data, kHeaderCrcOffset);
  crc = crc32(kZero, 4, crc);
  return crc32(data + kFixedHeaderSize, header_size - kFixedHeaderSize, crc);
}

struct Entry {
  uint32_t kind;
  uint32_t crc;
  uint64_t offset;
  uint64_t length;
};

bool is_text(const uint8_t* data, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    if (data[i] < 0x20 && data[i] != '\n') return false;
  }
  return true;
}

// Reads a precompiled section's payload; returns the error text, empty on success.
std::string parse_precompiled(const Span& payload, PrecompiledModel& out) {
  if (payload.size < 4) return "is " + std::to_string(payload.size) + " bytes, too short for its metadata size";
  const uint32_t meta_size = read_u32(payload.data);
  if (meta_size > payload.size - 4) {
    return "declares " + std::to_string(meta_size) + " bytes of metadata in a " + std::to_string(payload.size) +
           "-byte payload";
  }
  const uint8_t* meta = payload.data + 4;
  if (!is_text(meta, meta_size)) return "has metadata that is not text";
  const size_t model_offset = align_up(4 + static_cast<size_t>(meta_size));
  if (model_offset >= payload.size) return "has no model bytes after its metadata";
  const std::string text(reinterpret_cast<const char*>(meta), meta_size);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    const size_t eq = line.find('=');
    if (eq == std::string::npos || eq == 0) {
      // At most the start of the line: the rest is the file's bytes, not something to log.
      const std::string shown = line.size() > 40 ? line.substr(0, 40) + "..." : line;
      return "has a metadata line without key=value: '" + shown + "'";
    }
    const std::string key = line.substr(0, eq);
    const std::string value = line.substr(eq + 1);
    if (key == "device") {
      out.device = value;
    } else if (key == "openvino") {
      out.openvino_version = value;
    } else if (key.rfind("property:", 0) == 0 && key.size() > 9) {
      out.properties.emplace_back(key.substr(9), value);
    }  // other keys: from a newer writer, ignored
  }
  if (out.device.empty()) return "names no device";
  if (out.openvino_version.empty()) return "names no OpenVINO version";
  out.model = Span{payload.data + model_offset, payload.size - model_offset};
  return {};
}

// Reads an input-arguments section's payload; returns the error text, empty on success.
std::string parse_input_arguments(const Span& payload, InputArguments& out) {
  if (payload.size < 8 || payload.size % 4 != 0) {
    return "is " + std::to_string(payload.size) + " bytes, not two counts and a list of 4-byte indices";
  }
  out.call_inputs = read_u32(payload.data);
  const uint32_t count = read_u32(payload.data + 4);
  if (count != (payload.size - 8) / 4) {
    return "declares " + std::to_string(count) + " IR inputs but holds " + std::to_string((payload.size - 8) / 4);
  }
  out.of_ir_input.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t index = read_u32(payload.data + 8 + 4 * static_cast<size_t>(i));
    if (index >= out.call_inputs || (i > 0 && index <= out.of_ir_input[i - 1])) {
      return "maps IR input " + std::to_string(i) + " to call input " + std::to_string(index) +
             ", not increasing below " + std::to_string(out.call_inputs);
    }
    out.of_ir_input[i] = index;
  }
  return {};
}

// Reads an input-bounds section's payload; returns the error text, empty on success.
std::string parse_input_bounds(const Span& payload, std::vector<InputBound>& out) {
  constexpr size_t kBoundSize = 24;
  if (payload.size < 8 || (payload.size - 8) % kBoundSize != 0) {
    return "is " + std::to_string(payload.size) + " bytes, not a count and a list of 24-byte bounds";
  }
  const uint32_t count = read_u32(payload.data);
  if (count != (payload.size - 8) / kBoundSize) {
    return "declares " + std::to_string(count) + " bounds but holds " + std::to_string((payload.size - 8) / kBoundSize);
  }
  out.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* entry = payload.data + 8 + kBoundSize * static_cast<size_t>(i);
    InputBound& bound = out[i];
    bound.input = read_u32(entry);
    bound.low = static_cast<int64_t>(read_u64(entry + 8));
    bound.high = static_cast<int64_t>(read_u64(entry + 16));
    if (i > 0 && bound.input <= out[i - 1].input) {
      return "bounds input " + std::to_string(bound.input) + " after input " + std::to_string(out[i - 1].input);
    }
    if (bound.low >= bound.high) {
      return "bounds input " + std::to_string(bound.input) + " to an empty range [" + std::to_string(bound.low) +
             ", " + std::to_string(bound.high) + ")";
    }
  }
  return {};
}

// Reads a named-weights section's payload; returns the error text, empty on success.
std::string parse_named_weights(const Span& payload, NamedWeights& out) {
  if (payload.size < 16) return "is " + std::to_string(payload.size) + " bytes, too short for a size, CRC and key";
  out.size = read_u64(payload.data);
  out.crc = read_u32(payload.data + 8);
  const uint32_t key_size = read_u32(payload.data + 12);
  if (key_size == 0 || key_size != payload.size - 16) {
    return "declares a key of " + std::to_string(key_size) + " bytes in " + std::to_string(payload.size - 16);
  }
  out.key.assign(reinterpret_cast<const char*>(payload.data + 16), key_size);
  if (out.key.find('\0') != std::string::npos) return "has a key with a NUL byte";
  return {};
}

// Reads a grown-caches section's payload; returns the error text, empty on success.
std::string parse_grown_caches(const Span& payload, uint32_t& count) {
  if (payload.size != 8) return "is " + std::to_string(payload.size) + " bytes, not a count and a zero";
  count = read_u32(payload.data);
  if (count == 0) return "counts no caches";
  return {};
}

// Reads the section of a kind a blob holds at most once into `slot` with `read` (one of the above);
// returns the error text, empty on success.
template <typename T, typename Read>
std::string read_once(std::optional<T>& slot, const char* name, const std::string& which, const Span& payload,
                      Read read) {
  if (slot) return std::string("more than one ") + name + " section";
  T value{};
  if (std::string error = read(payload, value); !error.empty()) return std::string(name) + " " + which + " " + error;
  slot = std::move(value);
  return {};
}

// The minor version that introduced a kind (docs/delegate-blob-format.md, Compatibility).
uint16_t minor_of(SectionKind kind) {
  switch (kind) {
    case SectionKind::kPrecompiled: return 1;
    case SectionKind::kInputArguments: return 2;
    case SectionKind::kNamedWeights: return 3;
    case SectionKind::kInputBounds: return 4;
    case SectionKind::kGrownCaches: return 5;
    default: return 1;
  }
}

}  // namespace

ParseResult parse(const void* data_in, size_t size) {
  const auto* data = static_cast<const uint8_t*>(data_in);
  if (data == nullptr) return fail("no blob (null buffer)");
  if (size < kFixedHeaderSize) {
    return fail("blob is " + std::to_string(size) + " bytes, shorter than the " +
                std::to_string(kFixedHeaderSize) + "-byte header");
  }
  if (std::memcmp(data + kMagicOffset, kMagic, sizeof(kMagic)) != 0) {
    return fail("bad magic: not an executorch_openvino delegate blob");
  }
  const uint16_t major = read_u16(data + kMajorOffset);
  if (major != kMajorVersion) {
    return fail("format major version " + std::to_string(major) + " is not supported (this runtime reads " +
                std::to_string(kMajorVersion) + ".x); re-export the model with a matching executorch_openvino");
  }
  const uint32_t count = read_u32(data + kSectionCountOffset);
  if (count == 0 || count > kMaxSections) {
    return fail("section count " + std::to_string(count) + " is outside 1.." + std::to_string(kMaxSections));
  }
  const uint32_t header_size = read_u32(data + kHeaderSizeOffset);
  const size_t expected_header = kFixedHeaderSize + static_cast<size_t>(count) * kEntrySize;
  if (header_size != expected_header) {
    return fail("header size " + std::to_string(header_size) + " does not match " + std::to_string(count) +
                " sections (expected " + std::to_string(expected_header) + ")");
  }
  const uint64_t total_size = read_u64(data + kTotalSizeOffset);
  if (total_size != size) {
    return fail("blob is " + std::to_string(size) + " bytes but its header says " + std::to_string(total_size) +
                " (truncated or padded)");
  }
  if (header_size > size) return fail("header of " + std::to_string(header_size) + " bytes exceeds the blob");
  const uint32_t flags = read_u32(data + kFlagsOffset);
  if ((flags & ~kKnownFlags) != 0) {
    return fail("unknown flags value " + std::to_string(flags) + " (this runtime knows " +
                std::to_string(kKnownFlags) + "); re-export the model with a matching executorch_openvino");
  }
  const uint32_t stored_crc = read_u32(data + kHeaderCrcOffset);
  if (header_crc(data, header_size) != stored_crc) return fail("header checksum mismatch: the blob is corrupt");

  std::vector<Entry> entries(count);
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* e = data + kFixedHeaderSize + static_cast<size_t>(i) * kEntrySize;
    entries[i] = Entry{read_u32(e + kEntryKindOffset), read_u32(e + kEntryCrcOffset),
                       read_u64(e + kEntryOffsetOffset), read_u64(e + kEntryLengthOffset)};
  }

  ParsedBlob parsed;
  parsed.minor_version = read_u16(data + kMinorOffset);
  bool have_xml = false;
  bool have_weights = false;
  std::optional<std::vector<InputBound>> bounds;
  std::optional<uint32_t> grown_caches;
  for (uint32_t i = 0; i < count; ++i) {
    const Entry& e = entries[i];
    const std::string which = "section " + std::to_string(i) + " (kind " + std::to_string(e.kind) + ")";
    // Range check that cannot overflow: offset within the blob first, then length within the rest.
    if (e.offset < header_size || e.offset > size || e.length > size - e.offset) {
      return fail(which + " spans [" + std::to_string(e.offset) + ", +" + std::to_string(e.length) +
                  ") outside the payload area [" + std::to_string(header_size) + ", " + std::to_string(size) + ")");
    }
    if (e.offset % kPayloadAlignment != 0) {
      return fail(which + " starts at " + std::to_string(e.offset) + ", not a multiple of " +
                  std::to_string(kPayloadAlignment));
    }
    for (uint32_t j = 0; j < i; ++j) {
      const Entry& other = entries[j];
      if (e.length > 0 && other.length > 0 && e.offset < other.offset + other.length &&
          other.offset < e.offset + e.length) {
        return fail(which + " overlaps section " + std::to_string(j));
      }
    }
    const Span payload{data + e.offset, static_cast<size_t>(e.length)};
    if (crc32(payload.data, payload.size) != e.crc) return fail(which + " checksum mismatch: the blob is corrupt");
    std::string error;

    switch (static_cast<SectionKind>(e.kind)) {
      case SectionKind::kIrXml:
        if (have_xml) return fail("more than one IR XML section");
        if (payload.size == 0) return fail("the IR XML section is empty");
        have_xml = true;
        parsed.ir_xml = payload;
        break;
      case SectionKind::kIrWeights:
        if (have_weights) return fail("more than one IR weights section");
        have_weights = true;
        parsed.ir_weights = payload;
        break;
      case SectionKind::kPrecompiled: {
        PrecompiledModel model;
        error = parse_precompiled(payload, model);
        if (!error.empty()) error = "precompiled " + which + " " + error;
        parsed.precompiled.push_back(std::move(model));
        break;
      }
      case SectionKind::kInputArguments:
        error = read_once(parsed.input_arguments, "input arguments", which, payload, parse_input_arguments);
        break;
      case SectionKind::kNamedWeights:
        error = read_once(parsed.named_weights, "named weights", which, payload, parse_named_weights);
        break;
      case SectionKind::kInputBounds:
        error = read_once(bounds, "input bounds", which, payload, parse_input_bounds);
        break;
      case SectionKind::kGrownCaches:
        error = read_once(grown_caches, "grown caches", which, payload, parse_grown_caches);
        break;
      default:
        break;  // a section from a newer minor version: checked above, otherwise ignored
    }
    if (!error.empty()) return fail(error);
  }
  parsed.input_bounds = std::move(bounds).value_or(std::vector<InputBound>{});
  parsed.grown_caches = grown_caches.value_or(0);
  if (!have_xml) return fail("no IR XML section");
  if (parsed.named_weights.has_value() != ((flags & kFlagNamedWeights) != 0)) {
    return fail(parsed.named_weights ? "names weights in named data without the flag that says so"
                                     : "has the named-weights flag but no named weights section");
  }
  if (parsed.named_weights && parsed.ir_weights.size != 0) {
    return fail("holds weights and also names weights in named data");
  }
  return ParseResult{parsed, {}};
}

std::vector<uint8_t> build(const BlobInput& input) {
  // Payloads in section order: XML, weights (or where they are), each precompiled model, the arguments,
  // the bounds, the grown caches.
  std::vector<std::pair<SectionKind, std::vector<uint8_t>>> payloads;
  payloads.emplace_back(SectionKind::kIrXml, std::vector<uint8_t>(input.ir_xml.begin(), input.ir_xml.end()));
  if (const std::optional<NamedWeights>& named = input.named_weights) {
    std::vector<uint8_t> payload(16 + named->key.size());
    write_u64(payload.data(), named->size);
    write_u32(payload.data() + 8, named->crc);
    write_u32(payload.data() + 12, static_cast<uint32_t>(named->key.size()));
    std::memcpy(payload.data() + 16, named->key.data(), named->key.size());
    payloads.emplace_back(SectionKind::kNamedWeights, std::move(payload));
  } else {
    payloads.emplace_back(SectionKind::kIrWeights, input.ir_weights);
  }
  for (const PrecompiledInput& model : input.precompiled) {
    std::string meta = "device=" + model.device + "\nopenvino=" + model.openvino_version + "\n";
    for (const auto& [key, value] : model.properties) meta += "property:" + key + "=" + value + "\n";
    std::vector<uint8_t> payload(align_up(4 + meta.size()), 0);
    write_u32(payload.data(), static_cast<uint32_t>(meta.size()));
    std::memcpy(payload.data() + 4, meta.data(), meta.size());
    payload.insert(payload.end(), model.model.begin(), model.model.end());
    payloads.emplace_back(SectionKind::kPrecompiled, std::move(payload));
  }
  if (const std::optional<InputArguments>& arguments = input.input_arguments) {
    std::vector<uint8_t> payload(8 + 4 * arguments->of_ir_input.size());
    write_u32(payload.data(), arguments->call_inputs);
    write_u32(payload.data() + 4, static_cast<uint32_t>(arguments->of_ir_input.size()));
    for (size_t i = 0; i < arguments->of_ir_input.size(); ++i) {
      write_u32(payload.data() + 8 + 4 * i, arguments->of_ir_input[i]);
    }
    payloads.emplace_back(SectionKind::kInputArguments, std::move(payload));
  }
  if (!input.input_bounds.empty()) {
    std::vector<uint8_t> payload(8 + 24 * input.input_bounds.size(), 0);
    write_u32(payload.data(), static_cast<uint32_t>(input.input_bounds.size()));
    for (size_t i = 0; i < input.input_bounds.size(); ++i) {
      uint8_t* entry = payload.data() + 8 + 24 * i;
      write_u32(entry, input.input_bounds[i].input);
      write_u64(entry + 8, static_cast<uint64_t>(input.input_bounds[i].low));
      write_u64(entry + 16, static_cast<uint64_t>(input.input_bounds[i].high));
    }
    payloads.emplace_back(SectionKind::kInputBounds, std::move(payload));
  }
  if (input.grown_caches > 0) {
    std::vector<uint8_t> payload(8, 0);
    write_u32(payload.data(), input.grown_caches);
    payloads.emplace_back(SectionKind::kGrownCaches, std::move(payload));
  }

  const uint32_t count = static_cast<uint32_t>(payloads.size());
  const size_t header_size = kFixedHeaderSize + count * kEntrySize;
  std::vector<Entry> entries;
  size_t offset = align_up(header_size);
  for (const auto& [kind, payload] : payloads) {
    entries.push_back({static_cast<uint32_t>(kind), crc32(payload.data(), payload.size()), offset, payload.size()});
    offset = align_up(offset + payload.size());
  }
  const size_t total = entries.back().offset + entries.back().length;

  std::vector<uint8_t> out(total, 0);
  std::memcpy(out.data() + kMagicOffset, kMagic, sizeof(kMagic));
  write_u16(out.data() + kMajorOffset, kMajorVersion);
  // The minor version of the newest kind written (docs/delegate-blob-format.md, Compatibility).
  uint16_t minor = 1;
  for (const auto& [kind, payload] : payloads) minor = std::max(minor, minor_of(kind));
  write_u16(out.data() + kMinorOffset, minor);
  write_u32(out.data() + kHeaderSizeOffset, static_cast<uint32_t>(header_size));
  write_u32(out.data() + kSectionCountOffset, count);
  write_u64(out.data() + kTotalSizeOffset, total);
  write_u32(out.data() + kFlagsOffset, input.named_weights ? kFlagNamedWeights : 0);
  for (uint32_t i = 0; i < count; ++i) {
    const std::vector<uint8_t>& payload = payloads[i].second;
    if (!payload.empty()) std::memcpy(out.data() + entries[i].offset, payload.data(), payload.size());
    uint8_t* e = out.data() + kFixedHeaderSize + i * kEntrySize;
    write_u32(e + kEntryKindOffset, entries[i].kind);
    write_u32(e + kEntryCrcOffset, entries[i].crc);
    write_u64(e + kEntryOffsetOffset, entries[i].offset);
    write_u64(e + kEntryLengthOffset, entries[i].length);
  }
  write_u32(out.data() + kHeaderCrcOffset, header_crc(out.data(), header_size));
  return out;
}

}  // namespace executorch_openvino::blob
