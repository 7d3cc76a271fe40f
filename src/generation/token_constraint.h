// What the next token may be: a per-step mask the engine applies before it chooses (structured
// output: a JSON schema, a regex, a grammar), and the tokens chosen, told back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/outcome.h"

namespace executorch_openvino::generation {

// One 32-bit word per 32 tokens: token t is allowed when bit (t % 32) of word t / 32 is set.
using TokenBits = std::vector<uint32_t>;

inline bool token_allowed(const TokenBits& bits, int64_t token) {
  const auto word = static_cast<size_t>(token) / 32;
  return token >= 0 && word < bits.size() && ((bits[word] >> (token % 32)) & 1u) != 0;
}

class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;
  // Back to the start: nothing accepted (each generation starts the constraint again).
  virtual Status reset() = 0;
  // The tokens allowed after those accepted so far, into `bits` (resized to (vocab + 31) / 32 words
  // by the caller). End-of-sequence tokens are allowed only where the constraint may end.
  virtual Status allowed(TokenBits& bits) = 0;
  // The token chosen; a failure when it was not allowed.
  virtual Status accept(int64_t token) = 0;
  // Forgets the last `count` accepted tokens (drafts the model rejected).
  virtual Status rollback(size_t count) = 0;
  // Whether the text so far is complete (the constraint would accept an end here).
  virtual bool complete() = 0;
  // Whether nothing but an end may follow (the constraint stopped).
  virtual bool stopped() = 0;
};

}  // namespace executorch_openvino::generation
