// A Whisper program through ExecuTorch's Module (speech_model.h).
#include "generation/speech_model.h"

#include <atomic>

#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor_ptr.h>
#include <executorch/extension/tensor/tensor_ptr_maker.h>

#include "executorch_openvino/backend.h"
#include "generation/program_calls.h"

namespace executorch_openvino::generation {

using executorch::aten::ScalarType;
using executorch::extension::Module;
using executorch::runtime::Error;
using executorch::runtime::EValue;

struct SpeechModel::Loaded {
  std::unique_ptr<Module> module;
  std::vector<EValue> outputs;  // the last decoder call's, which the logits point into
  std::vector<float> states;    // the window's encoder states
  executorch::extension::TensorPtr bound;  // over `states`, the decoder's input 1
  // Over the model's id_ and position_, made once: a step only writes the two numbers.
  executorch::extension::TensorPtr token, position;
};

namespace {

std::vector<int64_t> sizes_of(const executorch::runtime::TensorInfo& info) {
  return std::vector<int64_t>(info.sizes().begin(), info.sizes().end());
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

}  // namespace

SpeechModel::~SpeechModel() = default;

Outcome<std::unique_ptr<SpeechModel>> SpeechModel::load(const std::string& pte, const std::string& data) {
  std::unique_ptr<SpeechModel> model(new SpeechModel());
  model->loaded_ = std::make_unique<Loaded>();
  model->pte_ = pte;
  auto opened = open_program(pte, data);
  if (!opened) return opened.failure();
  auto& module = model->loaded_->module;
  module = std::move(opened.value());
  const auto invalid = [&](const std::string& message) {
    return Failure{FailureKind::kInvalidArgument, pte + ": " + message};
  };
  auto names = module->method_names();
  if (!names.ok()) return invalid(why_failed("cannot read its methods", names.error()));
  if (names->count(kEncoder) == 0 || names->count(kDecoder) == 0)
    return invalid(std::string("not a speech-recognition program: it needs the methods '") + kEncoder + "' and '" +
                   kDecoder + "' (optimum-executorch's Whisper export)");
  auto encoder = module->method_meta(kEncoder);
  auto decoder = module->method_meta(kDecoder);
  if (!encoder.ok() || !decoder.ok()) return invalid("cannot read the signatures of its encoder and decoder");
  auto features = encoder->input_tensor_meta(0);
  auto states = encoder->output_tensor_meta(0);
  auto token = decoder->input_tensor_meta(0), given_states = decoder->input_tensor_meta(1),
       position = decoder->input_tensor_meta(2);
  auto logits = decoder->output_tensor_meta(0);
  if (encoder->num_inputs() != 1 || !features.ok() || features->scalar_type() != ScalarType::Float || !states.ok() ||
      decoder->num_inputs() != 3 || !token.ok() || !given_states.ok() || !position.ok() || !logits.ok() ||
      sizes_of(*token) != std::vector<int64_t>{1, 1} || sizes_of(*position) != std::vector<int64_t>{1} ||
      sizes_of(*given_states) != sizes_of(*states) || logits->scalar_type() != ScalarType::Float)
    return invalid(std::string("its methods are not a Whisper export's: ") + kEncoder + "(features) -> states and " +
                   kDecoder + "(token [1, 1], states, position [1]) -> logits");
  model->loaded_->token = executorch::extension::from_blob(&model->id_, {1, 1}, ScalarType::Long);
  model->loaded_->position = executorch::extension::from_blob(&model->position_, {1}, ScalarType::Long);
  model->feature_shape_ = sizes_of(*features);
  model->states_shape_ = sizes_of(*states);
  model->vocab_ = static_cast<size_t>(logits->sizes()[logits->sizes().size() - 1]);
  // Both methods' partitions are this program's alone (saved states never reach another program).
  static std::atomic<uint64_t> next_owner{1ull << 62};
  model->owner_ = next_owner.fetch_add(1);
  executorch_openvino_set_load_owner(model->owner_);
  const Error encoder_loaded = module->load_method(kEncoder);
  const Error decoder_loaded = encoder_loaded == Error::Ok ? module->load_method(kDecoder) : encoder_loaded;
  executorch_openvino_set_load_owner(0);
  if (decoder_loaded != Error::Ok) return invalid(why_failed("cannot load its methods", decoder_loaded));
  std::vector<int64_t> context = constant_method(*module, "get_max_seq_len");
  model->context_ = !context.empty() && context.front() > 0 ? context.front() : 448;  // Whisper's positions
  model->eos_ = constant_method(*module, "get_eos_id");
  std::vector<int64_t> start = constant_method(*module, "decoder_start_token_id");
  if (!start.empty()) model->start_ = start.front();
  return model;
}

const std::vector<float>& SpeechModel::states() const { return loaded_->states; }

Status SpeechModel::encode(const float* features, const std::vector<int64_t>& shape) {
  if (features == nullptr || shape != feature_shape_)
    return Failure{FailureKind::kInvalidArgument, pte_ + ": the encoder takes features of shape " +
                                                      shape_text(feature_shape_) + " (one window), not " +
                                                      shape_text(shape)};
  std::vector<int32_t> sizes(shape.begin(), shape.end());
  size_t count = 1;
  for (int64_t size : shape) count *= static_cast<size_t>(size);
  // ExecuTorch's tensor takes a mutable pointer; the encoder only reads its input.
  auto input = executorch::extension::from_blob(const_cast<float*>(features), sizes, ScalarType::Float);
  encoded_ = decoded_since_encode_ = false;
  auto out = loaded_->module->execute(kEncoder, {EValue(input)});
  if (!out.ok()) return Failure{FailureKind::kOpenVinoError, pte_ + ": " + why_failed("the encoder failed", out.error())};
  if (out->empty() || !out->front().isTensor() || out->front().toTensor().scalar_type() != ScalarType::Float)
    return Failure{FailureKind::kInvalidArgument, pte_ + ": the encoder returned no float states"};
  const auto& states = out->front().toTensor();
  const float* values = states.const_data_ptr<float>();
  loaded_->states.assign(values, values + states.numel());
  std::vector<int32_t> state_sizes(states.sizes().begin(), states.sizes().end());
  loaded_->bound = executorch::extension::from_blob(loaded_->states.data(), state_sizes, ScalarType::Float);
  encoded_ = true;
  decoded_since_encode_ = false;
  return ok_status();
}

Outcome<Logits> SpeechModel::step(const std::vector<int64_t>& tokens, int64_t position) {
  if (!encoded_)
    return Failure{FailureKind::kInvalidArgument, pte_ + ": no audio encoded yet: encode a window before decoding"};
  if (tokens.size() != 1)
    return Failure{FailureKind::kInvalidArgument, "the decoder takes 1 token a call, not " + std::to_string(tokens.size())};
  id_ = tokens.front();
  position_ = position;
  // After the window's first call, every call brings the states that call brought: this model holds
  // them, unchanged until the next encode, so the delegate need not compare them.
  executorch_openvino_promise_same_encoder_states(decoded_since_encode_ ? 1 : 0);
  auto out =
      loaded_->module->execute(kDecoder, {EValue(loaded_->token), EValue(loaded_->bound), EValue(loaded_->position)});
  executorch_openvino_promise_same_encoder_states(0);  // a call that failed before the delegate left it
  decoded_since_encode_ = out.ok();
  if (!out.ok())
    return Failure{FailureKind::kOpenVinoError,
                   pte_ + ": " + why_failed(std::string(kDecoder) + " failed at position " + std::to_string(position),
                                            out.error())};
  loaded_->outputs = std::move(*out);
  if (loaded_->outputs.empty() || !loaded_->outputs.front().isTensor())
    return Failure{FailureKind::kInvalidArgument, pte_ + ": " + kDecoder + " returned no logits tensor"};
  const auto& logits = loaded_->outputs.front().toTensor();
  if (static_cast<size_t>(logits.numel()) != vocab_)
    return Failure{FailureKind::kInvalidArgument, pte_ + ": " + kDecoder + " returned " +
                                                      std::to_string(logits.numel()) + " logits, not one row"};
  return Logits{logits.const_data_ptr<float>(), 1};
}

}  // namespace executorch_openvino::generation
