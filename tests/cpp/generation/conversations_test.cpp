// Conversations at the same time, as an application runs them: two programs' methods generating on
// two threads at once, and a saved state saved and restored on one thread while another thread's
// method executes (executorch_openvino_save_state / _restore_state, backend.h), through the engine
// (ProgramModel, a Module each, and Conversation), in both forms of the caches. Each thread's ids and
// logits must equal the same work done alone.
#include <executorch_openvino/backend.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "generation/conversation.h"
#include "generation/drafting.h"
#include "generation/program_model.h"
#include "test_environment.h"

namespace executorch_openvino::generation {
namespace {

std::string program() {
  return (testing::env_path("EXECUTORCH_OPENVINO_LLM_PROGRAMS") / "target.pte").string();
}

std::vector<int64_t> prompt() {
  std::ifstream in(testing::env_path("EXECUTORCH_OPENVINO_LLM_PROGRAMS") / "prompt.txt");
  std::vector<int64_t> ids;
  for (int64_t id; in >> id;) ids.push_back(id);
  return ids;
}

// The attention option for the loads of one test (process-wide), cleared after it.
class Attention {
 public:
  explicit Attention(const char* form) { EXPECT_EQ(executorch_openvino_set_option("attention", form), 0); }
  ~Attention() { executorch_openvino_set_option("attention", nullptr); }
};

// A method of its own (a program loaded per conversation: a method keeps one conversation), and the
// engine's conversation on it.
struct Chat {
  std::unique_ptr<ProgramModel> model = load();
  Conversation conversation{*model};

  static std::unique_ptr<ProgramModel> load() {
    auto loaded = ProgramModel::load(program(), "");
    if (!loaded) throw std::runtime_error(loaded.failure().message);
    return std::move(loaded.value());
  }
};

GenerationRequest request_of(size_t max_new_tokens, Drafter* drafter = nullptr, size_t max_draft = 5) {
  GenerationRequest request;
  request.max_new_tokens = max_new_tokens;
  request.drafter = drafter;
  request.max_draft = max_draft;
  return request;
}

// Every row of the logits of feeding `tokens` at `start`, copied (the model's next call reuses them).
Outcome<std::vector<float>> prefill(LanguageModel& model, const std::vector<int64_t>& tokens, int64_t start) {
  auto logits = feed(model, tokens, start);
  if (!logits) return logits.failure();
  return std::vector<float>(logits->data, logits->data + logits->rows * model.vocab());
}

// Whether a compiled model alive runs paged.
bool runs_paged() {
  return std::string(executorch_openvino_describe_compiled_models()).find("attention=paged") != std::string::npos;
}

class ConversationsTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { ASSERT_EQ(executorch_openvino_registration_status(), 0); }
};

INSTANTIATE_TEST_SUITE_P(Forms, ConversationsTest, ::testing::Values("paged", "grown"));

// Two methods of the same program (they share one compiled model, each with its own request and
// caches) generate on two threads at once, one plainly and one with prompt lookup (its rejected
// drafts going back), three times over: each gives the ids it gives alone. Guards against paged
// caches kept per compiled model rather than per method (the second method bound to the first's):
// tried, both threads' ids differ in every round (paged); no earlier test ran two paged methods.
TEST_P(ConversationsTest, TwoConversationsOnTwoThreadsEachEqualRunningAlone) {
  Attention form(GetParam());
  const std::vector<int64_t> first = prompt();
  std::vector<int64_t> second(first.rbegin(), first.rend());
  Chat a, b;
  PromptLookup lookup;
  auto plain_alone = a.conversation.generate(first, request_of(80));
  auto drafted_alone = b.conversation.generate(second, request_of(80, &lookup, 4));
  ASSERT_TRUE(plain_alone.ok()) << plain_alone.failure().message;
  ASSERT_TRUE(drafted_alone.ok()) << drafted_alone.failure().message;
  ASSERT_EQ(runs_paged(), std::string(GetParam()) == "paged");
  for (int round = 0; round < 3; ++round) {
    // Each round the whole work again, the prompt fed too (not reused from the round before).
    a.conversation.reset();
    b.conversation.reset();
    std::optional<Outcome<GenerationResult>> plain, drafted;
    std::thread one([&] { plain.emplace(a.conversation.generate(first, request_of(80))); });
    std::thread other([&] {
      PromptLookup own;
      drafted.emplace(b.conversation.generate(second, request_of(80, &own, 4)));
    });
    one.join();
    other.join();
    ASSERT_TRUE(plain->ok()) << "round " << round << ": " << plain->failure().message;
    ASSERT_TRUE(drafted->ok()) << "round " << round << ": " << drafted->failure().message;
    EXPECT_EQ((*plain)->tokens, plain_alone->tokens) << "round " << round;
    EXPECT_EQ((*drafted)->tokens, drafted_alone->tokens) << "round " << round;
    EXPECT_GT((*drafted)->accepted, 0u) << "round " << round;
    EXPECT_LT((*drafted)->accepted, (*drafted)->drafted) << "round " << round;  // some rejected: it went back
  }
}

bool close(const std::vector<float>& got, const std::vector<float>& expected) {
  if (got.size() != expected.size()) return false;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::abs(got[i] - expected[i]) > 1e-4f + 1e-4f * std::abs(expected[i])) return false;
  }
  return true;
}

// The length a method's conversation holds, read from the delegate's refusal of a call past it.
int64_t held_length(LanguageModel& model, int64_t past) {
  auto refused = model.step({1}, past);
  if (refused.ok()) return -1;
  const std::string& error = refused.failure().message;
  const std::string before = "past the ";
  const size_t at = error.find(before);
  return at == std::string::npos ? -1 : std::atoll(error.c_str() + at + before.size());
}

int64_t argmax(const float* row, size_t vocab) { return std::max_element(row, row + vocab) - row; }

// Method x holds a saved prefix ("prefix"); method y, loaded after the save (so the restore leaves
// it alone), generates on one thread while the other thread, twenty times, saves every method's
// state ("racing": y's taken while it executes), restores the prefix into x and asks x a question.
// Every save and restore succeeds, x's answers are the logits it gives alone, y's ids are its ids
// alone, and y's last racing state, restored afterwards, holds a conversation that continues as y's
// did (tests/python/llm/test_conversation_state.py does the same from Python). Guards against saving and restoring without the method's lock (CompiledMethod::save_state
// and restore_state relying on the registry's): tried, grown, the test binary dies (segmentation
// fault) or a save fails with OpenVINO's "Infer Request is busy", in each of 7 runs (paged, a copy of
// the blocks before the call's positions shows nothing); and, paged, against caches kept per
// compiled model: x's answer differs from the first round.
TEST_P(ConversationsTest, SaveAndRestoreRacingAnotherThreadsExecuteChangeNothingOfIt) {
  Attention form(GetParam());
  std::vector<int64_t> prefix = prompt(), question = {20, 21, 22}, other = prompt();
  for (int i = 0; i < 2; ++i) prefix.insert(prefix.end(), other.begin(), other.end());  // 27 positions
  std::reverse(other.begin(), other.end());
  Chat x;
  ASSERT_TRUE(prefill(*x.model, prefix, 0).ok());
  ASSERT_EQ(executorch_openvino_save_state("prefix"), 0) << executorch_openvino_last_error();
  auto answer_alone = prefill(*x.model, question, static_cast<int64_t>(prefix.size()));
  ASSERT_TRUE(answer_alone.ok()) << answer_alone.failure().message;
  Chat y;
  auto alone = y.conversation.generate(other, request_of(80));
  ASSERT_TRUE(alone.ok()) << alone.failure().message;
  ASSERT_EQ(runs_paged(), std::string(GetParam()) == "paged");

  std::optional<Outcome<GenerationResult>> raced;
  // y's ids so far, and the rounds done: y waits for a round after each id, so the rounds and y's
  // calls interleave however the threads are scheduled (a save waiting for y's method could
  // otherwise wait out the whole generation: its lock is not fair).
  std::atomic<int> made{0}, rounds{0};
  std::atomic<bool> racing{true};
  std::vector<std::string> failures;
  std::thread generating([&] {
    GenerationRequest request = request_of(80);
    request.on_token = [&](int64_t) {
      const int mine = ++made;
      while (racing && mine > rounds) std::this_thread::yield();
      return false;
    };
    y.conversation.reset();  // the whole work again, from the first token
    raced.emplace(y.conversation.generate(other, request));
  });
  for (; made < 70 && failures.empty(); ++rounds) {  // the last state saved is one of y's midway
    const std::string at = "round " + std::to_string(rounds) + ": ";
    if (executorch_openvino_save_state("racing") != 0) failures.push_back(at + "save: " + executorch_openvino_last_error());
    if (executorch_openvino_restore_state("prefix") != 0) {
      failures.push_back(at + "restore: " + executorch_openvino_last_error());
      break;
    }
    auto answer = prefill(*x.model, question, static_cast<int64_t>(prefix.size()));
    if (!answer.ok() || !close(*answer, *answer_alone)) failures.push_back(at + "x's answer differs from its answer alone");
  }
  racing = false;
  generating.join();
  EXPECT_EQ(failures, std::vector<std::string>{});
  ASSERT_TRUE(raced->ok()) << raced->failure().message;
  EXPECT_EQ((*raced)->tokens, alone->tokens);

  // y's last racing state holds a whole call's conversation (its prompt and some of its ids), which
  // continues as y's went on: the choice after it is y's next id.
  ASSERT_EQ(executorch_openvino_restore_state("racing"), 0) << executorch_openvino_last_error();
  const int64_t held = held_length(*y.model, 99);
  std::vector<int64_t> conversation = other;
  conversation.insert(conversation.end(), alone->tokens.begin(), alone->tokens.end());
  ASSERT_TRUE(held == 0 || (held >= static_cast<int64_t>(other.size()) && held < static_cast<int64_t>(conversation.size())))
      << held;
  if (held > 0 && held + 1 < static_cast<int64_t>(conversation.size())) {
    auto next = y.model->step({conversation[static_cast<size_t>(held)]}, held);
    ASSERT_TRUE(next.ok()) << next.failure().message;
    EXPECT_EQ(argmax(row_of(*y.model, *next, next->rows - 1), y.model->vocab()), conversation[held + 1])
        << "after the racing state of " << held << " positions";
  }
  executorch_openvino_forget_state("racing");
  executorch_openvino_forget_state("prefix");
}

}  // namespace
}  // namespace executorch_openvino::generation
