// Batched conversations (src/generation/batch.h) through the C entry points an application calls: on
// threads of their own, each conversation gets the ids it gets alone while their steps share calls;
// a program whose calls give the first position only is refused with the reason.
#include <executorch_openvino/generation.h>

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "test_environment.h"

namespace {

std::string program_path(const std::string& name) {
  return (executorch_openvino::testing::env_path("EXECUTORCH_OPENVINO_LLM_PROGRAMS") / name).string();
}

struct Program {
  eov_program* handle = nullptr;
  explicit Program(const std::string& name) {
    if (eov_program_load(program_path(name).c_str(), nullptr, nullptr, &handle) != 0)
      ADD_FAILURE() << eov_generation_last_error();
  }
  ~Program() { eov_program_free(handle); }
};

int collect(void* user, int64_t token) {
  static_cast<std::vector<int64_t>*>(user)->push_back(token);
  return 0;
}

// `count` greedy ids after `prompt` from `conversation`; a failure is the test's.
std::vector<int64_t> greedy(eov_conversation* conversation, const std::vector<int64_t>& prompt, size_t count) {
  std::vector<int64_t> ids;
  eov_generation_options options;
  eov_generation_options_init(&options);
  options.max_new_tokens = count;
  options.on_token = collect, options.user = &ids;  // the program names no end id: `count` ids each
  if (eov_conversation_generate(conversation, prompt.data(), prompt.size(), &options, nullptr) != 0)
    ADD_FAILURE() << eov_generation_last_error();
  return ids;
}

// Three conversations of different prompts, 40 ids each (past a block of 32), on three threads: each
// one's ids are those a conversation of its own gets alone, and most calls carried all three.
TEST(BatchTest, BatchedConversationsOnThreadsGetWhatEachGetsAlone) {
  Program program("hf.pte");
  ASSERT_NE(program.handle, nullptr);
  const std::vector<std::vector<int64_t>> prompts = {{5, 17, 99, 3, 42, 7, 64}, {3, 9, 4, 1}, {42, 42, 42, 8, 1, 2}};
  std::vector<std::vector<int64_t>> alone;
  eov_conversation* single = nullptr;
  ASSERT_EQ(eov_conversation_new(program.handle, &single), 0) << eov_generation_last_error();
  for (const auto& prompt : prompts) alone.push_back(greedy(single, prompt, 40));
  eov_conversation_free(single);

  std::vector<eov_conversation*> members(prompts.size(), nullptr);
  for (auto& member : members) ASSERT_EQ(eov_conversation_new_batched(program.handle, &member), 0) << eov_generation_last_error();
  std::vector<std::vector<int64_t>> together(prompts.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < prompts.size(); ++i)
    threads.emplace_back([&, i] { together[i] = greedy(members[i], prompts[i], 40); });
  for (auto& thread : threads) thread.join();
  for (auto* member : members) eov_conversation_free(member);
  EXPECT_EQ(together, alone);
  EXPECT_NE(alone[0], alone[1]);
  EXPECT_GE(eov_program_info(program.handle, "batch_calls_shared"), 35);
  EXPECT_EQ(eov_program_info(program.handle, "batch_sequences"), 3 * 40);
}

TEST(BatchTest, AProgramThatGivesTheFirstPositionOnlyIsRefused) {
  Program program("target.pte");
  ASSERT_NE(program.handle, nullptr);
  eov_conversation* member = nullptr;
  EXPECT_NE(eov_conversation_new_batched(program.handle, &member), 0);
  EXPECT_EQ(member, nullptr);
  EXPECT_NE(std::string(eov_generation_last_error()).find("first position only"), std::string::npos)
      << eov_generation_last_error();
}

}  // namespace
