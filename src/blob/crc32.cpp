#include "blob/crc32.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define EOV_CRC32_FOLDING 1
#endif

namespace executorch_openvino::blob {
namespace {

constexpr uint32_t kPolynomial = 0xEDB88320u;  // reflected 0x04C11DB7

// Eight tables for slicing-by-8: weights run to hundreds of megabytes and are checked at every
// load, so eight bytes per step instead of one (several GB/s instead of a few hundred MB/s).
using Tables = std::array<std::array<uint32_t, 256>, 8>;

Tables make_tables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ kPolynomial : c >> 1;
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFFu];
  }
  return t;
}

const Tables& tables() {
  static const Tables t = make_tables();
  return t;
}

#ifdef EOV_CRC32_FOLDING
// Carry-less multiplication folds 64 bytes a step (tens of GB/s against the tables' 2): the weights
// are checked at every load, and a 1.5 GB model spent most of a cached load here. The constants are
// powers of x modulo the polynomial (bit-reflected), the standard ones for folding CRC-32 by 512,
// 128 and 64 bits, then Barrett's reduction to 32. Works on the inverted register, as the tables do;
// takes a multiple of 16 bytes, at least 64.
#define EOV_FOLDING_TARGET __attribute__((target("pclmul,sse4.1")))

EOV_FOLDING_TARGET inline __m128i load(const uint8_t* at) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
}

// x's two halves multiplied by k's, added to the next 16 bytes.
EOV_FOLDING_TARGET inline __m128i step(__m128i x, __m128i k, __m128i next) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), next);
}

EOV_FOLDING_TARGET uint32_t fold(const uint8_t* p, size_t size, uint32_t crc) {
  const __m128i by512 = _mm_set_epi64x(0x1c6e41596, 0x154442bd4);
  const __m128i by128 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0);
  const __m128i by64 = _mm_set_epi64x(0, 0x163cd6124);
  const __m128i barrett = _mm_set_epi64x(0x1f7011641, 0x1db710641);  // (x^64 / P, P)
  const __m128i low32 = _mm_set_epi32(0, 0, 0, -1);
  __m128i x0 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(crc)));
  __m128i x1 = load(p + 16), x2 = load(p + 32), x3 = load(p + 48);
  p += 64;
  size -= 64;
  for (; size >= 64; p += 64, size -= 64) {
    x0 = step(x0, by512, load(p));
    x1 = step(x1, by512, load(p + 16));
    x2 = step(x2, by512, load(p + 32));
    x3 = step(x3, by512, load(p + 48));
  }
  __m128i x = step(step(step(x0, by128, x1), by128, x2), by128, x3);
  for (; size >= 16; p += 16, size -= 16) x = step(x, by128, load(p));
  // 128 -> 64 bits, 64 -> 32, then the remainder by Barrett's reduction.
  x = _mm_xor_si128(_mm_clmulepi64_si128(x, by128, 0x10), _mm_srli_si128(x, 8));
  x = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x, low32), by64, 0x00), _mm_srli_si128(x, 4));
  __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x, low32), barrett, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, low32), barrett, 0x00);
  return static_cast<uint32_t>(_mm_extract_epi32(_mm_xor_si128(x, t), 1));
}

bool can_fold() {
  static const bool can = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  return can;
}
#endif

}  // namespace

uint32_t crc32(const void* data, size_t size, uint32_t crc) {
  const Tables& t = tables();
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
#ifdef EOV_CRC32_FOLDING
  if (size >= 64 && can_fold()) {
    const size_t folded = size & ~static_cast<size_t>(15);
    crc = fold(p, folded, crc);
    p += folded;
    size -= folded;
  }
#endif
  while (size >= 8) {
    // Assemble little-endian words byte by byte: correct on any host, and compilers fold it.
    uint32_t lo = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                  static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
    uint32_t hi = static_cast<uint32_t>(p[4]) | static_cast<uint32_t>(p[5]) << 8 |
                  static_cast<uint32_t>(p[6]) << 16 | static_cast<uint32_t>(p[7]) << 24;
    lo ^= crc;
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
          t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
    p += 8;
    size -= 8;
  }
  while (size-- > 0) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xFFu];
  return ~crc;
}

}  // namespace executorch_openvino::blob
