// What the engine needs of a language model: a call that feeds tokens at a position and returns
// logits, and the model's limits. A loaded ExecuTorch program (program_model.h) is one; a model
// behind callbacks (callback_model.h: an eager PyTorch model in a test) is another.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/outcome.h"

namespace executorch_openvino::generation {

// One call's logits: `rows` rows of vocab floats, one per token given, or the last token's only.
// `data` stays valid until the model's next call.
struct Logits {
  const float* data = nullptr;
  size_t rows = 0;
};

class LanguageModel {
 public:
  virtual ~LanguageModel() = default;
  // Feeds `tokens` at positions position .. position + n - 1. A model keeps its own KV caches: a
  // call at an earlier position than the last one's end goes back (the positions from there on are
  // forgotten or overwritten).
  virtual Outcome<Logits> step(const std::vector<int64_t>& tokens, int64_t position) = 0;
  virtual size_t vocab() const = 0;
  virtual int64_t context() const = 0;          // positions the caches hold
  virtual int64_t max_call_tokens() const = 0;  // tokens one call takes (a longer prompt goes in pieces)
  virtual bool all_logits() const = 0;          // whether step returns every position's logits
  // The program's own special ids (its metadata), when it names them.
  virtual std::vector<int64_t> eos_ids() const { return {}; }
  virtual int64_t bos_id() const { return -1; }  // -1: none
  // The delegate's owner of its methods (executorch_openvino_set_load_owner): its saved states are
  // its own. 0: a model whose state is not the delegate's (behind a callback).
  virtual uint64_t state_owner() const { return 0; }
  // Around each generation (Conversation::generate): a model whose steps wait for others' (batch.h)
  // knows which conversations are generating.
  virtual void begin_generation() {}
  virtual void end_generation() {}
};

// Feeds `tokens` from `start` in calls of at most max_call_tokens; the last call's logits.
Outcome<Logits> feed(LanguageModel& model, const std::vector<int64_t>& tokens, int64_t start);

// The row of `logits` for position `index` of the call (the last row when the model returns one).
inline const float* row_of(const LanguageModel& model, const Logits& logits, size_t index) {
  const size_t row = logits.rows == 1 ? 0 : index;
  return logits.data + row * model.vocab();
}

}  // namespace executorch_openvino::generation
