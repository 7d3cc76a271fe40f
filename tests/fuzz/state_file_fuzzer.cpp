// libFuzzer target: the state file reader (src/state_file), fed every input twice, as given and with
// its header repaired (magic, version, size and CRC-32 made right for the bytes after it), so that
// the payload's own checks are reached too. Besides the sanitizers' findings it stops on a broken
// promise of decode():
//   - a refusal always says why, in a message of bounded size;
//   - what it accepted, written again with encode(), gives back the very bytes read;
//   - in the seed replay test (tests/fuzz/replay.cmake), every seed is accepted.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "blob/crc32.h"
#include "state_file/state_file.h"

namespace {

namespace sf = executorch_openvino::state_file;

constexpr size_t kHeader = sizeof(sf::kMagic) + 4 + 8 + 4;
constexpr size_t kMaxErrorLength = 512;
const bool seeds_are_valid = std::getenv("EOV_FUZZ_SEEDS_ARE_VALID") != nullptr;

[[noreturn]] void broken(const char* promise, const std::string& detail) {
  std::fprintf(stderr, "state_file_fuzzer: decode() broke its promise: %s ('%.200s')\n", promise, detail.c_str());
  std::abort();
}

// Whether the input was accepted.
bool check(const uint8_t* data, size_t size) {
  executorch_openvino::Outcome<sf::StateFile> decoded = sf::decode(data, size);
  if (!decoded.ok()) {
    const std::string& why = decoded.failure().message;
    if (why.empty() || why.size() > kMaxErrorLength) broken("a refusal says why, briefly", why);
    return false;
  }
  const std::vector<uint8_t> again = sf::encode(decoded.value());
  if (again.size() != size || std::memcmp(again.data(), data, size) != 0)
    broken("what is accepted is written back byte for byte", std::to_string(again.size()) + " bytes");
  return true;
}

void put(uint8_t* at, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) at[i] = static_cast<uint8_t>(value >> (8 * i));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const bool accepted = check(data, size);
  if (seeds_are_valid && !accepted) broken("every seed is accepted", std::to_string(size) + " bytes");
  if (size >= kHeader) {
    std::vector<uint8_t> repaired(data, data + size);
    std::memcpy(repaired.data(), sf::kMagic, sizeof(sf::kMagic));
    put(repaired.data() + 8, sf::kVersion, 4);
    put(repaired.data() + 12, size - kHeader, 8);
    put(repaired.data() + 20, executorch_openvino::blob::crc32(repaired.data() + kHeader, size - kHeader), 4);
    check(repaired.data(), repaired.size());
  }
  return 0;
}
