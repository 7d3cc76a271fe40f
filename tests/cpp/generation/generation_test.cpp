// include/executorch_openvino/generation.h over programs lowered with our delegate
// (tests/fixtures/make_llm_programs.py): plain greedy ids equal eager PyTorch's; speculative decoding
// with prompt lookup and with a draft program gives the same ids, drafts accepted and rejected (the
// delegate going back), also to the very end of the context; a program returning the last logits only
// is refused for speculation. Sampling
// (sampling.h) draws numpy's PCG64 numbers and, from the delegate's logits, the ids the Python package
// samples from eager PyTorch's with the same options and seed, plainly and speculatively.
#include <executorch_openvino/backend.h>
#include <executorch_openvino/generation.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
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

// The fixture's sampling options (tests/fixtures/make_llm_programs.py): line 0 for plain sampling,
// line 1 for speculative sampling; line 2 is the speculative max_draft.
SamplingOptions read_sampling(size_t line, size_t* max_draft = nullptr) {
  std::ifstream in(programs() + "/sampling.txt");
  std::vector<std::string> lines;
  for (std::string text; std::getline(in, text);) lines.push_back(text);
  SamplingOptions options;
  if (lines.size() != 3) return options;
  std::istringstream values(lines[line]);
  uint64_t seed = 0;
  values >> options.temperature >> options.top_k >> options.top_p >> options.repetition_penalty >> seed;
  options.seed = seed;
  if (max_draft != nullptr) std::istringstream(lines[2]) >> *max_draft;
  return options;
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
  EXPECT_EQ(model->context(), 100);
  Statistics stats;
  auto ids = generate(*model, prompt_, expected_.size(), {}, nullptr, 5, nullptr, &stats);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, expected_);
  EXPECT_EQ(stats.calls, expected_.size() - 1);
}

// What docs/cpp.md tells applications to do: a mapped load, whose weights the delegate reads in the
// mapping and gives the pages of back after compiling and after the first calls (docs/memory.md);
// greedy ids equal eager's all the same. Fails on a delegate that copies a mapping's weights (its
// compiled model says weights=copy) or frees the mapping once compiled (decode reads unmapped pages).
TEST_F(GenerationTest, AMappedLoadReadsItsWeightsInPlaceAndGreedyEqualsEager) {
  ASSERT_FALSE(expected_.empty());
  Module module(programs() + "/target.pte", Module::LoadMode::Mmap);
  auto model = TextModel::load(module);
  ASSERT_TRUE(model.ok());
  auto ids = generate(*model, prompt_, expected_.size(), {}, nullptr, 5, nullptr, nullptr);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, expected_);
  const std::string described = executorch_openvino_describe_compiled_models();
  EXPECT_NE(described.find("weights=mapped"), std::string::npos) << described;
  EXPECT_EQ(described.find("weights_given_back=0 "), std::string::npos) << described;
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

TEST(DraftScheduleTest, FeedsOneWidthOnceAProbeLandsAndProbesAfterLongerPausesWhileItMisses) {
  FixedDrafter drafter({7, 8}, false);
  DraftSchedule schedule(drafter, 5);
  size_t proposed = 0;
  EXPECT_TRUE(schedule.drafts({1}, 5, proposed).empty());  // probed first: one guess, nothing fed
  EXPECT_EQ(drafter.asked, std::vector<size_t>({1}));
  schedule.chosen(7);  // the guess landed: trusted
  EXPECT_EQ(schedule.drafts({1}, 5, proposed), (std::vector<int64_t>{7, 8, 8, 8, 8}));
  EXPECT_EQ(proposed, 2u);
  schedule.kept(proposed, 0);  // kept nothing: probed from the next plain step, and it keeps missing
  std::vector<size_t> probes;
  bool fed = false;
  for (size_t step = 0; step < 300; ++step) {
    const size_t before = drafter.asked.size();
    fed = fed || !schedule.drafts({1}, 5, proposed).empty();
    if (drafter.asked.size() > before) probes.push_back(step);
    schedule.chosen(5);
  }
  EXPECT_FALSE(fed);  // guesses that never land never reach the target
  ASSERT_GE(probes.size(), 5u);
  EXPECT_EQ(std::vector<size_t>({probes[0], probes[1] - probes[0] - 1, probes[2] - probes[1] - 1,
                                 probes[3] - probes[2] - 1, probes[4] - probes[3] - 1}),
            std::vector<size_t>({0, 3, 15, 63, 63}));
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
  schedule.kept(3, 0);  // nothing kept: probed again at once
  EXPECT_TRUE(schedule.drafts({1}, 3, proposed).empty());
  schedule.chosen(7);
  EXPECT_EQ(schedule.drafts({1}, 3, proposed), (std::vector<int64_t>{7, 7, 7}));  // one asked after a rejection
  EXPECT_EQ(drafter.asked.back(), 1u);
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

TEST(SamplerTest, DrawsNumpysPcg64Numbers) {
  std::ifstream in(programs() + "/pcg64.txt");
  const SamplingOptions options = read_sampling(0);
  ASSERT_TRUE(options.seed.has_value());
  detail::Pcg64 random(*options.seed);
  size_t compared = 0;
  for (std::string hex; in >> hex; ++compared) EXPECT_EQ(random.uniform(), std::strtod(hex.c_str(), nullptr)) << compared;
  EXPECT_EQ(compared, 8u);
}

TEST(SamplerTest, FiltersAsTransformersGenerateDoes) {
  const std::vector<float> logits{1.0f, 3.0f, 2.0f, 3.0f, -1.0f};
  // Greedy: the first of equal maxima; a penalty on it moves the choice to the other.
  Sampler greedy;
  EXPECT_EQ(greedy.next_token(logits.data(), logits.size(), {}), 1);
  Sampler penalized(SamplingOptions{0.0, 0, 1.0, 2.0, uint64_t{1}});
  EXPECT_EQ(penalized.next_token(logits.data(), logits.size(), {1}), 3);
  EXPECT_EQ(penalized.next_token(logits.data(), logits.size(), {1, 3}), 2);
  // top-k 1 keeps both ids tied for first; top-p keeps the fewest most probable reaching it.
  Sampler top_k(SamplingOptions{1.0, 1, 1.0, 1.0, uint64_t{3}});
  Sampler top_p(SamplingOptions{1.0, 0, 0.3, 1.0, uint64_t{3}});
  std::vector<int> k_counts(5), p_counts(5);
  for (int i = 0; i < 400; ++i) {
    ++k_counts[static_cast<size_t>(top_k.next_token(logits.data(), logits.size(), {}))];
    ++p_counts[static_cast<size_t>(top_p.next_token(logits.data(), logits.size(), {}))];
  }
  EXPECT_EQ(k_counts[0] + k_counts[2] + k_counts[4], 0);
  EXPECT_GT(k_counts[1], 100);
  EXPECT_GT(k_counts[3], 100);
  // p(1) = p(3) = 0.40: at top-p 0.3 one of the two is enough, and of the tie the lower id stays.
  EXPECT_EQ(p_counts[1], 400);
  // Bad input is refused, not drawn from.
  const std::vector<float> broken{0.0f, NAN};
  EXPECT_EQ(greedy.next_token(broken.data(), broken.size(), {}), -1);
  EXPECT_EQ(penalized.next_token(logits.data(), logits.size(), {7}), -1);
  SamplingOptions negative, no_top_p;
  negative.temperature = -1.0;
  no_top_p.top_p = 0.0;
  EXPECT_FALSE(negative.valid());
  EXPECT_FALSE(no_top_p.valid());
}

TEST_F(GenerationTest, SamplingDrawsThePythonPackagesIdsWithTheSameSeed) {
  const SamplingOptions options = read_sampling(0);
  const std::vector<int64_t> python = read_ids("sampled.txt");
  ASSERT_EQ(python.size(), expected_.size());
  Module module(programs() + "/target.pte");
  auto model = TextModel::load(module);
  ASSERT_TRUE(model.ok());
  Sampler sampler(options);
  auto ids = generate(*model, prompt_, expected_.size(), {}, nullptr, 5, nullptr, nullptr, &sampler);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, python);
  EXPECT_NE(*ids, expected_);  // sampled, not greedy
  Sampler again(options);
  auto same = generate(*model, prompt_, expected_.size(), {}, nullptr, 5, nullptr, nullptr, &again);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, *ids);  // the seed fixes them
}

// Each token costs one draw, kept draft or not: under one seed, speculative sampling draws plain
// sampling's ids (from the same logits), and the Python package's.
TEST_F(GenerationTest, SpeculativeSamplingDrawsPlainSamplingsIds) {
  size_t max_draft = 0;
  const SamplingOptions options = read_sampling(1, &max_draft);
  const std::vector<int64_t> python = read_ids("sampled_lookup.txt");
  ASSERT_EQ(python.size(), expected_.size());
  Module module(programs() + "/target.pte");
  auto model = TextModel::load(module);
  ASSERT_TRUE(model.ok());
  Sampler plain_sampler(options), speculative_sampler(options);
  auto plain = generate(*model, prompt_, expected_.size(), {}, nullptr, 5, nullptr, nullptr, &plain_sampler);
  PromptLookup lookup;
  Statistics stats;
  auto drafted = generate(*model, prompt_, expected_.size(), {}, &lookup, max_draft, nullptr, &stats,
                          &speculative_sampler);
  ASSERT_TRUE(plain.ok() && drafted.ok());
  EXPECT_EQ(*drafted, *plain);
  EXPECT_EQ(*drafted, python);
  EXPECT_GT(stats.accepted, 0u);  // drafts landed: the path under test was taken
  EXPECT_LT(stats.accepted, stats.drafted);  // and some were rejected, the delegate going back
  EXPECT_EQ(stats.accepted, static_cast<size_t>(read_ids("sampled_lookup_accepted.txt").at(0)));
}

TEST_F(GenerationTest, SamplingOptionsOutOfRangeAreRefused) {
  Module module(programs() + "/target.pte");
  auto model = TextModel::load(module);
  ASSERT_TRUE(model.ok());
  SamplingOptions options;
  options.temperature = 0.5;
  options.top_p = 1.5;
  Sampler sampler(options);
  auto refused = generate(*model, prompt_, 4, {}, nullptr, 5, nullptr, nullptr, &sampler);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(), Error::InvalidArgument);
}

// Decoding to the very end of a context that is not a multiple of paged attention's block of 32
// (the target's 100; the program runs paged, the default on the CPU): plainly, with prompt lookup,
// and with a draft program of the target's weights and a longer context (last_only.pte, 128: its
// drafts land up to the target's last position and could go on past it), every run gives eager
// PyTorch's ids up to the last position, drafts accepted on the way. Guards against drafts allowed
// past the context: tried, generate's span without `model.context() - position - 1` fails both
// drafted runs (the delegate refuses the last round's call: "the attention mask ... does not have a
// row for each of the 4 tokens"); and against paged caches allocated one block short (paged_layout's
// blocks rounded down): tried, the plain run's ids differ past position 96 and the test binary dies
// with a segmentation fault, without a sanitizer. The other tests stop at position 57.
TEST_F(GenerationTest, EveryDrafterDecodesToTheEndOfAContextThatIsNotAMultipleOfTheBlock) {
  const std::vector<int64_t> to_end = read_ids("expected_to_end.txt");
  ASSERT_EQ(to_end.size(), 100u - prompt_.size());
  Module module(programs() + "/target.pte"), draft_module(programs() + "/last_only.pte");
  auto model = TextModel::load(module);
  auto draft_model = TextModel::load(draft_module);
  ASSERT_TRUE(model.ok() && draft_model.ok());
  ASSERT_EQ(model->context(), 100);
  ASSERT_EQ(draft_model->context(), 128);
  auto plain = generate(*model, prompt_, 1000);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, to_end);
  // At 3 drafts a call, both drafters' last round meets the end with fewer positions left than it carries.
  PromptLookup lookup;
  DraftModel draft(*draft_model);
  for (Drafter* drafter : {static_cast<Drafter*>(&lookup), static_cast<Drafter*>(&draft)}) {
    const char* run = drafter == &lookup ? "lookup" : "draft";
    Statistics stats;
    auto ids = generate(*model, prompt_, 1000, {}, drafter, 3, nullptr, &stats);
    if (!ids.ok()) {
      ADD_FAILURE() << run << ": " << executorch_openvino_last_error();
      continue;
    }
    EXPECT_EQ(*ids, to_end) << run;
    EXPECT_GT(stats.accepted, 0u) << run;
  }
}

}  // namespace
}  // namespace executorch_openvino::generation
