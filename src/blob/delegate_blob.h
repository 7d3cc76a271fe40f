// The delegate blob: our versioned container for what the ahead-of-time step hands the runtime:
// the IR's XML and weights, and optionally models precompiled for named devices.
// Layout and compatibility rules: docs/delegate-blob-format.md. Depends on nothing.
//
// All integers little-endian. Header (32 bytes), then a section table, then section payloads:
//   0  magic "EOVB"          4  u16 major version    6  u16 minor version
//   8  u32 header size (header + section table)      12 u32 section count
//   16 u64 total size (the whole blob)                24 u32 flags (see kFlag*; unknown bits: refused)
//   28 u32 CRC-32 of the header and table, computed with this field as zero
// Section table entry (24 bytes): u32 kind, u32 CRC-32 of the payload, u64 offset, u64 length.
//
// Compatibility: a breaking change increments the major version, which older readers refuse. A
// compatible change increments the minor version and adds section kinds; readers skip kinds they
// do not know.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace executorch_openvino::blob {

inline constexpr char kMagic[4] = {'E', 'O', 'V', 'B'};
inline constexpr uint16_t kMajorVersion = 1;
// 1.1 added precompiled models, 1.2 input arguments, 1.3 named weights, 1.4 input bounds, 1.5 grown caches.
inline constexpr uint16_t kMinorVersion = 5;

// Flags a reader must understand to use the blob (a reader refuses bits it does not know, so an
// older runtime says so instead of compiling an IR without its weights).
inline constexpr uint32_t kFlagNamedWeights = 1;  // the weights are in the program's named data (kNamedWeights)
inline constexpr uint32_t kKnownFlags = kFlagNamedWeights;

inline constexpr size_t kMagicOffset = 0;
inline constexpr size_t kMajorOffset = kMagicOffset + 4;
inline constexpr size_t kMinorOffset = kMajorOffset + 2;
inline constexpr size_t kHeaderSizeOffset = kMinorOffset + 2;
inline constexpr size_t kSectionCountOffset = kHeaderSizeOffset + 4;
inline constexpr size_t kTotalSizeOffset = kSectionCountOffset + 4;
inline constexpr size_t kFlagsOffset = kTotalSizeOffset + 8;
inline constexpr size_t kHeaderCrcOffset = kFlagsOffset + 4;
inline constexpr size_t kFixedHeaderSize = kHeaderCrcOffset + 4;  // 32

inline constexpr size_t kEntryKindOffset = 0;
inline constexpr size_t kEntryCrcOffset = kEntryKindOffset + 4;
inline constexpr size_t kEntryOffsetOffset = kEntryCrcOffset + 4;
inline constexpr size_t kEntryLengthOffset = kEntryOffsetOffset + 8;
inline constexpr size_t kEntrySize = kEntryLengthOffset + 8;  // 24

inline constexpr uint32_t kMaxSections = 64;
// Payloads start at multiples of this, so weights can be used in place by OpenVINO's kernels.
inline constexpr size_t kPayloadAlignment = 64;

enum class SectionKind : uint32_t {
  kIrXml = 1,      // OpenVINO IR, the .xml text (required, non-empty)
  kIrWeights = 2,  // OpenVINO IR, the .bin weights (optional)
  // A compiled model exported for one device (any number, since 1.1). Payload: u32 metadata size
  // M, M bytes of "key=value" lines (device=, openvino= build number, property:NAME= for each
  // property it was compiled with), zero padding to the next multiple of 64 from the payload
  // start, then the bytes export_model wrote.
  kPrecompiled = 3,
  // Which of the delegate call's inputs the IR reads (optional, since 1.2; absent: every one, in
  // order). Payload: u32 call input count K, u32 IR input count N, then N u32: the call input each
  // IR input is, strictly increasing, each below K. Inputs the IR does not read are left out of it
  // (a repeat of another input's value, a size read from a tensor's shape). A reader that skips
  // this section sees K arguments for N < K inputs and refuses the call.
  kInputArguments = 6,
  // The IR's weights are in the program's named data instead of a kIrWeights section (since 1.3;
  // with kFlagNamedWeights). Payload: u64 size, u32 CRC-32 of the weights, u32 key length L, then
  // the L bytes of the key (UTF-8, no NUL).
  kNamedWeights = 7,
  // The values IR inputs may take (optional, since 1.4): an input that indexes a dimension of a
  // static size, or a position in the context a KV cache was exported with. Payload: u32 count N,
  // u32 zero, then N entries of u32 IR input, u32 zero, i64 low, i64 high: every value of that
  // input lies in [low, high). Inputs strictly increasing; low < high. A reader that skips this
  // section computes with any value, as before.
  kInputBounds = 8,
  // The IR's KV caches grow with the conversation (optional, since 1.5): the exporter rewrote them
  // into that form (python/executorch_openvino/ir_passes/grown_cache.py), so the runtime may run them
  // paged. Payload: u32 count N >= 1 of grown caches, u32 zero. A reader that skips this section runs
  // the model as exported.
  kGrownCaches = 9,
};

struct Span {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

struct PrecompiledModel {
  std::string device;
  std::string openvino_version;  // the build number of the runtime that compiled it
  std::vector<std::pair<std::string, std::string>> properties;
  Span model;
};

// The call inputs the IR reads (SectionKind::kInputArguments).
struct InputArguments {
  uint32_t call_inputs = 0;
  std::vector<uint32_t> of_ir_input;  // the call input each IR input is
};

// Where the weights are when the program's named data holds them (SectionKind::kNamedWeights).
struct NamedWeights {
  std::string key;
  uint64_t size = 0;
  uint32_t crc = 0;
};

// The values one IR input may take (SectionKind::kInputBounds): each in [low, high).
struct InputBound {
  uint32_t input = 0;
  int64_t low = 0;
  int64_t high = 0;
};

struct ParsedBlob {
  uint16_t minor_version = 0;
  Span ir_xml;
  Span ir_weights;  // size 0 when the model has no weights
  std::vector<PrecompiledModel> precompiled;
  std::optional<InputArguments> input_arguments;  // absent: the IR reads every call input, in order
  std::optional<NamedWeights> named_weights;      // set: ir_weights is empty until the delegate fetches them
  std::vector<InputBound> input_bounds;           // by input; empty: no input is bounded
  uint32_t grown_caches = 0;                      // how many KV caches grow (kGrownCaches); 0: none said
};

struct ParseResult {
  std::optional<ParsedBlob> blob;
  std::string error;  // set when blob is empty: what is wrong, with the offending value
};

// Checks everything (magic, versions, sizes, ranges without overflow, overlaps, checksums) and
// returns views into `data`; never reads outside [data, data + size).
ParseResult parse(const void* data, size_t size);

struct PrecompiledInput {
  std::string device;
  std::string openvino_version;
  std::vector<std::pair<std::string, std::string>> properties;
  std::vector<uint8_t> model;
};

// What build() writes: ParsedBlob's content, owned.
struct BlobInput {
  std::string ir_xml;
  std::vector<uint8_t> ir_weights;
  std::vector<PrecompiledInput> precompiled = {};
  std::optional<InputArguments> input_arguments = std::nullopt;
  std::optional<NamedWeights> named_weights = std::nullopt;  // set: ir_weights is not written
  std::vector<InputBound> input_bounds = {};
  uint32_t grown_caches = 0;
};

// Serialises a blob (used by tests and tools; the Python package writes the same format).
std::vector<uint8_t> build(const BlobInput& input);

}  // namespace executorch_openvino::blob
