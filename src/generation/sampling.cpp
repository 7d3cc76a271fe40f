// Sampling (sampling.h).
#include "generation/sampling.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

namespace executorch_openvino::generation {

namespace {

Failure invalid(std::string message) { return Failure{FailureKind::kInvalidArgument, std::move(message)}; }

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

uint64_t entropy() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

}  // namespace

Status SamplingOptions::validate() const {
  if (!(temperature >= 0 && std::isfinite(temperature)))
    return invalid("temperature must be 0 (greedy) or a positive number, not " + number(temperature));
  if (top_k < 0) return invalid("top_k must be a whole number, 0 (off) or more, not " + std::to_string(top_k));
  if (!(top_p > 0 && top_p <= 1)) return invalid("top_p must be in (0, 1] (1: off), not " + number(top_p));
  if (!(repetition_penalty > 0 && std::isfinite(repetition_penalty)))
    return invalid("repetition_penalty must be a positive number (1: off), not " + number(repetition_penalty));
  return ok_status();
}

namespace detail {

// numpy's SeedSequence(seed).generate_state(4, uint64): the seed's 32-bit words hashed into a pool
// of four, then four 64-bit words drawn from it.
std::vector<uint64_t> seed_sequence_state(uint64_t seed) {
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

Pcg64::Pcg64(uint64_t seed) {
  const std::vector<uint64_t> words = seed_sequence_state(seed);
  // increment = (sequence << 1) | 1; state = 0, step, += start, step (pcg's srandom).
  increment_ = {(words[2] << 1) | (words[3] >> 63), (words[3] << 1) | 1};
  step();
  state_ = add(state_, {words[0], words[1]});
  step();
}

uint64_t Pcg64::next64() {
  step();
  const uint64_t folded = state_.high ^ state_.low;
  const unsigned rotation = static_cast<unsigned>(state_.high >> 58);
  return (folded >> rotation) | (folded << ((64 - rotation) & 63));
}

double Pcg64::uniform() { return static_cast<double>(next64() >> 11) * (1.0 / 9007199254740992.0); }

Pcg64::U128 Pcg64::add(U128 a, U128 b) {
  const uint64_t low = a.low + b.low;
  return {a.high + b.high + (low < a.low ? 1 : 0), low};
}

// The full 128-bit product from 32-bit halves, so compilers without a 128-bit integer build it too.
Pcg64::U128 Pcg64::multiply(uint64_t a, uint64_t b) {
  const uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
  const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const uint64_t middle = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
  return {p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32), (middle << 32) | (p00 & 0xFFFFFFFFu)};
}

void Pcg64::step() {  // state = state * multiplier + increment, modulo 2^128
  constexpr uint64_t kHigh = 0x2360ED051FC65DA4ULL, kLow = 0x4385DF649FCCF645ULL;
  U128 product = multiply(state_.low, kLow);
  product.high += state_.high * kLow + state_.low * kHigh;
  state_ = add(product, increment_);
}

}  // namespace detail

Sampler::Sampler(SamplingOptions options) : options_(options), random_(options.seed ? *options.seed : entropy()) {}

Outcome<int64_t> Sampler::next_token(const float* row, size_t vocab, const std::vector<int64_t>& history,
                                     const TokenBits* allowed) {
  if (vocab == 0) return invalid("the logits are empty");
  // Greedy without a penalty reads the floats as they are: the common case, at every step.
  if (options_.temperature == 0 && options_.repetition_penalty == 1) {
    int64_t best = -1;
    for (size_t id = 0; id < vocab; ++id) {
      const float score = row[id];
      if (std::isnan(score) || score == INFINITY) return invalid("the logits hold NaN or +inf");
      if (allowed != nullptr && !token_allowed(*allowed, static_cast<int64_t>(id))) continue;
      if (score != -INFINITY && (best < 0 || score > row[best])) best = static_cast<int64_t>(id);
    }
    if (best < 0)
      return invalid(allowed != nullptr ? "no token the constraint allows has a finite logit" : "every logit is -inf");
    return best;
  }
  scores_.assign(row, row + vocab);
  if (Status penalized = penalize(scores_, history); !penalized) return penalized.failure();
  if (allowed != nullptr) {
    bool any = false;
    for (size_t id = 0; id < vocab; ++id) {
      if (!token_allowed(*allowed, static_cast<int64_t>(id))) scores_[id] = -INFINITY;
      any = any || scores_[id] != -INFINITY;
    }
    if (!any) return invalid("no token the constraint allows has a finite logit");
  }
  if (options_.temperature == 0) {  // the first of equal maxima
    return static_cast<int64_t>(std::max_element(scores_.begin(), scores_.end()) - scores_.begin());
  }
  filter(scores_);
  // The softmax, then the cumulative sum over the ids of positive probability (only those can be
  // drawn, even when rounding puts the uniform number at the very end of the sum).
  const double top = *std::max_element(scores_.begin(), scores_.end());
  double total = 0;
  for (double& score : scores_) total += score = std::exp(score - top);
  std::vector<size_t> support;
  std::vector<double> cumulative;
  double sum = 0;
  for (size_t id = 0; id < vocab; ++id) {
    const double probability = scores_[id] / total;
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

Status Sampler::penalize(std::vector<double>& scores, const std::vector<int64_t>& history) const {
  bool finite = false;
  for (double score : scores) {
    if (std::isnan(score) || score == INFINITY) return invalid("the logits hold NaN or +inf");
    finite = finite || score != -INFINITY;
  }
  if (!finite) return invalid("every logit is -inf");
  if (options_.repetition_penalty == 1) return ok_status();
  std::vector<int64_t> ids = history;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (!ids.empty() && (ids.front() < 0 || ids.back() >= static_cast<int64_t>(scores.size())))
    return invalid("the conversation holds ids outside the vocabulary of " + std::to_string(scores.size()));
  for (int64_t id : ids) {  // less likely either way
    double& score = scores[static_cast<size_t>(id)];
    score = score > 0 ? score / options_.repetition_penalty : score * options_.repetition_penalty;
  }
  return ok_status();
}

// Temperature, top-k and top-p; what they remove becomes -inf.
void Sampler::filter(std::vector<double>& scores) const {
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

}  // namespace executorch_openvino::generation
