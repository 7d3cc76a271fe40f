// Drafts and their schedule (drafting.h).
#include "generation/drafting.h"

#include "generation/conversation.h"

#include <algorithm>

namespace executorch_openvino::generation {

std::vector<int64_t> PromptLookup::draft(const std::vector<int64_t>& history, size_t limit) {
  std::vector<int64_t> drafts;
  while (drafts.size() < limit) {
    const size_t before = drafts.size();
    continuation(history, drafts, limit - before);
    if (drafts.size() == before) break;
  }
  return drafts;
}

// Appends what followed, in `history`, the longest final n-gram of history + drafts found there with
// a token after it (the most recent occurrence first).
void PromptLookup::continuation(const std::vector<int64_t>& history, std::vector<int64_t>& drafts,
                                size_t room) const {
  const size_t size = history.size(), end = size + drafts.size();
  auto at = [&](size_t i) { return i < size ? history[i] : drafts[i - size]; };
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

DraftModel::DraftModel(LanguageModel& model) : model_(&model), conversation_(std::make_unique<Conversation>(model)) {}

DraftModel::~DraftModel() = default;

void DraftModel::forget() { conversation_->reset(); }

std::vector<int64_t> DraftModel::draft(const std::vector<int64_t>& history, size_t limit) {
  if (limit == 0 || history.empty() || static_cast<int64_t>(history.size() + limit) > model_->context()) return {};
  GenerationRequest request;  // greedy, no end id
  request.max_new_tokens = limit;
  auto drafted = conversation_->generate(history, request);
  if (!drafted) {
    forget();  // what its caches hold is unknown after a failed call
    return {};
  }
  return drafted->tokens;
}

std::vector<int64_t> DraftSchedule::drafts(const std::vector<int64_t>& conversation, size_t span, size_t& proposed) {
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

void DraftSchedule::chosen(int64_t token) {
  if (!probed_) return;
  if (has_guess_ && guess_ == token) {
    probing_ = false;
  } else {
    missed();
  }
}

void DraftSchedule::kept(size_t proposed, size_t accepted) {
  limit_ = accepted >= proposed ? std::min(max_draft_, limit_ + 1) : std::max<size_t>(1, accepted);
  if (accepted > 0) {
    pause_ = 0;
  } else {
    probing_ = true;
    missed();
  }
}

// The next probe comes after a longer pause, unless asking costs nothing; the probe is the pause's
// last plain step.
void DraftSchedule::missed() {
  if (drafter_->free_to_ask()) return;
  pause_ = std::min(pause_ == 0 ? 1 : 4 * pause_, kLongestPause);
  waiting_ = pause_ - 1;
}

}  // namespace executorch_openvino::generation
