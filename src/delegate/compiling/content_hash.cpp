#include "delegate/compiling/content_hash.h"

#include <cstring>

namespace executorch_openvino::delegate {
namespace {

constexpr uint64_t kMultiply = 0xff51afd7ed558ccdull;

inline uint64_t load_word(const uint8_t* p) {
  uint64_t word;
  std::memcpy(&word, p, 8);
  return word;
}

// Both steps are bijections of the state for a fixed word, so one changed word always changes it.
inline uint64_t absorb(uint64_t state, uint64_t word) {
  state = (state ^ word) * kMultiply;
  return state ^ (state >> 32);
}

inline uint64_t finish(uint64_t h) {
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 29);
}

}  // namespace

uint64_t content_hash(const void* data, size_t size, uint64_t seed) {
  const auto* p = static_cast<const uint8_t*>(data);
  // Four independent lanes: the multiplications overlap, so weights of hundreds of megabytes hash at
  // memory speed rather than at one multiplication's latency per word.
  uint64_t lane[4] = {seed ^ 0x9e3779b97f4a7c15ull ^ size, seed ^ 0x6a09e667f3bcc909ull, seed ^ 0xbb67ae8584caa73bull,
                      seed ^ 0x3c6ef372fe94f82bull};
  size_t i = 0;
  for (; i + 32 <= size; i += 32) {
    lane[0] = absorb(lane[0], load_word(p + i));
    lane[1] = absorb(lane[1], load_word(p + i + 8));
    lane[2] = absorb(lane[2], load_word(p + i + 16));
    lane[3] = absorb(lane[3], load_word(p + i + 24));
  }
  for (; i + 8 <= size; i += 8) lane[0] = absorb(lane[0], load_word(p + i));
  uint64_t tail = 0;
  if (i < size) std::memcpy(&tail, p + i, size - i);
  uint64_t h = absorb(lane[0], tail ^ (static_cast<uint64_t>(size - i) << 56));
  h = absorb(h, lane[1]);
  h = absorb(h, lane[2]);
  h = absorb(h, lane[3]);
  return finish(h);
}

}  // namespace executorch_openvino::delegate
