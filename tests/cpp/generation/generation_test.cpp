// The generation engine over programs lowered with our delegate (tests/fixtures/make_llm_programs.py):
// plain greedy ids equal eager PyTorch's, through the C entry points an application calls
// (include/executorch_openvino/generation.h) and through the engine's classes; speculative decoding
// with prompt lookup and with a draft program gives the same ids, drafts accepted and rejected (the
// delegate going back), also to the very end of the context; a program returning the last logits only
// is refused for speculation. Sampling (sampling.h) draws numpy's PCG64 numbers and, from the
// delegate's logits, the ids the Python package's engine samples from eager PyTorch's with the same
// options and seed, plainly and speculatively. A conversation continues from the tokens its program
// holds, goes back, stops at the context, and keeps to a constraint's tokens.
#include <executorch_openvino/backend.h>
#include <executorch_openvino/generation.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>

#include "generation/conversation.h"
#include "generation/drafting.h"
#include "generation/program_model.h"
#include "generation/sampling.h"
#include "test_environment.h"

namespace executorch_openvino::generation {
namespace {

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

// One of the fixture's programs, loaded by the engine (mapped); the test fails when it cannot be.
std::unique_ptr<ProgramModel> load(const std::string& name) {
  auto loaded = ProgramModel::load(programs() + "/" + name, "");
  if (!loaded) {
    ADD_FAILURE() << loaded.failure().message;
    return nullptr;
  }
  return std::move(loaded.value());
}

GenerationRequest request_of(size_t max_new_tokens, SamplingOptions sampling = {}) {
  GenerationRequest request;
  request.max_new_tokens = max_new_tokens;
  request.sampling = sampling;
  return request;
}

// What an application holds through the C entry points: a program and a conversation on it.
struct CProgram {
  eov_program* program = nullptr;
  eov_conversation* conversation = nullptr;
  explicit CProgram(const std::string& name) {
    if (eov_program_load((programs() + "/" + name).c_str(), nullptr, nullptr, &program) != 0) {
      ADD_FAILURE() << eov_generation_last_error();
      return;
    }
    if (eov_conversation_new(program, &conversation) != 0) ADD_FAILURE() << eov_generation_last_error();
  }
  ~CProgram() {
    eov_conversation_free(conversation);
    eov_program_free(program);
  }
};

// Collects the ids the C entry points hand to on_token.
int collect(void* user, int64_t token) {
  static_cast<std::vector<int64_t>*>(user)->push_back(token);
  return 0;
}

class GenerationTest : public ::testing::Test {
 protected:
  // Linked as an application links it: calling into the library keeps it linked, and loading it
  // registered the backend.
  void SetUp() override { ASSERT_EQ(executorch_openvino_registration_status(), 0); }

  std::vector<int64_t> prompt_ = read_ids("prompt.txt");
  std::vector<int64_t> expected_ = read_ids("expected.txt");
};

// A caller compiled against an older, shorter header: the library initialises and fills no more
// than the caller's struct_size (guard bytes after it stay as they were), reads the missing options
// as their defaults, and refuses a struct_size it cannot have come from. Fails on a library that
// writes sizeof of its own structs (tried: init and the result's copy by sizeof overwrite the guard).
TEST_F(GenerationTest, AnOlderCallersShorterStructsAreReadAndFilledToTheirSize) {
  CProgram c("target.pte");
  ASSERT_NE(c.conversation, nullptr);
  constexpr unsigned char kGuard = 0xA5;
  const size_t options_size = offsetof(eov_generation_options, on_logits);  // before the newest field
  std::vector<unsigned char> options_bytes(sizeof(eov_generation_options) + 64, kGuard);
  auto* options = reinterpret_cast<eov_generation_options*>(options_bytes.data());
  eov_generation_options_init_size(options, options_size);
  for (size_t i = options_size; i < options_bytes.size(); ++i) ASSERT_EQ(options_bytes[i], kGuard) << i;
  EXPECT_EQ(options->struct_size, options_size);
  options->max_new_tokens = 4;
  const size_t result_size = offsetof(eov_generation_result, first_token_seconds);
  std::vector<unsigned char> result_bytes(sizeof(eov_generation_result) + 64, kGuard);
  auto* result = reinterpret_cast<eov_generation_result*>(result_bytes.data());
  result->struct_size = result_size;
  ASSERT_EQ(eov_conversation_generate(c.conversation, prompt_.data(), prompt_.size(), options, result), 0)
      << eov_generation_last_error();
  EXPECT_EQ(result->generated, 4u);
  for (size_t i = result_size; i < result_bytes.size(); ++i) ASSERT_EQ(result_bytes[i], kGuard) << i;
  result->struct_size = 0;
  EXPECT_EQ(eov_conversation_generate(c.conversation, prompt_.data(), prompt_.size(), options, result),
            EOV_GENERATION_INVALID_ARGUMENT);
  EXPECT_NE(std::string(eov_generation_last_error()).find("struct_size"), std::string::npos);
}

// What an application does (eov_program_load, eov_conversation_generate): greedy ids equal eager
// PyTorch's, one decode call a token after the prompt's.
TEST_F(GenerationTest, PlainGreedyEqualsEager) {
  ASSERT_FALSE(expected_.empty());
  CProgram c("target.pte");
  ASSERT_NE(c.conversation, nullptr);
  EXPECT_EQ(eov_program_info(c.program, "all_logits"), 1);
  EXPECT_EQ(eov_program_info(c.program, "context"), 100);
  EXPECT_EQ(eov_program_eos_ids(c.program, nullptr, 0), 0u);  // the fixture's programs name none
  eov_generation_options options;
  eov_generation_options_init(&options);
  options.max_new_tokens = expected_.size();
  std::vector<int64_t> ids;
  options.on_token = collect;
  options.user = &ids;
  eov_generation_result result{};
  result.struct_size = sizeof result;
  ASSERT_EQ(eov_conversation_generate(c.conversation, prompt_.data(), prompt_.size(), &options, &result), 0)
      << eov_generation_last_error();
  EXPECT_EQ(ids, expected_);
  EXPECT_EQ(result.generated, expected_.size());
  EXPECT_EQ(result.calls, expected_.size() - 1);
  EXPECT_EQ(result.prompt_tokens, prompt_.size());
  EXPECT_STREQ(result.stopped_by, "length");
  // The conversation: the prompt, then every id chosen.
  std::vector<int64_t> tokens(eov_conversation_tokens(c.conversation, nullptr, 0));
  eov_conversation_tokens(c.conversation, tokens.data(), tokens.size());
  std::vector<int64_t> whole = prompt_;
  whole.insert(whole.end(), expected_.begin(), expected_.end());
  EXPECT_EQ(tokens, whole);
}

// The engine loads a program mapped, as docs/cpp.md tells applications to: the delegate reads its
// weights in the mapping and gives the pages back after compiling and after the first calls
// (docs/memory.md); greedy ids equal eager's all the same. Fails on a delegate that copies a mapping's
// weights (its compiled model says weights=copy) or frees the mapping once compiled (decode reads
// unmapped pages), and on a ProgramModel that reads the file instead of mapping it.
TEST_F(GenerationTest, AMappedLoadReadsItsWeightsInPlaceAndGreedyEqualsEager) {
  ASSERT_FALSE(expected_.empty());
  auto model = load("target.pte");
  ASSERT_NE(model, nullptr);
  Conversation conversation(*model);
  auto result = conversation.generate(prompt_, request_of(expected_.size()));
  ASSERT_TRUE(result.ok()) << result.failure().message;
  EXPECT_EQ(result->tokens, expected_);
  const std::string described = executorch_openvino_describe_compiled_models();
  EXPECT_NE(described.find("weights=mapped"), std::string::npos) << described;
  EXPECT_EQ(described.find("weights_given_back=0 "), std::string::npos) << described;
}

TEST_F(GenerationTest, PromptLookupGivesGreedyIdsInFewerCalls) {
  auto model = load("target.pte");
  ASSERT_NE(model, nullptr);
  PromptLookup lookup;
  GenerationRequest request = request_of(expected_.size());
  request.drafter = &lookup;
  request.max_draft = 4;
  auto result = Conversation(*model).generate(prompt_, request);
  ASSERT_TRUE(result.ok()) << result.failure().message;
  EXPECT_EQ(result->tokens, expected_);
  EXPECT_GT(result->accepted, 0u);
  EXPECT_LT(result->accepted, result->drafted);  // some rejected: the delegate went back
  EXPECT_LT(result->calls, expected_.size() - 1);
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
  auto target = load("target.pte");
  auto draft_model = load("draft.pte");
  ASSERT_TRUE(target && draft_model);
  DraftModel draft(*draft_model);
  GenerationRequest request = request_of(expected_.size());
  request.drafter = &draft;
  request.max_draft = 3;
  auto result = Conversation(*target).generate(prompt_, request);
  ASSERT_TRUE(result.ok()) << result.failure().message;
  EXPECT_EQ(result->tokens, expected_);
  EXPECT_GT(result->drafted, 0u);
}

TEST_F(GenerationTest, StopsAtEosAndWhenTheCallbackSaysSo) {
  auto model = load("target.pte");
  ASSERT_NE(model, nullptr);
  GenerationRequest request = request_of(expected_.size());
  request.eos = {expected_[3]};
  auto ended = Conversation(*model).generate(prompt_, request);
  ASSERT_TRUE(ended.ok()) << ended.failure().message;
  const auto first = std::find(expected_.begin(), expected_.end(), expected_[3]);
  EXPECT_EQ(ended->tokens, std::vector<int64_t>(expected_.begin(), first));  // the eos id not part of it
  EXPECT_EQ(ended->stopped_by, "eos");
  size_t seen = 0;
  GenerationRequest watched = request_of(expected_.size());
  watched.on_token = [&](int64_t) { return ++seen == 5; };
  auto stopped = Conversation(*model).generate(prompt_, watched);
  ASSERT_TRUE(stopped.ok()) << stopped.failure().message;
  EXPECT_EQ(stopped->tokens, std::vector<int64_t>(expected_.begin(), expected_.begin() + 5));
  EXPECT_EQ(stopped->stopped_by, "callback");
}

TEST_F(GenerationTest, SpeculationNeedsEveryPositionsLogits) {
  auto model = load("last_only.pte");
  ASSERT_NE(model, nullptr);
  EXPECT_FALSE(model->all_logits());
  PromptLookup lookup;
  GenerationRequest request = request_of(8);
  request.drafter = &lookup;
  Conversation conversation(*model);
  auto refused = conversation.generate(prompt_, request);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.failure().kind, FailureKind::kInvalidArgument);
  EXPECT_NE(refused.failure().message.find("logits of every position"), std::string::npos)
      << refused.failure().message;
  auto plain = conversation.generate(prompt_, request_of(8));
  ASSERT_TRUE(plain.ok()) << plain.failure().message;
  EXPECT_EQ(plain->tokens.size(), 8u);
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

int64_t token_of(Outcome<int64_t> token) { return token.ok() ? *token : -1; }

TEST(SamplerTest, FiltersAsTransformersGenerateDoes) {
  const std::vector<float> logits{1.0f, 3.0f, 2.0f, 3.0f, -1.0f};
  // Greedy: the first of equal maxima; a penalty on it moves the choice to the other.
  Sampler greedy;
  EXPECT_EQ(token_of(greedy.next_token(logits.data(), logits.size(), {})), 1);
  Sampler penalized(SamplingOptions{0.0, 0, 1.0, 2.0, uint64_t{1}});
  EXPECT_EQ(token_of(penalized.next_token(logits.data(), logits.size(), {1})), 3);
  EXPECT_EQ(token_of(penalized.next_token(logits.data(), logits.size(), {1, 3})), 2);
  // top-k 1 keeps both ids tied for first; top-p keeps the fewest most probable reaching it.
  Sampler top_k(SamplingOptions{1.0, 1, 1.0, 1.0, uint64_t{3}});
  Sampler top_p(SamplingOptions{1.0, 0, 0.3, 1.0, uint64_t{3}});
  std::vector<int> k_counts(5), p_counts(5);
  for (int i = 0; i < 400; ++i) {
    const int64_t k = token_of(top_k.next_token(logits.data(), logits.size(), {}));
    const int64_t p = token_of(top_p.next_token(logits.data(), logits.size(), {}));
    ASSERT_TRUE(k >= 0 && p >= 0);
    ++k_counts[static_cast<size_t>(k)];
    ++p_counts[static_cast<size_t>(p)];
  }
  EXPECT_EQ(k_counts[0] + k_counts[2] + k_counts[4], 0);
  EXPECT_GT(k_counts[1], 100);
  EXPECT_GT(k_counts[3], 100);
  // p(1) = p(3) = 0.40: at top-p 0.3 one of the two is enough, and of the tie the lower id stays.
  EXPECT_EQ(p_counts[1], 400);
  // Bad input is refused, not drawn from.
  const std::vector<float> broken{0.0f, NAN};
  auto nan = greedy.next_token(broken.data(), broken.size(), {});
  ASSERT_FALSE(nan.ok());
  EXPECT_EQ(nan.failure().kind, FailureKind::kInvalidArgument);
  EXPECT_FALSE(penalized.next_token(logits.data(), logits.size(), {7}).ok());  // an id past the vocabulary
  SamplingOptions negative, no_top_p;
  negative.temperature = -1.0;
  no_top_p.top_p = 0.0;
  EXPECT_FALSE(negative.validate().ok());
  EXPECT_FALSE(no_top_p.validate().ok());
  EXPECT_TRUE(SamplingOptions{}.validate().ok());
}

// As an application samples (the C entry points), the delegate's logits give the ids the Python
// package's engine draws from eager PyTorch's logits with the same options and seed: the C and Python
// fronts agree seed for seed.
TEST_F(GenerationTest, SamplingDrawsThePythonPackagesIdsWithTheSameSeed) {
  const SamplingOptions sampling = read_sampling(0);
  const std::vector<int64_t> python = read_ids("sampled.txt");
  ASSERT_EQ(python.size(), expected_.size());
  CProgram c("target.pte");
  ASSERT_NE(c.conversation, nullptr);
  auto sample = [&](eov_conversation* conversation) {
    eov_generation_options options;
    eov_generation_options_init(&options);
    options.max_new_tokens = expected_.size();
    options.temperature = sampling.temperature;
    options.top_k = sampling.top_k;
    options.top_p = sampling.top_p;
    options.repetition_penalty = sampling.repetition_penalty;
    options.has_seed = 1;
    options.seed = *sampling.seed;
    std::vector<int64_t> ids;
    options.on_token = collect;
    options.user = &ids;
    EXPECT_EQ(eov_conversation_generate(conversation, prompt_.data(), prompt_.size(), &options, nullptr), 0)
        << eov_generation_last_error();
    return ids;
  };
  const std::vector<int64_t> ids = sample(c.conversation);
  EXPECT_EQ(ids, python);
  EXPECT_NE(ids, expected_);  // sampled, not greedy
  eov_conversation* other = nullptr;
  ASSERT_EQ(eov_conversation_new(c.program, &other), 0);
  EXPECT_EQ(sample(other), ids);  // the seed fixes them, in another conversation on the program too
  eov_conversation_free(other);
}

// Each token costs one draw, kept draft or not: under one seed, speculative sampling draws plain
// sampling's ids (from the same logits), and the Python package's.
TEST_F(GenerationTest, SpeculativeSamplingDrawsPlainSamplingsIds) {
  size_t max_draft = 0;
  const SamplingOptions options = read_sampling(1, &max_draft);
  const std::vector<int64_t> python = read_ids("sampled_lookup.txt");
  ASSERT_EQ(python.size(), expected_.size());
  auto model = load("target.pte");
  ASSERT_NE(model, nullptr);
  auto plain = Conversation(*model).generate(prompt_, request_of(expected_.size(), options));
  PromptLookup lookup;
  GenerationRequest request = request_of(expected_.size(), options);
  request.drafter = &lookup;
  request.max_draft = max_draft;
  auto drafted = Conversation(*model).generate(prompt_, request);
  ASSERT_TRUE(plain.ok() && drafted.ok());
  EXPECT_EQ(drafted->tokens, plain->tokens);
  EXPECT_EQ(drafted->tokens, python);
  EXPECT_GT(drafted->accepted, 0u);  // drafts landed: the path under test was taken
  EXPECT_LT(drafted->accepted, drafted->drafted);  // and some were rejected, the delegate going back
  EXPECT_EQ(drafted->accepted, static_cast<size_t>(read_ids("sampled_lookup_accepted.txt").at(0)));
}

// Each option out of its range is refused before anything runs, the message naming the option and
// its range (what eov_generation_last_error hands an application).
TEST_F(GenerationTest, SamplingOptionsOutOfRangeAreRefused) {
  auto model = load("target.pte");
  ASSERT_NE(model, nullptr);
  struct Case {
    SamplingOptions options;
    const char* option;
    const char* range;
  };
  std::vector<Case> cases(5);
  cases[0].options.temperature = -0.5;
  cases[0] = {cases[0].options, "temperature", "0 (greedy) or a positive number"};
  cases[1].options.temperature = 0.5;
  cases[1].options.top_k = -1;
  cases[1] = {cases[1].options, "top_k", "0 (off) or more"};
  cases[2].options.temperature = 0.5;
  cases[2].options.top_p = 1.5;
  cases[2] = {cases[2].options, "top_p", "(0, 1]"};
  cases[3].options.temperature = 0.5;
  cases[3].options.top_p = 0.0;
  cases[3] = {cases[3].options, "top_p", "(0, 1]"};
  cases[4].options.repetition_penalty = 0.0;
  cases[4] = {cases[4].options, "repetition_penalty", "a positive number"};
  Conversation conversation(*model);
  for (const Case& refused_case : cases) {
    auto refused = conversation.generate(prompt_, request_of(4, refused_case.options));
    ASSERT_FALSE(refused.ok()) << refused_case.option;
    EXPECT_EQ(refused.failure().kind, FailureKind::kInvalidArgument);
    const std::string& message = refused.failure().message;
    EXPECT_NE(message.find(refused_case.option), std::string::npos) << message;
    EXPECT_NE(message.find(refused_case.range), std::string::npos) << message;
  }
  EXPECT_TRUE(conversation.held().empty());  // nothing was fed
}

// Decoding to the very end of a context that is not a multiple of paged attention's block of 32
// (the target's 100; the program runs paged, the default on the CPU): plainly, with prompt lookup,
// and with a draft program of the target's weights and a longer context (last_only.pte, 128: its
// drafts land up to the target's last position and could go on past it), every run gives eager
// PyTorch's ids up to the last position, drafts accepted on the way, and says it stopped at the
// context. Guards against drafts allowed past the context: tried (before the engine), generate's
// span without `model.context() - position - 1` fails both drafted runs (the delegate refuses the
// last round's call: "the attention mask ... does not have a row for each of the 4 tokens"); and
// against paged caches allocated one block short (paged_layout's blocks rounded down): tried, the
// plain run's ids differ past position 96 and the test binary dies with a segmentation fault,
// without a sanitizer. The other tests stop at position 57.
TEST_F(GenerationTest, EveryDrafterDecodesToTheEndOfAContextThatIsNotAMultipleOfTheBlock) {
  const std::vector<int64_t> to_end = read_ids("expected_to_end.txt");
  ASSERT_EQ(to_end.size(), 100u - prompt_.size());
  auto model = load("target.pte");
  auto draft_model = load("last_only.pte");
  ASSERT_TRUE(model && draft_model);
  ASSERT_EQ(model->context(), 100);
  ASSERT_EQ(draft_model->context(), 128);
  auto plain = Conversation(*model).generate(prompt_, request_of(1000));
  ASSERT_TRUE(plain.ok()) << plain.failure().message;
  EXPECT_EQ(plain->tokens, to_end);
  EXPECT_EQ(plain->stopped_by, "context");
  // At 3 drafts a call, both drafters' last round meets the end with fewer positions left than it carries.
  PromptLookup lookup;
  DraftModel draft(*draft_model);
  for (Drafter* drafter : {static_cast<Drafter*>(&lookup), static_cast<Drafter*>(&draft)}) {
    const char* run = drafter == &lookup ? "lookup" : "draft";
    GenerationRequest request = request_of(1000);
    request.drafter = drafter;
    request.max_draft = 3;
    auto result = Conversation(*model).generate(prompt_, request);
    if (!result.ok()) {
      ADD_FAILURE() << run << ": " << result.failure().message;
      continue;
    }
    EXPECT_EQ(result->tokens, to_end) << run;
    EXPECT_EQ(result->stopped_by, "context") << run;
    EXPECT_GT(result->accepted, 0u) << run;
  }
}

// A conversation continued: the second generation is given the first's conversation (the prompt and
// every id chosen) and a new turn; the program holds all of it but the last id chosen (never fed), so
// only that id and the turn are fed, and the ids equal a fresh conversation's on the whole. Fails on
// an engine that counts the last chosen id as held (finish() keeping conversation.size() tokens
// instead of `position`): tried, the id is never fed and the continuation fails in the delegate
// ("past the ..." position) -- and on one that feeds everything again (reused_tokens 0).
TEST_F(GenerationTest, AContinuedConversationFeedsOnlyWhatItDoesNotHold) {
  auto model = load("target.pte");
  ASSERT_NE(model, nullptr);
  Conversation conversation(*model);
  auto first = conversation.generate(prompt_, request_of(10));
  ASSERT_TRUE(first.ok()) << first.failure().message;
  EXPECT_EQ(first->tokens, std::vector<int64_t>(expected_.begin(), expected_.begin() + 10));
  EXPECT_EQ(first->reused_tokens, 0u);
  std::vector<int64_t> whole = prompt_;
  whole.insert(whole.end(), first->tokens.begin(), first->tokens.end());
  EXPECT_EQ(conversation.tokens(), whole);
  EXPECT_EQ(conversation.held(), std::vector<int64_t>(whole.begin(), whole.end() - 1));
  whole.insert(whole.end(), {20, 21, 22});  // the next turn
  auto second = conversation.generate(whole, request_of(12));
  ASSERT_TRUE(second.ok()) << second.failure().message;
  EXPECT_EQ(second->reused_tokens, prompt_.size() + 10 - 1);
  EXPECT_EQ(second->prompt_tokens, 4u);  // the last id chosen and the turn
  auto fresh = Conversation(*model).generate(whole, request_of(12));
  ASSERT_TRUE(fresh.ok()) << fresh.failure().message;
  EXPECT_EQ(fresh->reused_tokens, 0u);
  EXPECT_EQ(second->tokens, fresh->tokens);
}

// Going back: after a long conversation, a shorter one that edits a turn (a prefix kept, then other
// tokens), and then the bare prompt again: each gives a fresh conversation's ids, keeping only the
// prefix the program holds. Fails on an engine that takes the held length as the prefix kept without
// comparing tokens (continuing assumed, `common` = min(held, given)): tried, the edited conversation's
// ids differ from the fresh run's (the edit never reaches the caches).
TEST_F(GenerationTest, AConversationGoesBackToWhereItDiffers) {
  auto model = load("target.pte");
  ASSERT_NE(model, nullptr);
  Conversation conversation(*model);
  auto first = conversation.generate(prompt_, request_of(20));
  ASSERT_TRUE(first.ok()) << first.failure().message;
  std::vector<int64_t> edited(prompt_.begin(), prompt_.begin() + 5);
  edited.insert(edited.end(), {30, 31, 32, 33, 34, 35, 36, 37});  // longer than the prompt, shorter than held
  auto again = conversation.generate(edited, request_of(16));
  ASSERT_TRUE(again.ok()) << again.failure().message;
  EXPECT_EQ(again->reused_tokens, 5u);
  auto fresh = Conversation(*model).generate(edited, request_of(16));
  ASSERT_TRUE(fresh.ok()) << fresh.failure().message;
  EXPECT_EQ(again->tokens, fresh->tokens);
  EXPECT_NE(again->tokens, std::vector<int64_t>(expected_.begin(), expected_.begin() + 16));  // the edit mattered
  // Back to the bare prompt, after a longer conversation: all of it held, its last token fed again
  // (its logits are needed), and the prompt's greedy ids.
  Conversation back(*model);
  ASSERT_TRUE(back.generate(prompt_, request_of(20)).ok());
  auto prompt_again = back.generate(prompt_, request_of(expected_.size()));
  ASSERT_TRUE(prompt_again.ok()) << prompt_again.failure().message;
  EXPECT_EQ(prompt_again->reused_tokens, prompt_.size() - 1);
  EXPECT_EQ(prompt_again->tokens, expected_);
}

// The context: a conversation of more tokens than the program's 100 positions is refused before
// anything is fed, the message naming both numbers (the C entry points say the same); one of exactly
// 100 gets one id, chosen from the last position's logits, and stops with "context", as a generation
// reaching the end does. Fails on an engine whose end test is one id late (`conversation.size() >
// context`): tried, it feeds position 99 and chooses a 92nd id, a conversation of 101 tokens, more
// than the program holds; and on a check of `>= context` for the conversation given: tried, the
// 100-token conversation is refused.
TEST_F(GenerationTest, TheContextLimitsTheConversationAndEndsGeneration) {
  auto model = load("target.pte");
  ASSERT_NE(model, nullptr);
  Conversation conversation(*model);
  auto to_end = conversation.generate(prompt_, request_of(1000));
  ASSERT_TRUE(to_end.ok()) << to_end.failure().message;
  EXPECT_EQ(to_end->stopped_by, "context");
  EXPECT_EQ(to_end->tokens, read_ids("expected_to_end.txt"));
  EXPECT_EQ(conversation.tokens().size(), 100u);
  // The whole context given: one id more, from the last position's logits.
  std::vector<int64_t> whole = conversation.tokens();
  auto last = conversation.generate(whole, request_of(8));
  ASSERT_TRUE(last.ok()) << last.failure().message;
  EXPECT_EQ(last->tokens.size(), 1u);
  EXPECT_EQ(last->stopped_by, "context");
  EXPECT_EQ(last->reused_tokens, 99u);
  whole.push_back(last->tokens.front());
  auto refused = conversation.generate(whole, request_of(8));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.failure().kind, FailureKind::kInvalidArgument);
  EXPECT_NE(refused.failure().message.find("101"), std::string::npos) << refused.failure().message;
  EXPECT_NE(refused.failure().message.find("100"), std::string::npos) << refused.failure().message;
  // Through the C entry points: the caller's input, with the same reason.
  CProgram c("target.pte");
  ASSERT_NE(c.conversation, nullptr);
  eov_generation_options options;
  eov_generation_options_init(&options);
  EXPECT_EQ(eov_conversation_generate(c.conversation, whole.data(), whole.size(), &options, nullptr),
            EOV_GENERATION_INVALID_ARGUMENT);
  const std::string error = eov_generation_last_error();
  EXPECT_NE(error.find("101"), std::string::npos) << error;
  EXPECT_NE(error.find("100"), std::string::npos) << error;
}

// A constraint written by the test: only even ids; it refuses an odd one handed to accept() and
// records what it accepted.
class EvenIds : public TokenConstraint {
 public:
  Status reset() override {
    accepted.clear();
    return ok_status();
  }
  Status allowed(TokenBits& bits) override {
    ++masks;
    std::fill(bits.begin(), bits.end(), 0x55555555u);  // bits 0, 2, 4, ...
    return ok_status();
  }
  Status accept(int64_t token) override {
    if (token % 2 != 0) return Failure{FailureKind::kInvalidArgument, "odd id " + std::to_string(token) + " accepted"};
    accepted.push_back(token);
    return ok_status();
  }
  Status rollback(size_t count) override {
    if (count > accepted.size()) return Failure{FailureKind::kInvalidArgument, "rolled back past the start"};
    accepted.resize(accepted.size() - count);
    return ok_status();
  }
  bool complete() override { return true; }
  bool stopped() override { return false; }
  std::vector<int64_t> accepted;
  size_t masks = 0;
};

// A constraint written by the test: exactly `sequence`, then nothing but an end.
class FixedSequence : public TokenConstraint {
 public:
  explicit FixedSequence(std::vector<int64_t> sequence) : sequence_(std::move(sequence)) {}
  Status reset() override {
    accepted.clear();
    return ok_status();
  }
  Status allowed(TokenBits& bits) override {
    std::fill(bits.begin(), bits.end(), 0u);
    if (accepted.size() < sequence_.size()) {
      const auto token = static_cast<size_t>(sequence_[accepted.size()]);
      bits[token / 32] |= 1u << (token % 32);
    }
    return ok_status();
  }
  Status accept(int64_t token) override {
    if (accepted.size() >= sequence_.size() || token != sequence_[accepted.size()])
      return Failure{FailureKind::kInvalidArgument, "id " + std::to_string(token) + " not the sequence's next"};
    accepted.push_back(token);
    return ok_status();
  }
  Status rollback(size_t count) override {
    accepted.resize(accepted.size() - std::min(count, accepted.size()));
    return ok_status();
  }
  bool complete() override { return accepted.size() == sequence_.size(); }
  bool stopped() override { return complete(); }
  std::vector<int64_t> accepted;

 private:
  std::vector<int64_t> sequence_;
};

bool all_even(const std::vector<int64_t>& ids) {
  return std::all_of(ids.begin(), ids.end(), [](int64_t id) { return id % 2 == 0; });
}

// A constraint's mask holds for every token chosen, sampled and with prompt lookup's drafts: each
// draft is checked against the mask of its position (a draft the model prefers but the constraint
// forbids is not kept), so speculation gives constrained plain decoding's ids; a constraint that
// ends inside a run of verified drafts ends the generation there with all of its tokens. Fails on an
// engine that verifies drafts without the mask (the choice among all tokens compared with the draft,
// the mask applied only at plain steps): tried, the even-ids lookup run fails (a draft the mask
// forbids reaches accept()). The sequence ending inside the drafts failed on the engine as first
// written (take() asked the constraint whether it stopped after each verified draft, when it had
// accepted them all: the result was cut 3 tokens short): fixed.
TEST_F(GenerationTest, AConstraintHoldsForSampledAndDraftedTokens) {
  auto model = load("target.pte");
  ASSERT_NE(model, nullptr);
  ASSERT_FALSE(all_even(expected_));  // unconstrained, odd ids come: the mask has work to do
  const SamplingOptions sampling = read_sampling(0);
  {
    EvenIds even;
    GenerationRequest request = request_of(expected_.size(), sampling);
    request.constraint = &even;
    auto sampled = Conversation(*model).generate(prompt_, request);
    ASSERT_TRUE(sampled.ok()) << sampled.failure().message;
    EXPECT_EQ(sampled->tokens.size(), expected_.size());
    EXPECT_TRUE(all_even(sampled->tokens));
    EXPECT_EQ(even.accepted, sampled->tokens);
    EXPECT_EQ(even.masks, expected_.size());  // a mask for each choice
  }
  // Greedy with the constraint, plainly and with prompt lookup: the same ids, drafts kept.
  EvenIds plain_even, drafted_even;
  GenerationRequest plain_request = request_of(expected_.size());
  plain_request.constraint = &plain_even;
  auto plain = Conversation(*model).generate(prompt_, plain_request);
  PromptLookup lookup;
  GenerationRequest drafted_request = request_of(expected_.size());
  drafted_request.constraint = &drafted_even;
  drafted_request.drafter = &lookup;
  drafted_request.max_draft = 4;
  auto drafted = Conversation(*model).generate(prompt_, drafted_request);
  ASSERT_TRUE(plain.ok()) << plain.failure().message;
  ASSERT_TRUE(drafted.ok()) << drafted.failure().message;
  EXPECT_TRUE(all_even(plain->tokens));
  EXPECT_EQ(drafted->tokens, plain->tokens);
  EXPECT_EQ(drafted_even.accepted, drafted->tokens);
  EXPECT_GT(drafted->accepted, 0u);
  // Fixed sequences that repeat (lookup drafts their next turn): one that then leaves the pattern
  // (the draft after the last 8 is 4 again, which the mask forbids), one that ends inside it (drafts
  // run past its end): exactly the sequence, sampled or drafted, ending with the constraint.
  const std::vector<std::vector<int64_t>> sequences{{4, 6, 8, 4, 6, 8, 4, 6, 8, 4, 6, 8, 10, 12},
                                                    {4, 6, 8, 4, 6, 8, 4, 6, 8, 4, 6, 8, 4, 6}};
  for (const auto& sequence : sequences) {
    for (bool with_lookup : {false, true}) {
      const std::string run = std::string(with_lookup ? "lookup" : "plain") + ", ending " +
                              std::to_string(sequence.back());
      FixedSequence fixed(sequence);
      PromptLookup own;
      GenerationRequest request = request_of(100, sampling);
      request.constraint = &fixed;
      if (with_lookup) {
        request.drafter = &own;
        request.max_draft = 4;
      }
      auto result = Conversation(*model).generate(prompt_, request);
      ASSERT_TRUE(result.ok()) << run << ": " << result.failure().message;
      EXPECT_EQ(result->tokens, sequence) << run;
      EXPECT_EQ(result->stopped_by, "constraint") << run;
      EXPECT_EQ(fixed.accepted, sequence) << run;
      if (with_lookup) {
        EXPECT_GT(result->accepted, 0u) << run;
      }
    }
  }
}

}  // namespace
}  // namespace executorch_openvino::generation

namespace executorch_openvino::generation {
namespace {

// State files through the C entry points an application calls (eov_conversation_write_state /
// _read_state): a second load of the program, in another conversation, reads the first's state and
// continues as the first does, feeding only the new turn; a cut file is refused and changes nothing.
// Paged caches only (the default on the CPU); the file's round trip across processes is
// tests/python/serving/test_state_files.py.
TEST_F(GenerationTest, AStateFileContinuesInAnotherLoadOfTheProgram) {
  const std::string path = (std::filesystem::temp_directory_path() / "eov_generation_test.state").string();
  CProgram first("target.pte"), second("target.pte");
  std::vector<int64_t> ids;
  eov_generation_options options;
  eov_generation_options_init(&options);
  options.max_new_tokens = 6;
  options.on_token = collect;
  options.user = &ids;
  ASSERT_EQ(eov_conversation_generate(first.conversation, prompt_.data(), prompt_.size(), &options, nullptr), 0)
      << eov_generation_last_error();
  ASSERT_EQ(eov_conversation_write_state(first.conversation, path.c_str()), 0) << eov_generation_last_error();
  std::vector<int64_t> turn = prompt_;
  turn.insert(turn.end(), ids.begin(), ids.end());
  turn.insert(turn.end(), {20, 21, 22});
  ids.clear();
  ASSERT_EQ(eov_conversation_generate(first.conversation, turn.data(), turn.size(), &options, nullptr), 0);
  const std::vector<int64_t> expected = ids;

  // A cut copy is refused, and the second conversation still holds nothing.
  {
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(path + ".cut", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  EXPECT_NE(eov_conversation_read_state(second.conversation, (path + ".cut").c_str()), 0);
  EXPECT_NE(std::string(eov_generation_last_error()).find("truncated"), std::string::npos) << eov_generation_last_error();
  EXPECT_EQ(eov_conversation_tokens(second.conversation, nullptr, 0), 0u);

  ASSERT_EQ(eov_conversation_read_state(second.conversation, path.c_str()), 0) << eov_generation_last_error();
  EXPECT_EQ(eov_conversation_tokens(second.conversation, nullptr, 0), turn.size() - 3);
  ids.clear();
  eov_generation_result result{};
  result.struct_size = sizeof result;
  ASSERT_EQ(eov_conversation_generate(second.conversation, turn.data(), turn.size(), &options, &result), 0)
      << eov_generation_last_error();
  EXPECT_EQ(ids, expected);
  EXPECT_EQ(result.reused_tokens, turn.size() - 4);  // all but the last id chosen and the turn
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".cut");
}

}  // namespace
}  // namespace executorch_openvino::generation
