// Drafts for speculative decoding, and when to ask for them: prompt lookup (the conversation itself,
// no second model) and a draft program (a smaller model of the same vocabulary, greedy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "generation/language_model.h"

namespace executorch_openvino::generation {

class Drafter {
 public:
  virtual ~Drafter() = default;
  // Up to `limit` tokens likely to follow `history`.
  virtual std::vector<int64_t> draft(const std::vector<int64_t>& history, size_t limit) = 0;
  // Whether asking costs about nothing (prompt lookup): such a drafter is probed at every plain step
  // until a guess lands, any other after growing pauses (DraftSchedule).
  virtual bool free_to_ask() const { return false; }
  // The model's state was changed from outside (a saved state restored): start again.
  virtual void forget() {}
};

// Prompt lookup: the longest of the history's last max_ngram .. 1 tokens that occurred before
// proposes what followed its most recent earlier occurrence; a proposal cut short by the end of the
// history is looked up again from its own end (a short cycle drafts several turns of itself).
class PromptLookup : public Drafter {
 public:
  explicit PromptLookup(size_t max_ngram = 3) : max_ngram_(max_ngram) {}
  bool free_to_ask() const override { return true; }
  std::vector<int64_t> draft(const std::vector<int64_t>& history, size_t limit) override;

 private:
  void continuation(const std::vector<int64_t>& history, std::vector<int64_t>& drafts, size_t room) const;
  size_t max_ngram_;
};

class Conversation;

// A smaller program with the same vocabulary drafts greedily: a conversation of its own on it (the
// engine's, so it feeds only what it does not hold and goes back where the target rejected drafts).
class DraftModel : public Drafter {
 public:
  explicit DraftModel(LanguageModel& model);
  ~DraftModel() override;
  std::vector<int64_t> draft(const std::vector<int64_t>& history, size_t limit) override;
  void forget() override;

 private:
  LanguageModel* model_;
  std::unique_ptr<Conversation> conversation_;
};

// When speculative decoding drafts and how many tokens a call carries. Drafts are fed at one width,
// padded with the last, so the program sees few shapes; a drafter is probed before it is trusted, at
// the start and after each miss (asked for one guess at a plain step; its drafts are fed only once
// that guess was the model's choice), so drafts that never land never reach the target. A free
// drafter is probed at every plain step; any other after 1, 4, 16, then every 64 plain steps while
// it keeps missing (a wrong or missing guess, or a round that kept nothing); a round that kept a
// draft starts the count again. Measured costs: docs/generation.md.
class DraftSchedule {
 public:
  static constexpr size_t kLongestPause = 64;

  DraftSchedule(Drafter& drafter, size_t max_draft) : drafter_(&drafter), max_draft_(max_draft), limit_(max_draft) {}

  // The tokens to feed after the last one (none, or `span`); `proposed` says how many the drafter
  // proposed (the rest repeat its last).
  std::vector<int64_t> drafts(const std::vector<int64_t>& conversation, size_t span, size_t& proposed);
  // The model chose `token` after a call without drafts.
  void chosen(int64_t token);
  // A call with drafts kept `accepted` of them (`proposed` by the drafter).
  void kept(size_t proposed, size_t accepted);

 private:
  void missed();

  Drafter* drafter_;
  size_t max_draft_, limit_;
  bool probing_ = true, probed_ = false;
  bool has_guess_ = false;
  int64_t guess_ = 0;
  size_t pause_ = 0, waiting_ = 0;
};

}  // namespace executorch_openvino::generation
