// A language model behind a C callback (eov_program_from_callback): an eager PyTorch model in a test
// or a benchmark, another runtime; the engine drives it as it drives a program.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "executorch_openvino/generation.h"
#include "generation/language_model.h"

namespace executorch_openvino::generation {

class CallbackModel : public LanguageModel {
 public:
  CallbackModel(eov_step_fn step, void* user, size_t vocab, int64_t context, int64_t max_call_tokens, bool all_logits)
      : step_(step), user_(user), vocab_(vocab), context_(context), max_call_tokens_(max_call_tokens),
        all_logits_(all_logits) {}

  Outcome<Logits> step(const std::vector<int64_t>& tokens, int64_t position) override;
  size_t vocab() const override { return vocab_; }
  int64_t context() const override { return context_; }
  int64_t max_call_tokens() const override { return max_call_tokens_; }
  bool all_logits() const override { return all_logits_; }

 private:
  eov_step_fn step_;
  void* user_;
  size_t vocab_;
  int64_t context_, max_call_tokens_;
  bool all_logits_;
  // Room for the rows a call may return, grown but never filled: the callback writes the rows it
  // returns, and a vector's zero fill touched every byte of a long prompt's room (1024 tokens at a
  // 152k vocabulary: 622 MB and 0.35 s) when one row came back.
  std::unique_ptr<float[]> logits_;
  size_t capacity_ = 0;
};

}  // namespace executorch_openvino::generation
