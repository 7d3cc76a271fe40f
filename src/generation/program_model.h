// A language-model program loaded with ExecuTorch's Module: its calling convention read from the
// method's signature, its limits and special ids from the constant methods LLM exports write
// (ExecuTorch's export_llm, optimum-executorch, the package's text_runner_metadata).
//
// Two conventions are known: (tokens [1, n], start position [1]), ExecuTorch's export_llm's, and
// (input_ids [1, n], cache_position [n]), optimum-executorch's and transformers'. Logits [1, n, vocab]
// are every position's (speculative decoding verifies drafts with them); [1, vocab] the last one's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "generation/language_model.h"

namespace executorch_openvino::generation {

class ProgramModel : public LanguageModel {
 public:
  // `data`: the .ptd file of weights kept apart ("" when none). A failure names the file and why.
  static Outcome<std::unique_ptr<ProgramModel>> load(const std::string& pte, const std::string& data,
                                                     const std::string& method = "forward");
  ~ProgramModel() override;

  Outcome<Logits> step(const std::vector<int64_t>& tokens, int64_t position) override;

  // Several conversations' tokens in one call (batch.h): each sequence continues its own slot of the
  // delegate's paged caches (executorch_openvino_set_sequences). The logits have a row per token, in
  // the sequences' order. Needs a program that gives each token's position and returns every row.
  struct Sequence {
    int64_t slot = 0;
    const std::vector<int64_t>* tokens = nullptr;
    int64_t position = 0;
  };
  Outcome<Logits> step_sequences(const std::vector<Sequence>& sequences);
  // Why step_sequences cannot serve this program ("" when it can).
  std::string why_not_sequences() const;
  size_t vocab() const override { return vocab_; }
  int64_t context() const override { return context_; }
  int64_t max_call_tokens() const override { return max_call_tokens_; }
  bool all_logits() const override { return all_logits_; }
  std::vector<int64_t> eos_ids() const override { return eos_; }
  int64_t bos_id() const override { return bos_; }
  uint64_t state_owner() const override { return owner_; }

 private:
  ProgramModel() = default;
  struct Loaded;  // ExecuTorch's Module, kept out of this header
  std::unique_ptr<Loaded> loaded_;
  std::string pte_, method_;
  size_t vocab_ = 0;
  int64_t context_ = 0, max_call_tokens_ = 0, bos_ = -1;
  bool start_only_ = true, all_logits_ = false;
  uint64_t owner_ = 0;
  std::vector<int64_t> eos_;
  std::vector<int64_t> ids_, positions_;  // the inputs' memory, reused between calls
  // One call: ids_ and positions_ as filled, `rows` rows of logits promised.
  Outcome<Logits> call(size_t rows, const std::string& what);
};

}  // namespace executorch_openvino::generation
