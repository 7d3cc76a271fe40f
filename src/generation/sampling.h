// Choosing the next token from a step's logits: greedily, or drawn after the filters of Hugging
// Face transformers' generate (the repetition penalty over the ids so far, then temperature, top-k,
// top-p and a softmax, in double precision), among the tokens a constraint allows. Draws come from
// numpy's PCG64 seeded through its SeedSequence, one uniform number a draw, so a seed names the same
// tokens on every front and in numpy-based tools.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/outcome.h"
#include "generation/token_constraint.h"

namespace executorch_openvino::generation {

struct SamplingOptions {
  double temperature = 0.0;         // 0: greedy, the most probable token
  int64_t top_k = 0;                // 0: off
  double top_p = 1.0;               // 1: off
  double repetition_penalty = 1.0;  // 1: off
  std::optional<uint64_t> seed;     // none: from std::random_device

  // Names the first option out of its range, with the range.
  Status validate() const;
};

namespace detail {
// numpy's PCG64 (128-bit state, XSL-RR output) seeded as numpy seeds it, and Generator.random().
class Pcg64 {
 public:
  explicit Pcg64(uint64_t seed);
  uint64_t next64();
  double uniform();  // [0, 1)

 private:
  struct U128 {
    uint64_t high = 0, low = 0;
  };
  static U128 add(U128 a, U128 b);
  static U128 multiply(uint64_t a, uint64_t b);
  void step();
  U128 state_, increment_;
};
}  // namespace detail

// Chooses next tokens as its options say. One generator serves all of its calls: the seed fixes the
// sequence of draws, not each draw.
class Sampler {
 public:
  explicit Sampler(SamplingOptions options = {});

  const SamplingOptions& options() const { return options_; }

  // The next token after `history` (the ids so far, prompt included) given one row of logits,
  // among those `allowed` sets (all when null). A failure when the logits hold NaN or +inf or no
  // allowed finite number, or history holds an id outside the vocabulary.
  Outcome<int64_t> next_token(const float* row, size_t vocab, const std::vector<int64_t>& history,
                              const TokenBits* allowed = nullptr);

 private:
  Status penalize(std::vector<double>& scores, const std::vector<int64_t>& history) const;
  void filter(std::vector<double>& scores) const;

  SamplingOptions options_;
  detail::Pcg64 random_;
  std::vector<double> scores_;  // reused between calls
};

}  // namespace executorch_openvino::generation
