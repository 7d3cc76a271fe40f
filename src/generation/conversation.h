// The engine: a conversation on a language model, continued one generation at a time. Every front
// (the C entry points of include/executorch_openvino/generation.h, hence the Python package, the
// command line and C++ applications) generates through Conversation::generate.
//
// A generation is given the whole conversation so far; the model keeps the longest part of it its
// caches already hold and is fed the rest (continuing, going back, editing a turn and reusing a
// prefix are all this: a program lowered with executorch_openvino forgets the positions a call
// starts before, docs/conversation-state.md). Then it chooses tokens until an end: an end-of-sequence
// id, max_new_tokens, the context, a stop string, the constraint's end, a callback or cancel().
//
// Speculative decoding feeds the last token and k drafts in one call, keeps the longest run of
// drafts the model itself chooses there (its sampler's choice among what the constraint allows) and
// the model's token after them, and starts the next call right after. Greedy, the ids are plain
// greedy decoding's; sampling, each position's token is drawn as plain sampling draws it and a draft
// is kept when the draw is that draft (the first draw that differs is the token there, never drawn
// again), so every token is distributed as in plain sampling and a seed gives the same ids.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/outcome.h"
#include "generation/drafting.h"
#include "generation/language_model.h"
#include "generation/sampling.h"
#include "generation/text_stream.h"
#include "generation/timestamp_rule.h"
#include "generation/token_constraint.h"

namespace executorch_openvino::generation {

struct GenerationRequest {
  size_t max_new_tokens = 128;
  SamplingOptions sampling;
  std::vector<int64_t> eos;          // ids that end the generation (not part of it)
  Drafter* drafter = nullptr;        // speculative decoding when set
  size_t max_draft = 5;
  const Vocabulary* vocabulary = nullptr;  // for text: on_text and stop strings
  std::vector<std::string> stops;
  TokenConstraint* constraint = nullptr;   // started again by each generation
  std::vector<int64_t> suppress;        // ids never chosen (transformers' suppress_tokens)
  std::vector<int64_t> begin_suppress;  // ids not chosen as the first token after the prompt
  std::optional<TimestampRule> timestamps;  // Whisper's, applied after the suppressed tokens
  std::function<bool(int64_t)> on_token;   // true: stop
  std::function<bool(const std::string&)> on_text;  // whole UTF-8 characters; true: stop
  std::function<bool(const float*, size_t)> on_logits;  // each chosen token's row of logits; true: stop
};

struct GenerationResult {
  std::vector<int64_t> tokens;  // chosen, an end-of-sequence id excluded
  std::string stopped_by = "length";  // length, eos, context, stop, callback, cancelled, constraint
  size_t prompt_tokens = 0;     // fed before the first choice
  size_t reused_tokens = 0;     // of the conversation given, already held by the model
  size_t calls = 0, drafted = 0, accepted = 0;
  double prefill_seconds = 0, decode_seconds = 0;
  double first_token_seconds = 0;  // from the call to the first token chosen
};

class Conversation {
 public:
  explicit Conversation(LanguageModel& model) : model_(&model) {}

  Outcome<GenerationResult> generate(const std::vector<int64_t>& conversation, const GenerationRequest& request);

  // Held, then the last token chosen (not yet fed).
  const std::vector<int64_t>& tokens() const { return tokens_; }
  // The tokens the model's caches hold.
  const std::vector<int64_t>& held() const { return held_; }
  // The model's state changed outside this conversation (another one ran, a saved state was
  // restored): it holds `tokens` now (none: start again at position 0).
  void reset(std::vector<int64_t> tokens = {});
  // The same, for a state read back (a state file): the caches hold the first `held` of `tokens`, and
  // the rest is the last token chosen, not yet fed.
  void resume(std::vector<int64_t> tokens, size_t held);
  // Ends the running generation at its next token; safe from any thread.
  void cancel() { cancelled_.store(true); }

 private:
  LanguageModel* model_;
  std::vector<int64_t> held_, tokens_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace executorch_openvino::generation
