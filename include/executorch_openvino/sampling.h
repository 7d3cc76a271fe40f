// Choosing the next token from a step's logits (header-only; C++17): greedily, or drawn after the
// filters of Hugging Face transformers' generate: the repetition penalty over the ids so far, then,
// when sampling, temperature, top-k, top-p and a softmax, in double precision. The same rules as the
// Python package's executorch_openvino.generation.Sampler (docs/generation.md), and the same random
// numbers: numpy's PCG64 seeded through its SeedSequence, one uniform number a draw, so a seed
// draws the same tokens here as there from the same logits.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

namespace executorch_openvino::generation {

struct SamplingOptions {
  double temperature = 0.0;  // 0: greedy, the most probable token
  int64_t top_k = 0;         // 0: off
  double top_p = 1.0;        // 1: off
  double repetition_penalty = 1.0;  // 1: off
  std::optional<uint64_t> seed;     // none: from std::random_device

  // Whether every option is in its range (the Python class's validate()).
  bool valid() const {
    return temperature >= 0 && std::isfinite(temperature) && top_k >= 0 && top_p > 0 && top_p <= 1 &&
           repetition_penalty > 0 && std::isfinite(repetition_penalty);
  }
};

namespace detail {

// numpy's SeedSequence(seed).generate_state(4, uint64): the seed's 32-bit words hashed into a pool
// of four, then four 64-bit words drawn from it.
inline std::vector<uint64_t> seed_sequence_state(uint64_t seed) {
  constexpr uint32_t kInitA = 0x43b0d7e5, kMultA = 0x931e8875, kInitB = 0x8b51f9dd, kMultB = 0x58f38ded;
  constexpr uint32_t kMixL = 0xca01f9dd, kMixR = 0x4973f715;
  std::vector<uint32_t> entropy;
  for (uint64_t rest = seed; rest != 0 || entropy.empty(); rest >>= 32) {
    entropy.push_back(static_cast<uint32_t>(rest));
    if (rest >> 32 == 0) break;
  }
  uint32_t hash = kInitA;
  auto hashmix = [&](uint32_t value) {
    value ^= hash;
    hash *= kMultA;
    value *= hash;
    return value ^ (value >> 16);
  };
  auto mix = [](uint32_t x, uint32_t y) {
    const uint32_t result = kMixL * x - kMixR * y;
    return result ^ (result >> 16);
  };
  uint32_t pool[4];
  for (size_t i = 0; i < 4; ++i) pool[i] = hashmix(i < entropy.size() ? entropy[i] : 0);
  for (size_t source = 0; source < 4; ++source)
    for (size_t target = 0; target < 4; ++target)
      if (source != target) pool[target] = mix(pool[target], hashmix(pool[source]));
  for (size_t source = 4; source < entropy.size(); ++source)
    for (size_t target = 0; target < 4; ++target) pool[target] = mix(pool[target], hashmix(entropy[source]));
  uint32_t draw_hash = kInitB;
  std::vector<uint64_t> state(4);
  for (size_t i = 0; i < 8; ++i) {
    uint32_t value = pool[i % 4] ^ draw_hash;
    draw_hash *= kMultB;
    value *= draw_hash;
    value ^= value >> 16;
    state[i / 2] |= static_cast<uint64_t>(value) << (32 * (i % 2));  // little-endian words
  }
  return state;
}

// numpy's PCG64 (128-bit state, XSL-RR output) and its Generator.random(). The 128-bit arithmetic is
// written out in 64-bit halves, so that compilers without a 128-bit integer (MSVC) build it too.
class Pcg64 {
 public:
  explicit Pcg64(uint64_t seed) {
    const std::vector<uint64_t> words = seed_sequence_state(seed);
    // increment = (sequence << 1) | 1; state = 0, step, += start, step (pcg's srandom).
    increment_ = {(words[2] << 1) | (words[3] >> 63), (words[3] << 1) | 1};
    step();
    state_ = add(state_, {words[0], words[1]});
    step();
  }

  uint64_t next64() {
    step();
    const uint64_t folded = state_.high ^ state_.low;
    const unsigned rotation = static_cast<unsigned>(state_.high >> 58);
    return (folded >> rotation) | (folded << ((64 - rotation) & 63));
  }

  double uniform() { return static_cast<double>(next64() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)

 private:
  struct U128 {
    uint64_t high = 0, low = 0;
  };

  static U128 add(U128 a, U128 b) {
    const uint64_t low = a.low + b.low;
    return {a.high + b.high + (low < a.low ? 1 : 0), low};
  }

  // The full 128-bit product of two 64-bit numbers, from 32-bit halves.
  static U128 multiply(uint64_t a, uint64_t b) {
    const uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
    const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    const uint64_t middle = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
    return {p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32), (middle << 32) | (p00 & 0xFFFFFFFFu)};
  }

  void step() {  // state = state * multiplier + increment, modulo 2^128
    constexpr uint64_t kHigh = 0x2360ED051FC65DA4ULL, kLow = 0x4385DF649FCCF645ULL;
    U128 product = multiply(state_.low, kLow);
    product.high += state_.high * kLow + state_.low * kHigh;
    state_ = add(product, increment_);
  }

  U128 state_, increment_;
};

}  // namespace detail

// Chooses next tokens as its options say. One generator serves all of its calls: the seed fixes the
// sequence of draws, not each draw.
class Sampler {
 public:
  explicit Sampler(SamplingOptions options = {}) : options_(options), random_(options.seed ? *options.seed : entropy()) {}

  const SamplingOptions& options() const { return options_; }

  // The next token after `history` (the ids so far, prompt included) given one row of logits; -1
  // when the logits hold NaN or +inf or no finite number, or history an id outside the vocabulary.
  int64_t next_token(const float* row, size_t vocab, const std::vector<int64_t>& history) {
    std::vector<double> scores(row, row + vocab);
    if (!penalize(scores, history)) return -1;
    if (options_.temperature == 0) {  // the first of equal maxima
      return static_cast<int64_t>(std::max_element(scores.begin(), scores.end()) - scores.begin());
    }
    filter(scores);
    // The softmax, then the cumulative sum of the ids of positive probability (only those can be
    // drawn, even when rounding puts the uniform number at the very end of the sum).
    const double top = *std::max_element(scores.begin(), scores.end());
    double total = 0;
    for (double& score : scores) total += score = std::exp(score - top);
    std::vector<size_t> support;
    std::vector<double> cumulative;
    double sum = 0;
    for (size_t id = 0; id < vocab; ++id) {
      const double probability = scores[id] / total;
      if (probability > 0) {
        support.push_back(id);
        cumulative.push_back(sum += probability);
      }
    }
    const double target = random_.uniform() * cumulative.back();
    const auto above = std::upper_bound(cumulative.begin(), cumulative.end(), target);
    const size_t pick = static_cast<size_t>(above - cumulative.begin());
    return static_cast<int64_t>(support[std::min(pick, support.size() - 1)]);
  }

 private:
  static uint64_t entropy() {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
  }

  bool penalize(std::vector<double>& scores, const std::vector<int64_t>& history) const {
    bool finite = false;
    for (double score : scores) {
      if (std::isnan(score) || score == INFINITY) return false;
      finite = finite || score != -INFINITY;
    }
    if (!finite) return false;
    if (options_.repetition_penalty == 1) return true;
    std::vector<int64_t> ids = history;
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    if (!ids.empty() && (ids.front() < 0 || ids.back() >= static_cast<int64_t>(scores.size()))) return false;
    for (int64_t id : ids) {  // less likely either way
      double& score = scores[static_cast<size_t>(id)];
      score = score > 0 ? score / options_.repetition_penalty : score * options_.repetition_penalty;
    }
    return true;
  }

  // Temperature, top-k and top-p; what they remove becomes -inf.
  void filter(std::vector<double>& scores) const {
    for (double& score : scores) score /= options_.temperature;
    const size_t size = scores.size();
    if (options_.top_k > 0) {
      const size_t k = std::min(static_cast<size_t>(options_.top_k), size);
      std::vector<double> sorted = scores;
      std::nth_element(sorted.begin(), sorted.begin() + (size - k), sorted.end());
      const double kth = sorted[size - k];
      for (double& score : scores)
        if (score < kth) score = -INFINITY;  // ties with the k-th largest all stay
    }
    if (options_.top_p < 1) {
      std::vector<size_t> kept;
      for (size_t id = 0; id < size; ++id)
        if (scores[id] > -INFINITY) kept.push_back(id);
      // Descending by score, equal scores lower ids first; then walked from the least probable.
      std::stable_sort(kept.begin(), kept.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
      std::reverse(kept.begin(), kept.end());
      const double top = scores[kept.back()];
      std::vector<double> weights(kept.size());
      double total = 0;
      for (size_t i = 0; i < kept.size(); ++i) total += weights[i] = std::exp(scores[kept[i]] - top);
      double cumulative = 0;
      std::vector<size_t> removed;
      for (size_t i = 0; i + 1 < kept.size(); ++i) {  // the most probable always stays
        cumulative += weights[i] / total;
        if (cumulative <= 1 - options_.top_p) removed.push_back(kept[i]);
      }
      for (size_t id : removed) scores[id] = -INFINITY;
    }
  }

  SamplingOptions options_;
  detail::Pcg64 random_;
};

}  // namespace executorch_openvino::generation
