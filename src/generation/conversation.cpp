// The engine's loop (conversation.h).
#include "generation/conversation.h"

#include <algorithm>
#include <chrono>
#include <optional>

namespace executorch_openvino::generation {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Failure invalid(std::string message) { return Failure{FailureKind::kInvalidArgument, std::move(message)}; }

}  // namespace

void Conversation::reset(std::vector<int64_t> tokens) {
  held_ = std::move(tokens);
  tokens_ = held_;
}

void Conversation::resume(std::vector<int64_t> tokens, size_t held) {
  tokens_ = std::move(tokens);
  held_.assign(tokens_.begin(), tokens_.begin() + static_cast<std::ptrdiff_t>(std::min(held, tokens_.size())));
}

Outcome<GenerationResult> Conversation::generate(const std::vector<int64_t>& given, const GenerationRequest& request) {
  cancelled_.store(false);
  LanguageModel& model = *model_;
  struct Generating {  // ends on every way out
    LanguageModel& model;
    explicit Generating(LanguageModel& m) : model(m) { model.begin_generation(); }
    ~Generating() { model.end_generation(); }
  } generating(model);
  const size_t vocab = model.vocab();
  if (given.empty()) return invalid("nothing to continue: the conversation has no tokens (give the prompt's)");
  for (int64_t token : given)
    if (token < 0 || static_cast<size_t>(token) >= vocab)
      return invalid("token " + std::to_string(token) + " is outside the model's vocabulary of " +
                     std::to_string(vocab) + " (a tokenizer for another model?)");
  if (Status valid = request.sampling.validate(); !valid) return valid.failure();
  if (request.drafter != nullptr && request.max_draft == 0) return invalid("max_draft must be at least 1");
  if (request.drafter != nullptr && !model.all_logits())
    return invalid("speculative decoding needs the logits of every position a call is given; this program "
                   "returns the last one's only (export it with full logits: ExecuTorch's export_llm option "
                   "debug.generate_full_logits=true, or the openvino recipe's logits=\"all\" (export-hf --logits "
                   "all))");
  for (const auto* ids : {&request.suppress, &request.begin_suppress})
    for (int64_t token : *ids)
      if (token < 0 || static_cast<size_t>(token) >= vocab)
        return invalid("suppressed token " + std::to_string(token) + " is outside the model's vocabulary of " +
                       std::to_string(vocab));
  if (request.timestamps) {
    if (Status valid = request.timestamps->validate(vocab); !valid) return valid.failure();
  }
  for (const std::string& stop : request.stops)
    if (valid_utf8(stop) != stop) return invalid("a stop string is not valid UTF-8 (it could never occur in the text)");
  if ((!request.stops.empty() || request.on_text) && request.vocabulary == nullptr)
    return invalid("stop strings and streamed text need the tokens' bytes (a vocabulary)");
  if (static_cast<int64_t>(given.size()) > model.context())
    return invalid("the conversation holds " + std::to_string(given.size()) + " tokens, more than the model's context of " +
                   std::to_string(model.context()) + " positions");

  GenerationResult result;
  Sampler sampler(request.sampling);
  std::optional<TextStream> text;
  if (request.vocabulary != nullptr) text.emplace(*request.vocabulary, request.stops);
  TokenConstraint* constraint = request.constraint;
  TokenBits allowed;
  const bool suppressing = !request.suppress.empty() || !request.begin_suppress.empty() || request.timestamps;
  if (constraint != nullptr || suppressing) allowed.resize((vocab + 31) / 32);
  if (constraint != nullptr) {
    if (Status started = constraint->reset(); !started) return started.failure();
  }

  // Feed what the model does not hold yet (at least the last token, whose logits come next).
  size_t common = 0;
  while (common < held_.size() && common < given.size() && held_[common] == given[common]) ++common;
  if (common == given.size()) --common;
  result.reused_tokens = common;
  const auto began = std::chrono::steady_clock::now();
  // The model's caches past `common` are no longer this conversation's, whatever happens next.
  held_.resize(common);
  tokens_ = held_;
  auto fed = feed(model, {given.begin() + static_cast<std::ptrdiff_t>(common), given.end()}, static_cast<int64_t>(common));
  if (!fed) return fed.failure();
  Logits logits = *fed;
  result.prompt_tokens = given.size() - common;
  result.prefill_seconds = seconds_since(began);
  held_ = given;
  tokens_ = given;
  std::vector<int64_t>& conversation = tokens_;
  int64_t position = static_cast<int64_t>(given.size());  // where the next token goes
  const auto decoding = std::chrono::steady_clock::now();
  auto finish = [&](const std::string& reason) {
    result.stopped_by = reason;
    result.decode_seconds = seconds_since(decoding);
    held_.assign(conversation.begin(), conversation.begin() + std::min<int64_t>(position, conversation.size()));
  };
  if (request.max_new_tokens == 0) {
    finish("length");
    return result;
  }

  bool observer_stopped = false;  // on_logits said stop: the token chosen from that row is the last
  // Chooses from one row, among what the constraint allows now.
  auto choose = [&](const float* row, const std::vector<int64_t>& history) -> Outcome<int64_t> {
    bool masked = false;
    if (constraint != nullptr) {
      if (Status made = constraint->allowed(allowed); !made) return made.failure();
      masked = true;
    }
    // Suppressed tokens are never chosen; begin_suppress only as the first token after the prompt.
    const bool first = history.size() == given.size();
    if (!request.suppress.empty() || (first && !request.begin_suppress.empty())) {
      if (!masked) std::fill(allowed.begin(), allowed.end(), ~0u);
      for (int64_t token : request.suppress) allowed[token / 32] &= ~(1u << (token % 32));
      if (first)
        for (int64_t token : request.begin_suppress) allowed[token / 32] &= ~(1u << (token % 32));
      masked = true;
    }
    if (request.timestamps) {
      if (!masked) std::fill(allowed.begin(), allowed.end(), ~0u);
      request.timestamps->restrict(row, vocab, history, allowed);
      masked = true;
    }
    if (request.on_logits && request.on_logits(row, vocab)) observer_stopped = true;
    auto token = sampler.next_token(row, vocab, history, masked ? &allowed : nullptr);
    if (!token) return Failure{token.failure().kind, "choosing the token at position " + std::to_string(history.size()) +
                                                         ": " + token.failure().message};
    return token;
  };
  // Appends a chosen token; the reason generation ends with it, "" when it goes on. `accepted`: the
  // constraint has taken it already (a verified draft); `last`: no verified draft after it (the
  // constraint has taken those too, so whether it stopped is known at the last one only).
  std::string ended;
  auto take = [&](int64_t token, bool accepted, bool last = true) -> Status {
    if (std::find(request.eos.begin(), request.eos.end(), token) != request.eos.end()) {
      ended = "eos";
      return ok_status();
    }
    if (constraint != nullptr && !accepted) {
      if (Status taken = constraint->accept(token); !taken) return taken;
    }
    result.tokens.push_back(token);
    conversation.push_back(token);
    if (request.on_token && request.on_token(token)) ended = "callback";
    if (observer_stopped) ended = "callback";
    if (text) {
      bool stopped = false;
      std::string piece = text->push(token, stopped);
      if (!piece.empty() && request.on_text && request.on_text(piece) && ended.empty()) ended = "callback";
      if (stopped) ended = "stop";
    }
    if (!ended.empty()) return ok_status();
    if (constraint != nullptr && last && constraint->stopped()) {
      ended = "constraint";
    } else if (result.tokens.size() >= request.max_new_tokens) {
      ended = "length";
    } else if (static_cast<int64_t>(conversation.size()) >= model.context()) {
      ended = "context";
    } else if (cancelled_.load()) {
      ended = "cancelled";
    }
    return ok_status();
  };

  auto first = choose(row_of(model, logits, logits.rows - 1), conversation);
  if (!first) return first.failure();
  result.first_token_seconds = seconds_since(began);
  int64_t token = *first;
  if (Status taken = take(token, false); !taken) return taken.failure();
  std::optional<DraftSchedule> schedule;
  if (request.drafter != nullptr) schedule.emplace(*request.drafter, request.max_draft);
  while (ended.empty()) {
    std::vector<int64_t> drafts;
    size_t proposed = 0;
    if (schedule) {
      const int64_t span = std::min<int64_t>(
          {static_cast<int64_t>(request.max_draft), static_cast<int64_t>(request.max_new_tokens - result.tokens.size()),
           model.context() - position - 1, model.max_call_tokens() - 1});
      drafts = schedule->drafts(conversation, static_cast<size_t>(std::max<int64_t>(span, 0)), proposed);
    }
    std::vector<int64_t> call{token};
    call.insert(call.end(), drafts.begin(), drafts.end());
    auto out = model.step(call, position);
    if (!out) return out.failure();
    ++result.calls;
    // The drafts the model itself chooses; the choice that differs from a draft is the token there.
    size_t accepted = 0;
    std::optional<int64_t> differing;
    if (!drafts.empty()) {
      // Each draft is chosen after the ones before it: they join the conversation while they are
      // checked, and leave it again before take() appends the kept ones.
      const size_t before = conversation.size();
      Status checked = ok_status();
      // Up to the constraint's end: nothing may follow it, not even a draft to compare.
      while (accepted < drafts.size() && (constraint == nullptr || !constraint->stopped())) {
        auto choice = choose(row_of(model, *out, accepted), conversation);
        if (!choice) {
          checked = choice.failure();
          break;
        }
        if (*choice != drafts[accepted]) {
          differing = *choice;
          break;
        }
        if (constraint != nullptr) {
          if (checked = constraint->accept(drafts[accepted]); !checked) break;
        }
        conversation.push_back(drafts[accepted++]);
      }
      conversation.resize(before);
      if (!checked) return checked.failure();
      result.drafted += proposed;
      result.accepted += std::min(accepted, proposed);
      schedule->kept(proposed, accepted);
    }
    position += 1;  // the token fed
    size_t taken_drafts = 0;
    for (; taken_drafts < accepted && ended.empty(); ++taken_drafts) {
      if (Status taken = take(drafts[taken_drafts], true, taken_drafts + 1 == accepted); !taken) return taken.failure();
      position += 1;
    }
    // Ended inside the verified drafts (an eos id, the length, a callback): the constraint forgets
    // the ones after, so it holds what the result holds.
    if (constraint != nullptr && taken_drafts < accepted) {
      if (Status back = constraint->rollback(accepted - taken_drafts); !back) return back.failure();
    }
    if (!ended.empty()) break;
    if (differing) {
      token = *differing;
    } else {
      auto next = choose(row_of(model, *out, drafts.empty() ? out->rows - 1 : accepted), conversation);
      if (!next) return next.failure();
      token = *next;
    }
    if (schedule && drafts.empty()) schedule->chosen(token);
    if (Status taken = take(token, false); !taken) return taken.failure();
  }
  if (text && ended != "stop") {
    std::string rest = text->finish();
    if (!rest.empty() && request.on_text) request.on_text(rest);
  }
  finish(ended);
  return result;
}

}  // namespace executorch_openvino::generation
