// Continuous batching (batch.h).
#include "generation/batch.h"

#include <algorithm>

namespace executorch_openvino::generation {

struct Batch::Step {
  int64_t slot = 0;
  const std::vector<int64_t>* tokens = nullptr;
  int64_t position = 0;
  std::vector<float>* row = nullptr;  // the member's: its last token's logits go here
  bool done = false;
  Status status = ok_status();
};

class Batch::Member final : public LanguageModel {
 public:
  Member(Batch& batch, int64_t slot) : batch_(batch), slot_(slot) {}
  ~Member() override { batch_.release(slot_); }

  Outcome<Logits> step(const std::vector<int64_t>& tokens, int64_t position) override {
    return batch_.step(*this, tokens, position);
  }
  size_t vocab() const override { return batch_.program_.vocab(); }
  int64_t context() const override { return batch_.program_.context(); }
  int64_t max_call_tokens() const override { return batch_.program_.max_call_tokens(); }
  // Each step gives its last token's row only: what a conversation needs without drafts.
  bool all_logits() const override { return false; }
  std::vector<int64_t> eos_ids() const override { return batch_.program_.eos_ids(); }
  int64_t bos_id() const override { return batch_.program_.bos_id(); }
  void begin_generation() override { batch_.join(); }
  void end_generation() override { batch_.leave(); }

  int64_t slot() const { return slot_; }
  std::vector<float>& row() { return row_; }

 private:
  Batch& batch_;
  const int64_t slot_;
  std::vector<float> row_;
};

Outcome<std::unique_ptr<Batch>> Batch::create(ProgramModel& program) {
  if (std::string why = program.why_not_sequences(); !why.empty())
    return Failure{FailureKind::kInvalidArgument, "this program cannot batch conversations: " + why};
  return std::unique_ptr<Batch>(new Batch(program));
}

Outcome<std::unique_ptr<LanguageModel>> Batch::member() {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t slot = 0;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else if (next_slot_ < kMaxSlots) {
    slot = next_slot_++;
  } else {
    return Failure{FailureKind::kInvalidArgument, "a batch holds " + std::to_string(kMaxSlots - 1) +
                                                      " conversations at most; free one first"};
  }
  return std::unique_ptr<LanguageModel>(new Member(*this, slot));
}

void Batch::release(int64_t slot) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_slots_.push_back(slot);
}

Batch::Counts Batch::counts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

void Batch::join() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++generating_;
}

void Batch::leave() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (generating_ > 0) --generating_;
  changed_.notify_all();  // the others may be all that is left: their steps can go now
}

Outcome<Logits> Batch::step(Member& member, const std::vector<int64_t>& tokens, int64_t position) {
  Step step;
  step.slot = member.slot();
  step.tokens = &tokens;
  step.position = position;
  step.row = &member.row();
  std::unique_lock<std::mutex> lock(mutex_);
  waiting_.push_back(&step);
  changed_.notify_all();
  while (!step.done) {
    // Every generating member has a step ready (a member stepping outside a generation counts too).
    if (!calling_ && waiting_.size() >= generating_) {
      lead(lock);
    } else {
      changed_.wait(lock);
    }
  }
  if (!step.status.ok()) return step.status.failure();
  return Logits{member.row().data(), 1};
}

void Batch::lead(std::unique_lock<std::mutex>& lock) {
  // The waiting steps in order, as many as one call takes (the first always: it fits alone).
  std::vector<Step*> taken;
  std::vector<ProgramModel::Sequence> sequences;
  int64_t tokens = 0;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    const int64_t count = static_cast<int64_t>((*it)->tokens->size());
    if (!taken.empty() && tokens + count > program_.max_call_tokens()) {
      ++it;
      continue;
    }
    tokens += count;
    taken.push_back(*it);
    sequences.push_back({(*it)->slot, (*it)->tokens, (*it)->position});
    it = waiting_.erase(it);
  }
  calling_ = true;
  lock.unlock();
  Outcome<Logits> logits = program_.step_sequences(sequences);
  const size_t vocab = program_.vocab();
  size_t row = 0;
  for (Step* step : taken) {
    row += step->tokens->size();
    if (logits.ok()) {
      const float* last = logits.value().data + (row - 1) * vocab;
      step->row->assign(last, last + vocab);
    } else {
      step->status = logits.failure();
    }
  }
  lock.lock();
  calling_ = false;
  ++counts_.calls;
  if (taken.size() > 1) ++counts_.batched_calls;
  counts_.sequences += taken.size();
  for (Step* step : taken) step->done = true;
  changed_.notify_all();
}

}  // namespace executorch_openvino::generation
