// A speech-recognition program as optimum-executorch exports Whisper: `encoder(features) -> states`
// for one window of audio, and `text_decoder(token [1, 1], states, position [1]) -> logits` one token
// a call, its self-attention caches held by the program. The engine generates a window's text over it
// as over any language model: encode() runs the encoder once and keeps the states, and every decoder
// call of the window is given the same buffer, which the delegate is told is unchanged (it would
// compare 3 MB a step at whisper-base). A program exported with unplanned inputs (the openvino
// recipe's) reads the buffer where it is; a planned one has ExecuTorch copy it in at every call.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "generation/language_model.h"

namespace executorch_openvino::generation {

class SpeechModel : public LanguageModel {
 public:
  static constexpr const char* kEncoder = "encoder";
  static constexpr const char* kDecoder = "text_decoder";

  // `data`: the .ptd file of weights kept apart ("" when none). A failure names the file and why.
  static Outcome<std::unique_ptr<SpeechModel>> load(const std::string& pte, const std::string& data);
  ~SpeechModel() override;

  // Runs the encoder on one window's features (float32, `shape` as the encoder takes them) and gives its
  // states to the decoder calls that follow, until the next encode.
  Status encode(const float* features, const std::vector<int64_t>& shape);
  // The encoder's input shape (one window's features).
  const std::vector<int64_t>& feature_shape() const { return feature_shape_; }
  // The encoder's output shape, and the last window's states (empty before the first).
  const std::vector<int64_t>& states_shape() const { return states_shape_; }
  const std::vector<float>& states() const;
  // The decoder's first token (the program's decoder_start_token_id), -1 when it does not say.
  int64_t start_token() const { return start_; }

  Outcome<Logits> step(const std::vector<int64_t>& tokens, int64_t position) override;
  size_t vocab() const override { return vocab_; }
  int64_t context() const override { return context_; }
  int64_t max_call_tokens() const override { return 1; }
  bool all_logits() const override { return true; }
  std::vector<int64_t> eos_ids() const override { return eos_; }
  uint64_t state_owner() const override { return owner_; }

 private:
  SpeechModel() = default;
  struct Loaded;  // ExecuTorch's Module, kept out of this header
  std::unique_ptr<Loaded> loaded_;
  std::string pte_;
  std::vector<int64_t> feature_shape_, states_shape_;
  size_t vocab_ = 0;
  int64_t context_ = 0, start_ = -1;
  uint64_t owner_ = 0;
  std::vector<int64_t> eos_;
  bool encoded_ = false;
  bool decoded_since_encode_ = false;  // a decoder call succeeded with this window's states
  int64_t id_ = 0, position_ = 0;  // the decoder's token and position inputs' memory
};

}  // namespace executorch_openvino::generation
