// A language-model program through ExecuTorch's Module (program_model.h).
#include "generation/program_model.h"

#include <atomic>

#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor_ptr.h>
#include <executorch/extension/tensor/tensor_ptr_maker.h>

#include "executorch_openvino/backend.h"
#include "generation/program_calls.h"

namespace executorch_openvino::generation {

using executorch::extension::Module;
using executorch::runtime::Error;
using executorch::runtime::EValue;

struct ProgramModel::Loaded {
  std::unique_ptr<Module> module;
  std::vector<EValue> outputs;  // the last call's, which the logits point into
};

ProgramModel::~ProgramModel() = default;

Outcome<std::unique_ptr<ProgramModel>> ProgramModel::load(const std::string& pte, const std::string& data,
                                                          const std::string& method) {
  std::unique_ptr<ProgramModel> model(new ProgramModel());
  model->loaded_ = std::make_unique<Loaded>();
  model->pte_ = pte;
  model->method_ = method;
  auto opened = open_program(pte, data);
  if (!opened) return opened.failure();
  auto& module = model->loaded_->module;
  module = std::move(opened.value());
  const auto invalid = [&](const std::string& message) {
    return Failure{FailureKind::kInvalidArgument, pte + ": " + message};
  };
  auto names = module->method_names();
  if (!names.ok()) return invalid(why_failed("cannot read its methods", names.error()));
  if (names->count(method) == 0) return invalid("the program has no method '" + method + "'");
  auto meta = module->method_meta(method);
  if (!meta.ok()) return invalid(why_failed("cannot read the signature of " + method, meta.error()));
  auto tokens = meta->input_tensor_meta(0), position = meta->input_tensor_meta(1);
  auto logits = meta->output_tensor_meta(0);
  if (meta->num_inputs() != 2 || meta->num_outputs() < 1 || !tokens.ok() || !position.ok() || !logits.ok() ||
      tokens->sizes().size() != 2 || position->sizes().size() != 1 ||
      (logits->sizes().size() != 2 && logits->sizes().size() != 3))
    return invalid(method + " is not a language model's method: it must take the tokens [1, n] and their "
                   "position ([1] or [n]) and return logits");
  const size_t rank = logits->sizes().size();
  model->max_call_tokens_ = tokens->sizes()[1];
  model->start_only_ = position->sizes()[0] == 1;
  // [1, 1, vocab] from a method that takes more tokens a call returns the last position's row only (the
  // openvino recipe's default): such a program cannot check drafts.
  model->all_logits_ = rank == 3 && (logits->sizes()[1] > 1 || model->max_call_tokens_ == 1);
  model->vocab_ = static_cast<size_t>(logits->sizes()[rank - 1]);
  // The method's partitions are this program's alone: saving or restoring its state (a session's, a
  // prefix's) never reaches another program loaded in the process.
  static std::atomic<uint64_t> next_owner{1};
  model->owner_ = next_owner.fetch_add(1);
  executorch_openvino_set_load_owner(model->owner_);
  const Error loaded = module->load_method(method);
  executorch_openvino_set_load_owner(0);
  if (loaded != Error::Ok) return invalid(why_failed("cannot load the method " + method, loaded));
  model->context_ = model->max_call_tokens_ + (model->start_only_ ? 1 : 0);
  for (const char* name : {"get_max_context_len", "get_max_seq_len"}) {
    std::vector<int64_t> value = constant_method(*module, name);
    if (!value.empty() && value.front() > 0) {
      model->context_ = value.front();
      break;
    }
  }
  model->eos_ = constant_method(*module, "get_eos_ids");
  if (model->eos_.empty()) model->eos_ = constant_method(*module, "get_eos_id");
  std::vector<int64_t> bos = constant_method(*module, "get_bos_id");
  if (!bos.empty()) model->bos_ = bos.front();
  return model;
}

Outcome<Logits> ProgramModel::step(const std::vector<int64_t>& tokens, int64_t position) {
  if (tokens.empty() || static_cast<int64_t>(tokens.size()) > max_call_tokens_)
    return Failure{FailureKind::kInvalidArgument, "a call takes 1 to " + std::to_string(max_call_tokens_) +
                                                      " tokens, not " + std::to_string(tokens.size())};
  ids_ = tokens;
  positions_.clear();
  if (start_only_) {
    positions_.push_back(position);
  } else {
    for (size_t i = 0; i < tokens.size(); ++i) positions_.push_back(position + static_cast<int64_t>(i));
  }
  return call(all_logits_ ? tokens.size() : 0,
              "at position " + std::to_string(position) + " with " + std::to_string(tokens.size()) + " tokens");
}

std::string ProgramModel::why_not_sequences() const {
  if (start_only_)
    return "its method takes the first position only (ExecuTorch's Llama convention); several conversations in "
           "one call need each token's position (a Hugging Face program's cache_position)";
  if (!all_logits_)
    return "it returns the last position's logits only; several conversations in one call need a row for each "
           "(export it with full logits: the openvino recipe's logits=\"all\", export-hf --logits all)";
  return "";
}

Outcome<Logits> ProgramModel::step_sequences(const std::vector<Sequence>& sequences) {
  if (std::string why = why_not_sequences(); !why.empty())
    return Failure{FailureKind::kInvalidArgument, pte_ + ": " + why};
  ids_.clear();
  positions_.clear();
  std::vector<int64_t> slots, counts;
  for (const Sequence& sequence : sequences) {
    if (sequence.tokens == nullptr || sequence.tokens->empty())
      return Failure{FailureKind::kInvalidArgument, "a sequence of a call has no tokens"};
    for (size_t i = 0; i < sequence.tokens->size(); ++i) {
      ids_.push_back((*sequence.tokens)[i]);
      positions_.push_back(sequence.position + static_cast<int64_t>(i));
    }
    slots.push_back(sequence.slot);
    counts.push_back(static_cast<int64_t>(sequence.tokens->size()));
  }
  if (ids_.empty() || static_cast<int64_t>(ids_.size()) > max_call_tokens_)
    return Failure{FailureKind::kInvalidArgument, "a call takes 1 to " + std::to_string(max_call_tokens_) +
                                                      " tokens, not " + std::to_string(ids_.size())};
  executorch_openvino_set_sequences(slots.data(), counts.data(), slots.size());
  Outcome<Logits> logits = call(ids_.size(), "with " + std::to_string(sequences.size()) + " sequences of " +
                                                 std::to_string(ids_.size()) + " tokens");
  executorch_openvino_set_sequences(nullptr, nullptr, 0);  // a call that failed before the delegate left it
  return logits;
}

Outcome<Logits> ProgramModel::call(size_t rows_promised, const std::string& what) {
  auto ids = executorch::extension::from_blob(ids_.data(), {1, static_cast<int32_t>(ids_.size())},
                                              executorch::aten::ScalarType::Long);
  auto where = executorch::extension::from_blob(positions_.data(), {static_cast<int32_t>(positions_.size())},
                                                executorch::aten::ScalarType::Long);
  auto out = loaded_->module->execute(method_, {EValue(ids), EValue(where)});
  if (!out.ok())
    return Failure{FailureKind::kOpenVinoError, pte_ + ": " + why_failed(method_ + " failed " + what, out.error())};
  loaded_->outputs = std::move(*out);
  if (loaded_->outputs.empty() || !loaded_->outputs.front().isTensor())
    return Failure{FailureKind::kInvalidArgument, pte_ + ": " + method_ + " returned no logits tensor"};
  const auto& logits = loaded_->outputs.front().toTensor();
  if (logits.scalar_type() != executorch::aten::ScalarType::Float)
    return Failure{FailureKind::kInvalidArgument, pte_ + ": the logits are not float32"};
  const auto rows = static_cast<size_t>(logits.numel()) / vocab_;
  if (rows_promised != 0 && rows != rows_promised)  // a row per token was promised; reading past one would be wrong
    return Failure{FailureKind::kInvalidArgument, pte_ + ": " + method_ + " returned " + std::to_string(rows) +
                                                      " rows of logits for " + std::to_string(rows_promised) +
                                                      " tokens"};
  return Logits{logits.const_data_ptr<float>(), rows};
}

}  // namespace executorch_openvino::generation
