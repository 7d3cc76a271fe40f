// include/executorch_openvino/generation.h over programs lowered with our delegate
// (tests/fixtures/make_llm_programs.py): plain greedy ids equal eager PyTorch's; speculative decoding
// with prompt lookup and with a draft program gives the same ids, drafts accepted and rejected (the
// delegate going back); a program returning the last logits only is refused for speculation.
#include <executorch_openvino/backend.h>
#include <executorch_openvino/generation.h>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "test_environment.h"

namespace executorch_openvino::generation {
namespace {

using executorch::extension::Module;

std::string programs() { return testing::env_path("EXECUTORCH_OPENVINO_LLM_PROGRAMS").string(); }

std::vector<int64_t> read_ids(const std::string& file) {
  std::ifstream in(programs() + "/" + file);
  std::vector<int64_t> ids;
  for (int64_t id; in >> id;) ids.push_back(id);
  return ids;
}

class GenerationTest : public ::testing::Test {
 protected:
  // Linked as an application links it: calling into the library keeps it linked, and loading it
  // registered the backend.
  void SetUp() override { ASSERT_EQ(executorch_openvino_registration_status(), 0); }

  std::vector<int64_t> prompt_ = read_ids("prompt.txt");
  std::vector<int64_t> expected_ = read_ids("expected.txt");
};

TEST_F(GenerationTest, PlainGreedyEqualsEager) {
  ASSERT_FALSE(expected_.empty());
  Module module(programs() + "/target.pte");
  auto model = TextModel::load(module);
  ASSERT_TRUE(model.ok());
  EXPECT_TRUE(model->all_logits());
  EXPECT_EQ(model->context(), 96);
  Statistics stats;
  auto ids = generate(*model, prompt_, expected_.size(), {}, nullptr, 5, nullptr, &stats);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, expected_);
  EXPECT_EQ(stats.calls, expected_.size() - 1);
}

TEST_F(GenerationTest, PromptLookupGivesGreedyIdsInFewerCalls) {
  Module module(programs() + "/target.pte");
  auto model = TextModel::load(module);
  ASSERT_TRUE(model.ok());
  PromptLookup lookup;
  Statistics stats;
  auto ids = generate(*model, prompt_, expected_.size(), {}, &lookup, 4, nullptr, &stats);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, expected_);
  EXPECT_GT(stats.accepted, 0u);
  EXPECT_LT(stats.accepted, stats.drafted);  // some rejected: the delegate went back
  EXPECT_LT(stats.calls, expected_.size() - 1);
}

TEST(PromptLookupTest, DraftsWhatFollowedAndLooksUpAgainWhereTheHistoryEnds) {
  PromptLookup lookup(3);
  EXPECT_TRUE(lookup.draft({}, 5).empty());
  EXPECT_TRUE(lookup.draft({4, 5, 6}, 5).empty());
  EXPECT_EQ(lookup.draft({1, 2, 3, 9, 1, 2}, 3), (std::vector<int64_t>{3, 9, 1}));
  // "1 2" was followed by 3 1 2, the history's end; from there "1 2" again gives 3 1.
  EXPECT_EQ(lookup.draft({1, 2, 3, 1, 2}, 5), (std::vector<int64_t>{3, 1, 2, 3, 1}));
  EXPECT_EQ(lookup.draft({1, 1, 1}, 4), (std::vector<int64_t>{1, 1, 1, 1}));
}

// Proposes `proposal` cut to the limit asked; free to ask or not.
class FixedDrafter : public Drafter {
 public:
  FixedDrafter(std::vector<int64_t> proposal, bool free) : proposal_(std::move(proposal)), free_(free) {}
  std::vector<int64_t> draft(const std::vector<int64_t>&, size_t limit) override {
    asked.push_back(limit);
    return {proposal_.begin(), proposal_.begin() + std::min(limit, proposal_.size())};
  }
  bool free_to_ask() const override { return free_; }
  std::vector<size_t> asked;

 private:
  std::vector<int64_t> proposal_;
  bool free_;
};

TEST(DraftScheduleTest, FeedsOneWidthAndPausesLongerAfterEachRoundThatKeptNothing) {
  FixedDrafter drafter({7, 8}, false);
  DraftSchedule schedule(drafter, 5);
  size_t proposed = 0;
  EXPECT_EQ(schedule.drafts({1}, 5, proposed), (std::vector<int64_t>{7, 8, 8, 8, 8}));
  EXPECT_EQ(proposed, 2u);
  std::vector<size_t> rounds;
  for (size_t step = 0; step < 300; ++step) {
    if (!schedule.drafts({1}, 5, proposed).empty()) {
      rounds.push_back(step);
      schedule.kept(proposed, 0);
    }
  }
  ASSERT_GE(rounds.size(), 5u);
  EXPECT_EQ(std::vector<size_t>({rounds[1] - rounds[0] - 1, rounds[2] - rounds[1] - 1, rounds[3] - rounds[2] - 1,
                                 rounds[4] - rounds[3] - 1}),
            std::vector<size_t>({1, 4, 16, 64}));
  EXPECT_EQ(drafter.asked[2], 1u);  // after a rejection, one asked (fed at the full width)
}

TEST(DraftScheduleTest, AFreeDrafterIsFedOnlyAfterItsGuessLands) {
  FixedDrafter drafter({7, 8, 9}, true);
  DraftSchedule schedule(drafter, 3);
  size_t proposed = 0;
  for (int64_t chosen : {5, 6}) {
    EXPECT_TRUE(schedule.drafts({1}, 3, proposed).empty());
    schedule.chosen(chosen);
  }
  EXPECT_TRUE(schedule.drafts({1}, 3, proposed).empty());
  schedule.chosen(7);  // the guess landed
  EXPECT_EQ(schedule.drafts({1}, 3, proposed), (std::vector<int64_t>{7, 8, 9}));
  schedule.kept(3, 0);  // nothing kept: watched again
  EXPECT_TRUE(schedule.drafts({1}, 3, proposed).empty());
}

TEST_F(GenerationTest, ADraftProgramGivesGreedyIds) {
  Module target_module(programs() + "/target.pte"), draft_module(programs() + "/draft.pte");
  auto target = TextModel::load(target_module);
  auto draft_model = TextModel::load(draft_module);
  ASSERT_TRUE(target.ok() && draft_model.ok());
  DraftModel draft(*draft_model);
  Statistics stats;
  auto ids = generate(*target, prompt_, expected_.size(), {}, &draft, 3, nullptr, &stats);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, expected_);
  EXPECT_GT(stats.drafted, 0u);
}

TEST_F(GenerationTest, StopsAtEosAndWhenTheCallbackSaysSo) {
  Module module(programs() + "/target.pte");
  auto model = TextModel::load(module);
  ASSERT_TRUE(model.ok());
  auto ids = generate(*model, prompt_, expected_.size(), {expected_[3]});
  ASSERT_TRUE(ids.ok());
  const auto first = std::find(expected_.begin(), expected_.end(), expected_[3]);
  EXPECT_EQ(*ids, std::vector<int64_t>(expected_.begin(), first));
  size_t seen = 0;
  auto stopped = generate(*model, prompt_, expected_.size(), {}, nullptr, 5, [&](int64_t) { return ++seen == 5; });
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(*stopped, std::vector<int64_t>(expected_.begin(), expected_.begin() + 5));
}

TEST_F(GenerationTest, SpeculationNeedsEveryPositionsLogits) {
  Module module(programs() + "/last_only.pte");
  auto model = TextModel::load(module);
  ASSERT_TRUE(model.ok());
  EXPECT_FALSE(model->all_logits());
  PromptLookup lookup;
  auto refused = generate(*model, prompt_, 8, {}, &lookup);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(), Error::InvalidArgument);
  auto plain = generate(*model, prompt_, 8);
  ASSERT_TRUE(plain.ok());
}

}  // namespace
}  // namespace executorch_openvino::generation
