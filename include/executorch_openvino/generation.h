// Text generation, greedy or sampled (sampling.h), plain or speculative, over an ExecuTorch
// language-model program loaded with executorch::extension::Module (header-only; C++17). The same
// loop as the Python package's executorch_openvino.generation (docs/generation.md):
//
//   Module module("model.pte");
//   auto model = executorch_openvino::generation::TextModel::load(module);
//   executorch_openvino::generation::PromptLookup lookup;
//   auto ids = executorch_openvino::generation::generate(*model, prompt, 128, {eos}, &lookup);
//
// Speculative decoding feeds the last token and k drafts in one call, keeps the longest run of drafts
// the model itself would choose and the model's token after it, and starts the next call right after
// them: a program lowered with executorch_openvino forgets the rejected positions (its grown caches
// are cut back; docs/conversation-state.md). Greedy, the ids are plain greedy decoding's; sampling, each
// position's token is drawn as plain sampling draws it and a draft is kept when the draw is that draft
// (the first draw that differs is the token there), so every token is distributed as in plain
// sampling. It needs a program that returns every position's logits ([1, n, vocab]).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor_ptr.h>

#include "sampling.h"

namespace executorch_openvino::generation {

using executorch::runtime::Error;
using executorch::runtime::Result;

// A language-model method: (tokens [1, n] int64, start position [1] or positions [n] int64) -> logits.
class TextModel {
 public:
  // Reads the method's signature and the context from the program's metadata (get_max_context_len,
  // else get_max_seq_len); InvalidArgument for a method of another shape.
  static Result<TextModel> load(executorch::extension::Module& module, const std::string& method = "forward") {
    Result<executorch::runtime::MethodMeta> meta = module.method_meta(method);
    if (!meta.ok()) return meta.error();
    if (meta->num_inputs() != 2 || meta->num_outputs() < 1) return Error::InvalidArgument;
    auto tokens = meta->input_tensor_meta(0), position = meta->input_tensor_meta(1), logits = meta->output_tensor_meta(0);
    if (!tokens.ok() || !position.ok() || !logits.ok()) return Error::InvalidArgument;
    if (tokens->sizes().size() != 2 || position->sizes().size() != 1) return Error::InvalidArgument;
    const size_t rank = logits->sizes().size();
    if (rank != 2 && rank != 3) return Error::InvalidArgument;
    TextModel model(module, method);
    model.max_call_tokens_ = tokens->sizes()[1];
    model.start_only_ = position->sizes()[0] == 1;
    model.all_logits_ = rank == 3;
    model.vocab_ = static_cast<size_t>(logits->sizes()[rank - 1]);
    model.context_ = model.max_call_tokens_ + (model.start_only_ ? 1 : 0);
    for (const char* name : {"get_max_context_len", "get_max_seq_len"}) {
      auto names = module.method_names();
      if (!names.ok() || names->count(name) == 0) continue;
      auto value = module.execute(name);
      if (value.ok() && !value->empty() && value->front().isInt()) {
        model.context_ = value->front().toInt();
        break;
      }
    }
    return model;
  }

  // The logits of the tokens given, a row of vocab() floats each (one row, the last token's, when the
  // program returns only that).
  Result<std::vector<float>> step(const std::vector<int64_t>& tokens, int64_t position, size_t* rows) {
    std::vector<int64_t> where;
    if (start_only_) {
      where = {position};
    } else {
      for (size_t i = 0; i < tokens.size(); ++i) where.push_back(position + static_cast<int64_t>(i));
    }
    auto ids = executorch::extension::make_tensor_ptr({1, static_cast<int32_t>(tokens.size())}, tokens);
    auto positions = executorch::extension::make_tensor_ptr({static_cast<int32_t>(where.size())}, where);
    auto out = module_->execute(method_, {executorch::runtime::EValue(ids), executorch::runtime::EValue(positions)});
    if (!out.ok()) return out.error();
    if (out->empty() || !out->front().isTensor()) return Error::InvalidProgram;
    const auto& logits = out->front().toTensor();
    if (logits.scalar_type() != executorch::aten::ScalarType::Float) return Error::InvalidProgram;
    const float* data = logits.const_data_ptr<float>();
    *rows = static_cast<size_t>(logits.numel()) / vocab_;
    return std::vector<float>(data, data + logits.numel());
  }

  int64_t context() const { return context_; }
  int64_t max_call_tokens() const { return max_call_tokens_; }
  bool all_logits() const { return all_logits_; }
  size_t vocab() const { return vocab_; }

 private:
  TextModel(executorch::extension::Module& module, std::string method) : module_(&module), method_(std::move(method)) {}
  executorch::extension::Module* module_;
  std::string method_;
  int64_t context_ = 0;
  int64_t max_call_tokens_ = 0;
  bool start_only_ = true;
  bool all_logits_ = false;
  size_t vocab_ = 0;
};

inline int64_t argmax(const float* row, size_t vocab) {
  return static_cast<int64_t>(std::max_element(row, row + vocab) - row);  // the first of equal maxima
}

// Feeds `tokens` from `start` in calls of at most max_call_tokens; the last position's logits.
inline Result<std::vector<float>> prefill(TextModel& model, const std::vector<int64_t>& tokens, int64_t start) {
  if (tokens.empty() || start + static_cast<int64_t>(tokens.size()) > model.context()) return Error::InvalidArgument;
  std::vector<float> last;
  for (size_t begin = 0; begin < tokens.size(); begin += static_cast<size_t>(model.max_call_tokens())) {
    const size_t end = std::min(tokens.size(), begin + static_cast<size_t>(model.max_call_tokens()));
    size_t rows = 0;
    auto logits = model.step({tokens.begin() + begin, tokens.begin() + end}, start + static_cast<int64_t>(begin), &rows);
    if (!logits.ok()) return logits.error();
    last.assign(logits->end() - model.vocab(), logits->end());
  }
  return last;
}

class Drafter {
 public:
  virtual ~Drafter() = default;
  // Up to `limit` tokens likely to follow `history`.
  virtual std::vector<int64_t> draft(const std::vector<int64_t>& history, size_t limit) = 0;
  // Whether asking costs about nothing (prompt lookup): such a drafter is probed at every plain step
  // until a guess lands, any other after growing pauses (DraftSchedule).
  virtual bool free_to_ask() const { return false; }
};

// When speculative decoding drafts and how many tokens a call carries (python/executorch_openvino/
// generation/draft_schedule.py says why, with the costs measured): drafts are fed at one width,
// padded with the last; a drafter is probed before it is trusted, at the start and after each miss
// (asked for one guess at a plain step; its drafts are fed only once that guess was the model's
// choice), so drafts that never land never reach the target. A free drafter is probed at every plain
// step; any other after 1, 4, 16, then every 64 plain steps while it keeps missing (a wrong or missing
// guess, or a round that kept nothing); a round that kept a draft starts the count again.
class DraftSchedule {
 public:
  static constexpr size_t kLongestPause = 64;

  DraftSchedule(Drafter& drafter, size_t max_draft) : drafter_(&drafter), max_draft_(max_draft), limit_(max_draft) {}

  // The tokens to feed after the last one (none, or `span`); `proposed` says how many the drafter
  // proposed (the rest repeat its last).
  std::vector<int64_t> drafts(const std::vector<int64_t>& conversation, size_t span, size_t& proposed) {
    proposed = 0;
    probed_ = has_guess_ = false;
    if (span == 0) return {};
    if (waiting_ > 0) {
      --waiting_;
      return {};
    }
    if (probing_) {
      probed_ = true;
      const std::vector<int64_t> guess = drafter_->draft(conversation, 1);
      has_guess_ = !guess.empty();
      if (has_guess_) guess_ = guess.front();
      return {};
    }
    std::vector<int64_t> drafts = drafter_->draft(conversation, std::min(limit_, span));
    if (drafts.size() > span) drafts.resize(span);
    proposed = drafts.size();
    if (proposed > 0) drafts.resize(span, drafts.back());
    return drafts;
  }

  // The model chose `token` after a call without drafts.
  void chosen(int64_t token) {
    if (!probed_) return;
    if (has_guess_ && guess_ == token) {
      probing_ = false;
    } else {
      missed();
    }
  }

  // A call with drafts kept `accepted` of them (`proposed` by the drafter).
  void kept(size_t proposed, size_t accepted) {
    limit_ = accepted >= proposed ? std::min(max_draft_, limit_ + 1) : std::max<size_t>(1, accepted);
    if (accepted > 0) {
      pause_ = 0;
    } else {
      probing_ = true;
      missed();
    }
  }

 private:
  // The next probe comes after a longer pause, unless asking costs nothing; the probe is the
  // pause's last plain step.
  void missed() {
    if (drafter_->free_to_ask()) return;
    pause_ = std::min(pause_ == 0 ? 1 : 4 * pause_, kLongestPause);
    waiting_ = pause_ - 1;
  }

  Drafter* drafter_;
  size_t max_draft_, limit_;
  bool probing_ = true, probed_ = false;
  bool has_guess_ = false;
  int64_t guess_ = 0;
  size_t pause_ = 0, waiting_ = 0;
};

// Prompt lookup: the longest of the history's last max_ngram .. 1 tokens that occurred before
// proposes what followed its most recent earlier occurrence; a proposal cut short by the end of the
// history is looked up again from its own end (a short cycle drafts several turns of itself).
class PromptLookup : public Drafter {
 public:
  explicit PromptLookup(size_t max_ngram = 3) : max_ngram_(max_ngram) {}
  bool free_to_ask() const override { return true; }
  std::vector<int64_t> draft(const std::vector<int64_t>& history, size_t limit) override {
    std::vector<int64_t> drafts;
    while (drafts.size() < limit) {
      const size_t before = drafts.size();
      continuation(history, drafts, limit - before);
      if (drafts.size() == before) break;
    }
    return drafts;
  }

 private:
  // Appends what followed, in `history`, the longest final n-gram of history + drafts found there
  // with a token after it (most recent first).
  void continuation(const std::vector<int64_t>& history, std::vector<int64_t>& drafts, size_t room) const {
    const size_t size = history.size(), end = size + drafts.size();
    auto at = [&](size_t i) { return i < size ? history[i] : drafts[i - size]; };
    // An n-gram in the history with a token after it: n <= size - 1.
    for (size_t n = std::min({max_ngram_, end > 0 ? end - 1 : 0, size > 0 ? size - 1 : 0}); n >= 1; --n) {
      for (size_t start = size - n; start-- > 0;) {
        size_t i = 0;
        while (i < n && history[start + i] == at(end - n + i)) ++i;
        if (i == n) {
          const size_t from = start + n, to = std::min(size, from + room);
          drafts.insert(drafts.end(), history.begin() + from, history.begin() + to);
          return;
        }
      }
    }
  }

  size_t max_ngram_;
};

// A smaller program with the same vocabulary drafts greedily; it keeps its own conversation and goes
// back where the target rejected its drafts.
class DraftModel : public Drafter {
 public:
  explicit DraftModel(TextModel& model) : model_(&model) {}
  std::vector<int64_t> draft(const std::vector<int64_t>& history, size_t limit) override {
    if (limit == 0 || static_cast<int64_t>(history.size() + limit) > model_->context()) return {};
    size_t common = 0;
    while (common < fed_.size() && common < history.size() && fed_[common] == history[common]) ++common;
    if (common == history.size()) --common;  // a call needs one token at least
    auto logits = prefill(*model_, {history.begin() + common, history.end()}, static_cast<int64_t>(common));
    if (!logits.ok()) return {};
    fed_ = history;
    std::vector<int64_t> drafts{argmax(logits->data(), model_->vocab())};
    while (drafts.size() < limit) {
      size_t rows = 0;
      auto next = model_->step({drafts.back()}, static_cast<int64_t>(fed_.size()), &rows);
      if (!next.ok()) break;
      fed_.push_back(drafts.back());
      drafts.push_back(argmax(next->data() + (rows - 1) * model_->vocab(), model_->vocab()));
    }
    return drafts;
  }

 private:
  TextModel* model_;
  std::vector<int64_t> fed_;
};

struct Statistics {
  size_t calls = 0;  // decode calls of the model
  size_t drafted = 0;
  size_t accepted = 0;
};

// Generation after `prompt` (a new conversation at position 0): up to max_new_tokens ids, an id of
// `eos` ending it (not returned). `on_token` sees each id as it is chosen and returns true to stop.
// With a drafter, speculative (InvalidArgument for a program returning the last logits only). Without
// a sampler, greedy. InvalidArgument for sampling options out of range, logits with NaN or +inf, or,
// with a repetition penalty, ids outside the vocabulary.
inline Result<std::vector<int64_t>> generate(TextModel& model, const std::vector<int64_t>& prompt, size_t max_new_tokens,
                                             const std::vector<int64_t>& eos = {}, Drafter* drafter = nullptr,
                                             size_t max_draft = 5,
                                             const std::function<bool(int64_t)>& on_token = nullptr,
                                             Statistics* statistics = nullptr, Sampler* sampler = nullptr) {
  if (drafter != nullptr && (!model.all_logits() || max_draft == 0)) return Error::InvalidArgument;
  if (sampler != nullptr && !sampler->options().valid()) return Error::InvalidArgument;
  Sampler greedy(SamplingOptions{0.0, 0, 1.0, 1.0, uint64_t{0}});  // never draws
  Sampler& choose = sampler != nullptr ? *sampler : greedy;
  Statistics local;
  Statistics& stats = statistics != nullptr ? *statistics : local;
  std::vector<int64_t> conversation = prompt, generated;
  auto logits = prefill(model, prompt, 0);
  if (!logits.ok()) return logits.error();
  int64_t position = static_cast<int64_t>(conversation.size());  // where the next token goes
  const size_t vocab = model.vocab();
  bool done = max_new_tokens == 0;
  auto take = [&](int64_t token) {
    if (std::find(eos.begin(), eos.end(), token) != eos.end()) return true;
    generated.push_back(token);
    conversation.push_back(token);
    if (on_token && on_token(token)) return true;
    return generated.size() >= max_new_tokens || static_cast<int64_t>(conversation.size()) >= model.context();
  };
  if (done) return generated;
  int64_t token = choose.next_token(logits->data(), vocab, conversation);
  if (token < 0) return Error::InvalidArgument;
  done = take(token);
  std::optional<DraftSchedule> schedule;
  if (drafter != nullptr) schedule.emplace(*drafter, max_draft);
  while (!done) {
    std::vector<int64_t> drafts;
    size_t proposed = 0;
    if (schedule) {
      const int64_t span = std::min<int64_t>({static_cast<int64_t>(max_draft),
                                              static_cast<int64_t>(max_new_tokens - generated.size()),
                                              model.context() - position - 1, model.max_call_tokens() - 1});
      drafts = schedule->drafts(conversation, static_cast<size_t>(std::max<int64_t>(span, 0)), proposed);
    }
    std::vector<int64_t> fed{token};
    fed.insert(fed.end(), drafts.begin(), drafts.end());
    size_t rows = 0;
    auto out = model.step(fed, position, &rows);
    if (!out.ok()) return out.error();
    ++stats.calls;
    // Drafts the model itself chooses (its sampler's choice, so a penalty applies too); the choice
    // that differs from a draft is the token there, never drawn again (that would favour the draft).
    size_t accepted = 0;
    int64_t differing = -1;
    if (rows == fed.size()) {
      std::vector<int64_t> seen = conversation;
      while (accepted < drafts.size()) {
        const int64_t choice = choose.next_token(out->data() + accepted * vocab, vocab, seen);
        if (choice < 0) return Error::InvalidArgument;
        if (choice != drafts[accepted]) {
          differing = choice;
          break;
        }
        seen.push_back(drafts[accepted++]);
      }
    }
    stats.drafted += proposed;
    stats.accepted += std::min(accepted, proposed);
    if (!drafts.empty()) schedule->kept(proposed, accepted);
    position += 1;
    for (size_t i = 0; i < accepted && !done; ++i) {
      done = take(drafts[i]);
      position += 1;
    }
    if (done) break;
    token = differing >= 0 ? differing
                           : choose.next_token(out->data() + (drafts.empty() ? rows - 1 : accepted) * vocab, vocab,
                                               conversation);
    if (token < 0) return Error::InvalidArgument;
    if (schedule && drafts.empty()) schedule->chosen(token);
    done = take(token);
  }
  return generated;
}

}  // namespace executorch_openvino::generation
