// Whisper's timestamp rules, so that a window transcribed with timestamps decodes whole in the engine
// as transformers' WhisperTimeStampLogitsProcessor decides it: timestamps come in pairs (a text token
// between pairs, the end id after a lone one), never go back, the first token is a timestamp (no later
// than max_initial), <|notimestamps|> is never chosen, and where the timestamps together are likelier
// than any one text token a timestamp is chosen. The engine applies it after the suppressed tokens,
// as transformers' Whisper orders its processors, to the tokens those leave.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/outcome.h"
#include "generation/token_constraint.h"

namespace executorch_openvino::generation {

struct TimestampRule {
  int64_t timestamp_begin = 0;   // the first timestamp id (<|0.00|>); every id from it on is one
  int64_t no_timestamps = 0;     // <|notimestamps|>, never chosen
  int64_t eos = 0;               // after a lone timestamp, no id below it (the text tokens)
  size_t begin_index = 0;        // the conversation's length where the rules' sequence starts
  int64_t max_initial = -1;      // the first timestamp is at most timestamp_begin + this; -1: any
  bool from_probability = true;  // transformers' _detect_timestamp_from_logprob

  // The ids, checked against the vocabulary (an invalid-argument failure naming the wrong one).
  Status validate(size_t vocab) const;
  // Clears in `allowed` what the rules refuse after `history` (the conversation so far), given the
  // row of logits the next token is chosen from.
  void restrict(const float* row, size_t vocab, const std::vector<int64_t>& history, TokenBits& allowed) const;
};

}  // namespace executorch_openvino::generation
