// Continuous batching: several conversations of one program generate at once, and their steps go to
// the program together, one call for all (ProgramModel::step_sequences), as OpenVINO's paged attention
// allows. Each member is a language model of its own (its own slot of the delegate's paged caches,
// slots 1 and up: slot 0 stays the program's own conversations'), driven by its own Conversation on
// its own thread; a member's step waits until every member that is generating has one ready (or has
// ended), then one of them makes the call and each takes its rows. A call carries at most the
// program's max_call_tokens: what does not fit waits for the next. Nothing else of the engine changes,
// so each member's tokens are what it would choose alone.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "executorch_openvino/backend.h"  // EXECUTORCH_OPENVINO_MAX_SLOTS
#include "generation/language_model.h"
#include "generation/program_model.h"

namespace executorch_openvino::generation {

class Batch {
 public:
  // Refuses a program that cannot take several sequences a call (ProgramModel::why_not_sequences).
  static Outcome<std::unique_ptr<Batch>> create(ProgramModel& program);
  // A model for one more conversation; its slot is free again when it is destroyed. The batch must
  // outlive its members.
  Outcome<std::unique_ptr<LanguageModel>> member();

  // How many calls carried more than one sequence, and their sequences in all (for tests and reports).
  struct Counts {
    size_t calls = 0, batched_calls = 0, sequences = 0;
  };
  Counts counts() const;

 private:
  class Member;
  struct Step;
  explicit Batch(ProgramModel& program) : program_(program) {}
  Outcome<Logits> step(Member& member, const std::vector<int64_t>& tokens, int64_t position);
  void join();
  void leave();
  void release(int64_t slot);
  // Runs the waiting steps that fit one call; the lock is held on entry and exit, not during the call.
  void lead(std::unique_lock<std::mutex>& lock);

  static constexpr int64_t kMaxSlots = EXECUTORCH_OPENVINO_MAX_SLOTS;  // the delegate's paged caches'
  ProgramModel& program_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  size_t generating_ = 0;       // members inside a generation
  std::vector<Step*> waiting_;  // their steps, in arrival order
  bool calling_ = false;
  std::vector<int64_t> free_slots_;
  int64_t next_slot_ = 1;
  Counts counts_;
};

}  // namespace executorch_openvino::generation
