#include "delegate/compiling/model_file_cache.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "delegate/compiling/content_hash.h"

#if defined(_WIN32)
#include <process.h>
#define EOV_PROCESS_ID _getpid
#else
#include <unistd.h>
#define EOV_PROCESS_ID getpid
#endif

namespace executorch_openvino::delegate {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'E', 'O', 'V', 'M', 'O', 'D', 'E', 'L'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kTrailerSize = 64;

// Seeds of the hashes: the file name, the key check inside, and the model bytes.
constexpr uint64_t kNameSeed = 0x4e414d45;
constexpr uint64_t kCheckSeed = 0x434845434b;
constexpr uint64_t kModelSeed = 0x4d4f44454c;

// The model's hash is taken over 1 MiB chunks, so the writer can hash the exported file while
// reading it in pieces instead of holding a second copy of the model.
constexpr size_t kChunk = size_t{1} << 20;

// Trailer layout, little-endian: magic[8], u32 version, u32 zero, u64 model size, u64 model hash,
// u64 key check, u64 key size, 16 zero bytes.
struct Trailer {
  uint64_t model_size = 0;
  uint64_t model_hash = 0;
  uint64_t key_check = 0;
  uint64_t key_size = 0;
};

template <typename T>
void put(std::array<uint8_t, kTrailerSize>& out, size_t offset, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) out[offset + i] = static_cast<uint8_t>(value >> (8 * i));
}

template <typename T>
T get(const uint8_t* in, size_t offset) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(in[offset + i]) << (8 * i);
  return value;
}

std::array<uint8_t, kTrailerSize> encode(const Trailer& t) {
  std::array<uint8_t, kTrailerSize> out{};
  std::memcpy(out.data(), kMagic, sizeof(kMagic));
  put<uint32_t>(out, 8, kFormatVersion);
  put<uint64_t>(out, 16, t.model_size);
  put<uint64_t>(out, 24, t.model_hash);
  put<uint64_t>(out, 32, t.key_check);
  put<uint64_t>(out, 40, t.key_size);
  return out;
}

class ChunkHasher {
 public:
  void add_chunk(const uint8_t* data, size_t size) { chunks_.push_back(content_hash(data, size, kModelSeed)); }
  uint64_t digest() const { return content_hash(chunks_.data(), chunks_.size() * sizeof(uint64_t), kModelSeed); }

 private:
  std::vector<uint64_t> chunks_;
};

uint64_t model_hash(const uint8_t* data, size_t size) {
  ChunkHasher hasher;
  for (size_t offset = 0; offset < size; offset += kChunk) hasher.add_chunk(data + offset, std::min(kChunk, size - offset));
  return hasher.digest();
}

std::string hex(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

CacheEntry cache_entry(const std::string& folder, const std::string& key) {
  CacheEntry entry;
  entry.file = fs::u8path(folder) / ("executorch_openvino-" + hex(content_hash(key.data(), key.size(), kNameSeed)) + ".model");
  entry.key_check = content_hash(key.data(), key.size(), kCheckSeed);
  entry.key_size = key.size();
  return entry;
}

namespace {

// The whole file, mapped where it can be, else read into memory; nullopt when there is no file.
std::optional<ModelBytes> file_bytes(const fs::path& file, std::string* problem) {
  std::error_code error;
  if (!fs::is_regular_file(file, error)) return std::nullopt;  // not cached yet
  std::string not_mapped;
  if (std::optional<ModelBytes> mapped = ModelBytes::map(file, &not_mapped)) return mapped;
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  const std::streamoff length = in.tellg();
  AlignedBytes bytes;
  try {
    bytes = AlignedBytes::allocate(static_cast<size_t>(std::max<std::streamoff>(length, 0)));
  } catch (const std::bad_alloc&) {
    *problem = "no memory for its " + std::to_string(length) + " bytes";
    return std::nullopt;
  }
  in.seekg(0);
  if (length > 0 && !in.read(reinterpret_cast<char*>(bytes.data.get()), length)) {
    *problem = "reading it failed";
    return std::nullopt;
  }
  return ModelBytes(std::move(bytes));
}

}  // namespace

std::optional<CachedModel> read_cached_model(const CacheEntry& entry, std::string* problem) {
  problem->clear();
  std::optional<ModelBytes> bytes = file_bytes(entry.file, problem);
  if (!bytes) return std::nullopt;
  const size_t length = bytes->size();
  if (length < kTrailerSize) {
    *problem = "the file is too short to be a cached model (" + std::to_string(length) + " bytes)";
    return std::nullopt;
  }
  const uint8_t* trailer = bytes->data() + length - kTrailerSize;
  if (std::memcmp(trailer, kMagic, sizeof(kMagic)) != 0 || get<uint32_t>(trailer, 8) != kFormatVersion) {
    *problem = "it is not a cached model of this delegate version (magic or format version differ)";
    return std::nullopt;
  }
  if (get<uint64_t>(trailer, 32) != entry.key_check || get<uint64_t>(trailer, 40) != entry.key_size) {
    *problem = "it holds another model (its key differs: a hash collision in the file name)";
    return std::nullopt;
  }
  CachedModel cached;
  cached.model_size = length - kTrailerSize;
  if (get<uint64_t>(trailer, 16) != cached.model_size ||
      get<uint64_t>(trailer, 24) != model_hash(bytes->data(), cached.model_size)) {
    *problem = "its content does not match its checksum (the file is damaged)";
    return std::nullopt;
  }
  cached.bytes = std::move(*bytes);
  return cached;
}

std::string seal_cache_file(const fs::path& written, const CacheEntry& entry) {
  auto fail = [&](const std::string& what) {
    std::error_code ignored;
    fs::remove(written, ignored);
    return what;
  };
  Trailer trailer;
  trailer.key_check = entry.key_check;
  trailer.key_size = entry.key_size;
  {
    std::ifstream in(written, std::ios::binary);
    if (!in) return fail("cannot read back " + written.u8string());
    ChunkHasher hasher;
    std::vector<uint8_t> chunk(kChunk);
    while (in) {
      in.read(reinterpret_cast<char*>(chunk.data()), static_cast<std::streamsize>(chunk.size()));
      const auto got = static_cast<size_t>(in.gcount());
      if (got == 0) break;
      hasher.add_chunk(chunk.data(), got);
      trailer.model_size += got;
    }
    if (in.bad()) return fail("cannot read back " + written.u8string());
    trailer.model_hash = hasher.digest();
  }
  {
    std::ofstream out(written, std::ios::binary | std::ios::app);
    const auto bytes = encode(trailer);
    if (!out.write(reinterpret_cast<const char*>(bytes.data()), bytes.size()) || !out.flush()) {
      return fail("cannot write " + written.u8string());
    }
  }
  std::error_code ec;
  fs::rename(written, entry.file, ec);
  if (ec) return fail("cannot rename " + written.u8string() + " to " + entry.file.u8string() + ": " + ec.message());
  return {};
}

std::string store_compiled_model(openvino_api::Runtime& runtime, const openvino_api::ov_compiled_model* compiled,
                                 const CacheEntry& entry) {
  static std::atomic<unsigned> counter{0};
  // Beside the final name (same file system, so the rename is atomic), unique per process and call.
  const fs::path temporary = fs::u8path(entry.file.u8string() + "." + std::to_string(EOV_PROCESS_ID()) + "-" +
                                        std::to_string(counter.fetch_add(1)) + ".tmp");
  if (Status exported = openvino_api::export_model(runtime, compiled, temporary.u8string()); !exported.ok()) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    return exported.failure().message;
  }
  return seal_cache_file(temporary, entry);
}

}  // namespace executorch_openvino::delegate
