// The engine's C entry points (include/executorch_openvino/generation.h): handles over the C++
// objects, options into a GenerationRequest, failures into codes and the thread's last error. No
// exception crosses this boundary.
#include "executorch_openvino/generation.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <memory>
#include <new>
#include <string>

#include "generation/batch.h"
#include "generation/callback_model.h"
#include "generation/grammar/llguidance_constraint.h"
#include "generation/conversation.h"
#include "generation/program_model.h"
#include "generation/speech_model.h"

using namespace executorch_openvino;
using namespace executorch_openvino::generation;

struct eov_program {
  std::unique_ptr<LanguageModel> model;
  std::unique_ptr<Batch> batch;  // its batched conversations', made with the first (batch.h)
  const void* resident = nullptr;  // the conversation (or drafter) whose tokens the caches hold
  std::map<std::string, std::vector<int64_t>> saved;  // the tokens of each saved state
};

struct eov_conversation {
  eov_program* program;
  std::unique_ptr<LanguageModel> member;  // a batched conversation's own model (batch.h); else none
  Conversation conversation;
  // The draft program's drafter, kept between generations (it holds its own conversation).
  eov_program* draft_program = nullptr;
  std::unique_ptr<DraftModel> draft;
  explicit eov_conversation(eov_program* p) : program(p), conversation(*p->model) {}
  eov_conversation(eov_program* p, std::unique_ptr<LanguageModel> m)
      : program(p), member(std::move(m)), conversation(*member) {}
};

// A drafter of the application's (eov_draft_fn).
class CallbackDrafter : public Drafter {
 public:
  CallbackDrafter(eov_draft_fn draft, void* user, bool free) : draft_(draft), user_(user), free_(free) {}
  std::vector<int64_t> draft(const std::vector<int64_t>& history, size_t limit) override {
    std::vector<int64_t> drafts(limit);
    const size_t given = draft_(user_, history.data(), history.size(), limit, drafts.data());
    drafts.resize(std::min(given, limit));
    return drafts;
  }
  bool free_to_ask() const override { return free_; }

 private:
  eov_draft_fn draft_;
  void* user_;
  bool free_;
};

struct eov_vocabulary {
  Vocabulary vocabulary;
};

struct eov_constraint {
  std::unique_ptr<TokenConstraint> constraint;
};

namespace {

thread_local std::string last_error;

int fail(int code, const std::string& message) {
  last_error = message;
  return code;
}

int fail(const Failure& failure) {
  const int code = failure.kind == FailureKind::kInvalidArgument ? EOV_GENERATION_INVALID_ARGUMENT
                   : failure.kind == FailureKind::kRuntimeUnavailable ? EOV_GENERATION_UNAVAILABLE
                                                                       : EOV_GENERATION_MODEL_FAILED;
  return fail(code, failure.message);
}

// Runs `body`, turning what it throws (allocation, the standard library) into a failure.
template <typename Body>
int guarded(Body&& body) {
  last_error.clear();
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(EOV_GENERATION_MODEL_FAILED, "out of memory");
  } catch (const std::exception& error) {
    return fail(EOV_GENERATION_MODEL_FAILED, error.what());
  }
}

// Making llguidance's tokenizer reads the whole vocabulary (a second at 150k tokens): one per
// (library, tokenizer.json, end ids), shared by the constraints alive.
Outcome<std::shared_ptr<const grammar::GrammarTokenizer>> shared_tokenizer(const std::string& library,
                                                                          const std::string& tokenizer_json,
                                                                          const std::vector<int64_t>& eos) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<const grammar::GrammarTokenizer>> made;
  std::string key = library + '\0' + std::to_string(std::hash<std::string>{}(tokenizer_json)) + ':' +
                    std::to_string(tokenizer_json.size());
  for (int64_t id : eos) key += ',' + std::to_string(id);
  std::lock_guard<std::mutex> lock(mutex);
  if (auto alive = made[key].lock()) return alive;
  auto opened = grammar::LlguidanceLibrary::open(library.empty() ? std::nullopt
                                                                 : std::optional<std::filesystem::path>(library));
  if (!opened) return opened.failure();
  auto tokenizer = grammar::GrammarTokenizer::from_tokenizer_json(*opened, tokenizer_json, eos);
  if (!tokenizer) return tokenizer.failure();
  made[key] = *tokenizer;
  return *tokenizer;
}

// Whether a tokenizer.json's decoder drops a text's first space: a Strip of one character at the
// start (SentencePiece-style tokenizers: Llama 2, Mistral, Gemma) or a Metaspace decoder.
bool strips_first_space(const std::string& tokenizer_json) {
  const size_t decoder = tokenizer_json.find("\"decoder\"");
  if (decoder == std::string::npos) return false;
  // The decoder's own object: up to the model (the vocabulary, whose tokens may spell anything).
  const size_t model = tokenizer_json.find("\"model\"", decoder);
  const std::string rest = tokenizer_json.substr(decoder, model == std::string::npos ? std::string::npos : model - decoder);
  if (rest.find("\"Metaspace\"") != std::string::npos) return true;
  for (size_t strip = rest.find("\"Strip\""); strip != std::string::npos; strip = rest.find("\"Strip\"", strip + 1)) {
    const std::string near = rest.substr(strip, 120);
    const size_t start = near.find("\"start\"");
    if (start == std::string::npos) continue;
    size_t digit = near.find_first_of("0123456789", start);
    if (digit != std::string::npos && near[digit] != '0') return true;
  }
  return false;
}

// Saved states and state files cover a program's own conversations (slot 0 of its caches).
int refuse_batched() {
  return fail(EOV_GENERATION_INVALID_ARGUMENT,
              "a batched conversation keeps its caches in a slot of its own, which saved states and state files do "
              "not cover: use a conversation of eov_conversation_new for them");
}

}  // namespace

extern "C" {

const char* eov_generation_last_error(void) { return last_error.c_str(); }

int eov_program_load(const char* pte, const char* data, const char* method, eov_program** out) {
  return guarded([&] {
    if (pte == nullptr || out == nullptr) return fail(EOV_GENERATION_INVALID_ARGUMENT, "no program path given");
    *out = nullptr;
    auto loaded = ProgramModel::load(pte, data != nullptr ? data : "", method != nullptr ? method : "forward");
    if (!loaded) return fail(loaded.failure());
    *out = new eov_program();
    (*out)->model = std::move(loaded.value());
    return 0;
  });
}

int eov_program_from_callback(eov_step_fn step, void* user, size_t vocab, int64_t context, int64_t max_call_tokens,
                              int all_logits, eov_program** out) {
  return guarded([&] {
    if (step == nullptr || out == nullptr || vocab == 0 || context < 1 || max_call_tokens < 1)
      return fail(EOV_GENERATION_INVALID_ARGUMENT,
                  "a callback model needs a step function, a vocabulary, a context and a call size of at least 1");
    *out = new eov_program();
    (*out)->model = std::make_unique<CallbackModel>(step, user, vocab, context, max_call_tokens, all_logits != 0);
    return 0;
  });
}

void eov_program_free(eov_program* program) { delete program; }

int eov_program_load_speech(const char* pte, const char* data, eov_program** out) {
  return guarded([&] {
    if (pte == nullptr || out == nullptr) return fail(EOV_GENERATION_INVALID_ARGUMENT, "no program path given");
    *out = nullptr;
    auto loaded = SpeechModel::load(pte, data != nullptr ? data : "");
    if (!loaded) return fail(loaded.failure());
    *out = new eov_program();
    (*out)->model = std::move(loaded.value());
    return 0;
  });
}

int eov_program_encode(eov_program* program, const float* features, const int64_t* shape, size_t rank, float* states,
                       size_t capacity) {
  return guarded([&] {
    auto* speech = program != nullptr ? dynamic_cast<SpeechModel*>(program->model.get()) : nullptr;
    if (speech == nullptr)
      return fail(EOV_GENERATION_INVALID_ARGUMENT, "not a speech program (load it with eov_program_load_speech)");
    if (features == nullptr || (rank > 0 && shape == nullptr))
      return fail(EOV_GENERATION_INVALID_ARGUMENT, "no features given");
    // Whatever the caches held was computed from the last window's states: every conversation starts again.
    program->resident = nullptr;
    if (Status encoded = speech->encode(features, std::vector<int64_t>(shape, shape + rank)); !encoded)
      return fail(encoded.failure());
    if (states != nullptr) {
      const std::vector<float>& held = speech->states();
      if (capacity < held.size())
        return fail(EOV_GENERATION_INVALID_ARGUMENT, "room for " + std::to_string(capacity) + " floats, and the states are " +
                                                         std::to_string(held.size()));
      std::copy(held.begin(), held.end(), states);
    }
    return 0;
  });
}

size_t eov_program_shape(const eov_program* program, const char* which, int64_t* out, size_t capacity) {
  const auto* speech = program != nullptr ? dynamic_cast<const SpeechModel*>(program->model.get()) : nullptr;
  if (speech == nullptr || which == nullptr) return 0;
  const std::string name = which;
  if (name != "features" && name != "states") return 0;
  const std::vector<int64_t>& shape = name == "features" ? speech->feature_shape() : speech->states_shape();
  for (size_t i = 0; i < shape.size() && i < capacity && out != nullptr; ++i) out[i] = shape[i];
  return shape.size();
}

int64_t eov_program_info(const eov_program* program, const char* key) {
  if (program == nullptr || key == nullptr) return -1;
  const LanguageModel& model = *program->model;
  const std::string name = key;
  if (name == "vocab") return static_cast<int64_t>(model.vocab());
  if (name == "context") return model.context();
  if (name == "max_call_tokens") return model.max_call_tokens();
  if (name == "all_logits") return model.all_logits() ? 1 : 0;
  if (name == "bos") return model.bos_id();
  if (name == "eos_count") return static_cast<int64_t>(model.eos_ids().size());
  if (name == "start_token") {
    const auto* speech = dynamic_cast<const SpeechModel*>(&model);
    return speech != nullptr ? speech->start_token() : -1;
  }
  const Batch::Counts batched = program->batch ? program->batch->counts() : Batch::Counts{};
  if (name == "batch_calls") return static_cast<int64_t>(batched.calls);
  if (name == "batch_calls_shared") return static_cast<int64_t>(batched.batched_calls);
  if (name == "batch_sequences") return static_cast<int64_t>(batched.sequences);
  return -1;
}

size_t eov_program_eos_ids(const eov_program* program, int64_t* out, size_t capacity) {
  if (program == nullptr) return 0;
  const std::vector<int64_t> eos = program->model->eos_ids();
  for (size_t i = 0; i < eos.size() && i < capacity && out != nullptr; ++i) out[i] = eos[i];
  return eos.size();
}

int eov_vocabulary_new(const uint32_t* lengths, const uint8_t* bytes, size_t count, eov_vocabulary** out) {
  return guarded([&] {
    if (out == nullptr || (count > 0 && lengths == nullptr)) return fail(EOV_GENERATION_INVALID_ARGUMENT, "no lengths given");
    std::vector<std::string> tokens(count);
    size_t at = 0;
    for (size_t i = 0; i < count; ++i) {
      if (lengths[i] > 0 && bytes == nullptr) return fail(EOV_GENERATION_INVALID_ARGUMENT, "no bytes given");
      tokens[i].assign(reinterpret_cast<const char*>(bytes) + at, lengths[i]);
      at += lengths[i];
    }
    *out = new eov_vocabulary{Vocabulary(std::move(tokens))};
    return 0;
  });
}

int eov_vocabulary_from_tokenizer(const char* tokenizer_json, const char* library, size_t size, eov_vocabulary** out) {
  return guarded([&] {
    if (tokenizer_json == nullptr || out == nullptr) return fail(EOV_GENERATION_INVALID_ARGUMENT, "no tokenizer.json given");
    *out = nullptr;
    // The end ids only matter to constraints; any id serves here.
    auto tokenizer = shared_tokenizer(library != nullptr ? library : "", tokenizer_json, {0});
    if (!tokenizer) return fail(tokenizer.failure());
    *out = new eov_vocabulary{Vocabulary((*tokenizer)->token_bytes_table(size), strips_first_space(tokenizer_json))};
    return 0;
  });
}

void eov_vocabulary_free(eov_vocabulary* vocabulary) { delete vocabulary; }

int eov_constraint_new(const char* kind, const char* text, const char* tokenizer_json, const char* library,
                       const int64_t* eos_ids, size_t eos_count, eov_constraint** out) {
  return guarded([&] {
    if (kind == nullptr || text == nullptr || tokenizer_json == nullptr || out == nullptr)
      return fail(EOV_GENERATION_INVALID_ARGUMENT, "a constraint needs its kind, its text and the tokenizer.json");
    if (eos_count == 0 || eos_ids == nullptr)
      return fail(EOV_GENERATION_INVALID_ARGUMENT, "a constraint needs the end-of-sequence ids (where the output ends)");
    *out = nullptr;
    auto parsed = grammar::parse_grammar_kind(kind);
    if (!parsed) return fail(parsed.failure());
    const std::vector<int64_t> eos(eos_ids, eos_ids + eos_count);
    auto tokenizer = shared_tokenizer(library != nullptr ? library : "", tokenizer_json, eos);
    if (!tokenizer) return fail(tokenizer.failure());
    auto made = grammar::LlguidanceConstraint::create(*tokenizer, *parsed, text);
    if (!made) return fail(made.failure());
    *out = new eov_constraint{std::move(made.value())};
    return 0;
  });
}

void eov_constraint_free(eov_constraint* constraint) { delete constraint; }

namespace {

eov_generation_options default_options() {
  eov_generation_options options;
  std::memset(&options, 0, sizeof options);
  options.struct_size = sizeof options;
  options.max_new_tokens = 128;
  options.top_p = 1.0;
  options.repetition_penalty = 1.0;
  options.max_draft = 5;
  options.max_initial_timestamp = -1;
  options.timestamp_from_probability = 1;
  return options;
}

}  // namespace

void eov_generation_options_init_size(eov_generation_options* options, size_t size) {
  if (options == nullptr || size < sizeof options->struct_size) return;
  const eov_generation_options defaults = default_options();
  std::memcpy(options, &defaults, std::min(size, sizeof defaults));
  options->struct_size = std::min(size, sizeof defaults);
}

int eov_conversation_new(eov_program* program, eov_conversation** out) {
  return guarded([&] {
    if (program == nullptr || out == nullptr) return fail(EOV_GENERATION_INVALID_ARGUMENT, "no program given");
    *out = new eov_conversation(program);
    return 0;
  });
}

int eov_conversation_new_batched(eov_program* program, eov_conversation** out) {
  return guarded([&] {
    if (program == nullptr || out == nullptr) return fail(EOV_GENERATION_INVALID_ARGUMENT, "no program given");
    *out = nullptr;
    if (!program->batch) {
      auto* loaded = dynamic_cast<ProgramModel*>(program->model.get());
      if (loaded == nullptr)
        return fail(EOV_GENERATION_INVALID_ARGUMENT, "only a program loaded from a .pte batches conversations");
      auto batch = Batch::create(*loaded);
      if (!batch) return fail(batch.failure());
      program->batch = std::move(batch.value());
    }
    auto member = program->batch->member();
    if (!member) return fail(member.failure());
    *out = new eov_conversation(program, std::move(member.value()));
    return 0;
  });
}

void eov_conversation_free(eov_conversation* conversation) {
  if (conversation == nullptr) return;
  if (conversation->program->resident == conversation) conversation->program->resident = nullptr;
  if (conversation->draft_program != nullptr && conversation->draft_program->resident == conversation->draft.get())
    conversation->draft_program->resident = nullptr;
  delete conversation;
}

int eov_conversation_generate(eov_conversation* conversation, const int64_t* tokens, size_t count,
                              const eov_generation_options* given_options, eov_generation_result* result) {
  return guarded([&] {
    if (conversation == nullptr || given_options == nullptr || (count > 0 && tokens == nullptr))
      return fail(EOV_GENERATION_INVALID_ARGUMENT, "no conversation, tokens or options given");
    // A caller compiled against an older header has a shorter struct: its fields, then the defaults.
    if (given_options->struct_size < offsetof(eov_generation_options, on_text) ||
        given_options->struct_size > sizeof(eov_generation_options))
      return fail(EOV_GENERATION_INVALID_ARGUMENT, "eov_generation_options of another version (struct_size " +
                                                       std::to_string(given_options->struct_size) + ", this library's " +
                                                       std::to_string(sizeof(eov_generation_options)) +
                                                       "): initialise it with eov_generation_options_init");
    if (result != nullptr && (result->struct_size <= sizeof result->struct_size ||
                              result->struct_size > sizeof(eov_generation_result)))
      return fail(EOV_GENERATION_INVALID_ARGUMENT, "eov_generation_result.struct_size is " +
                                                       std::to_string(result->struct_size) +
                                                       ": set it to sizeof(eov_generation_result) (at most " +
                                                       std::to_string(sizeof(eov_generation_result)) + ")");
    eov_generation_options full = default_options();
    std::memcpy(&full, given_options, given_options->struct_size);
    const eov_generation_options* options = &full;
    eov_program& program = *conversation->program;
    if (!conversation->member && program.resident != conversation) {  // another conversation ran on the program since
      conversation->conversation.reset();
      program.resident = conversation;
    }
    GenerationRequest request;
    request.max_new_tokens = options->max_new_tokens;
    request.sampling.temperature = options->temperature;
    request.sampling.top_k = options->top_k;
    request.sampling.top_p = options->top_p;
    request.sampling.repetition_penalty = options->repetition_penalty;
    if (options->has_seed) request.sampling.seed = options->seed;
    request.eos = options->eos_ids != nullptr
                      ? std::vector<int64_t>(options->eos_ids, options->eos_ids + options->eos_count)
                      : program.model->eos_ids();
    PromptLookup lookup;
    if ((options->lookup != 0) + (options->draft != nullptr) + (options->drafter != nullptr) > 1)
      return fail(EOV_GENERATION_INVALID_ARGUMENT, "choose one drafter: prompt lookup, a draft program or your own");
    if (conversation->member && (options->lookup != 0 || options->draft != nullptr || options->drafter != nullptr))
      return fail(EOV_GENERATION_INVALID_ARGUMENT, "speculative decoding is not for batched conversations (their "
                                                   "calls carry one token each); use a conversation of "
                                                   "eov_conversation_new");
    if (options->lookup) request.drafter = &lookup;
    CallbackDrafter own(options->drafter, options->drafter_user, options->drafter_free_to_ask != 0);
    if (options->drafter != nullptr) request.drafter = &own;
    if (options->draft != nullptr) {
      if (options->draft == &program) return fail(EOV_GENERATION_INVALID_ARGUMENT, "a program cannot draft for itself");
      if (options->draft->model->vocab() != program.model->vocab())
        return fail(EOV_GENERATION_INVALID_ARGUMENT,
                    "the draft program's vocabulary (" + std::to_string(options->draft->model->vocab()) +
                        ") is not the program's (" + std::to_string(program.model->vocab()) + ")");
      if (conversation->draft_program != options->draft || !conversation->draft) {
        conversation->draft_program = options->draft;
        conversation->draft = std::make_unique<DraftModel>(*options->draft->model);
      }
      if (options->draft->resident != conversation->draft.get()) {
        conversation->draft->forget();
        options->draft->resident = conversation->draft.get();
      }
      request.drafter = conversation->draft.get();
    }
    request.max_draft = options->max_draft;
    request.vocabulary = options->vocabulary != nullptr ? &options->vocabulary->vocabulary : nullptr;
    for (size_t i = 0; i < options->stop_count; ++i)
      if (options->stop != nullptr && options->stop[i] != nullptr) request.stops.emplace_back(options->stop[i]);
    request.constraint = options->constraint != nullptr ? options->constraint->constraint.get() : nullptr;
    if ((options->suppress_count > 0 && options->suppress_ids == nullptr) ||
        (options->begin_suppress_count > 0 && options->begin_suppress_ids == nullptr))
      return fail(EOV_GENERATION_INVALID_ARGUMENT, "a count of suppressed tokens without their ids");
    if (options->suppress_count > 0)
      request.suppress.assign(options->suppress_ids, options->suppress_ids + options->suppress_count);
    if (options->begin_suppress_count > 0)
      request.begin_suppress.assign(options->begin_suppress_ids,
                                    options->begin_suppress_ids + options->begin_suppress_count);
    if (options->timestamp_begin > 0) {
      TimestampRule rule;
      rule.timestamp_begin = options->timestamp_begin;
      rule.no_timestamps = options->no_timestamps_id;
      rule.eos = options->timestamp_eos_id;
      rule.begin_index = options->timestamp_begin_index;
      rule.max_initial = options->max_initial_timestamp;
      rule.from_probability = options->timestamp_from_probability != 0;
      request.timestamps = rule;
    }
    if (options->on_token != nullptr) {
      request.on_token = [options](int64_t token) { return options->on_token(options->user, token) != 0; };
    }
    if (options->on_text != nullptr) {
      request.on_text = [options](const std::string& text) {
        return options->on_text(options->user, text.data(), text.size()) != 0;
      };
    }
    if (options->on_logits != nullptr) {
      request.on_logits = [options](const float* row, size_t vocab) {
        return options->on_logits(options->user, row, vocab) != 0;
      };
    }
    auto done = conversation->conversation.generate(std::vector<int64_t>(tokens, tokens + count), request);
    if (!done) return fail(done.failure());
    if (result != nullptr) {
      eov_generation_result full;
      std::memset(&full, 0, sizeof full);
      full.generated = done->tokens.size();
      full.prompt_tokens = done->prompt_tokens;
      full.reused_tokens = done->reused_tokens;
      full.calls = done->calls;
      full.drafted = done->drafted;
      full.accepted = done->accepted;
      full.prefill_seconds = done->prefill_seconds;
      full.decode_seconds = done->decode_seconds;
      full.first_token_seconds = done->first_token_seconds;
      std::strncpy(full.stopped_by, done->stopped_by.c_str(), sizeof full.stopped_by - 1);
      const size_t size = std::min(result->struct_size, sizeof full);
      full.struct_size = size;
      std::memcpy(result, &full, size);
    }
    return 0;
  });
}

size_t eov_conversation_tokens(const eov_conversation* conversation, int64_t* out, size_t capacity) {
  if (conversation == nullptr) return 0;
  const std::vector<int64_t>& tokens = conversation->conversation.tokens();
  for (size_t i = 0; i < tokens.size() && i < capacity && out != nullptr; ++i) out[i] = tokens[i];
  return tokens.size();
}

int eov_conversation_assume(eov_conversation* conversation, const int64_t* tokens, size_t count) {
  return guarded([&] {
    if (conversation == nullptr || (count > 0 && tokens == nullptr))
      return fail(EOV_GENERATION_INVALID_ARGUMENT, "no conversation or tokens given");
    if (conversation->member) return refuse_batched();
    conversation->conversation.reset(std::vector<int64_t>(tokens, tokens + count));
    conversation->program->resident = conversation;
    return 0;
  });
}

int eov_conversation_save(eov_conversation* conversation, const char* name) {
  return guarded([&] {
    if (conversation == nullptr || name == nullptr || *name == '\0')
      return fail(EOV_GENERATION_INVALID_ARGUMENT, "a saved state needs a name");
    if (conversation->member) return refuse_batched();
    if (conversation->program->resident != conversation)
      return fail(EOV_GENERATION_INVALID_ARGUMENT, "the conversation's state is not in its program (another ran since)");
    if (executorch_openvino_save_state_of(conversation->program->model->state_owner(), name) != 0)
      return fail(EOV_GENERATION_INVALID_ARGUMENT, std::string("saving the state '") + name +
                                                       "' failed: " + executorch_openvino_last_error());
    conversation->program->saved[name] = conversation->conversation.held();
    return 0;
  });
}

int eov_conversation_restore(eov_conversation* conversation, const char* name) {
  return guarded([&] {
    if (conversation == nullptr || name == nullptr) return fail(EOV_GENERATION_INVALID_ARGUMENT, "no name given");
    if (conversation->member) return refuse_batched();
    auto saved = conversation->program->saved.find(name);
    if (saved == conversation->program->saved.end())
      return fail(EOV_GENERATION_INVALID_ARGUMENT, std::string("no state saved as '") + name + "' on this program");
    if (executorch_openvino_restore_state_of(conversation->program->model->state_owner(), name) != 0)
      return fail(EOV_GENERATION_INVALID_ARGUMENT, std::string("restoring the state '") + name +
                                                       "' failed: " + executorch_openvino_last_error());
    conversation->conversation.reset(saved->second);
    conversation->program->resident = conversation;
    if (conversation->draft) conversation->draft->forget();  // it drafted for another conversation
    return 0;
  });
}

}  // extern "C"

// Outside extern "C": tokens_from returns a C++ type (clang: -Wreturn-type-c-linkage).
namespace {

// The engine's bytes in a state file: the conversation's tokens and how many of them the caches
// hold (the rest is the last token chosen, not yet fed), which the delegate's part does not know.
constexpr char kTokensMagic[8] = {'E', 'O', 'V', 'T', 'O', 'K', 'N', '1'};
constexpr const char* kFileState = "executorch_openvino.state_file";

std::vector<uint8_t> tokens_bytes(const std::vector<int64_t>& tokens, size_t held) {
  std::vector<uint8_t> bytes(kTokensMagic, kTokensMagic + sizeof(kTokensMagic));
  const auto put = [&](uint64_t value) {
    for (size_t i = 0; i < 8; ++i) bytes.push_back(static_cast<uint8_t>(value >> (8 * i)));
  };
  put(held);
  put(tokens.size());
  for (int64_t token : tokens) put(static_cast<uint64_t>(token));
  return bytes;
}

struct SavedTokens {
  std::vector<int64_t> tokens;
  size_t held = 0;
};

std::optional<SavedTokens> tokens_from(const std::vector<uint8_t>& bytes) {
  const auto read = [&](size_t at) {
    uint64_t value = 0;
    for (size_t i = 0; i < 8; ++i) value |= static_cast<uint64_t>(bytes[at + i]) << (8 * i);
    return value;
  };
  if (bytes.size() < 24 || std::memcmp(bytes.data(), kTokensMagic, 8) != 0) return std::nullopt;
  const uint64_t held = read(8), count = read(16);
  if ((bytes.size() - 24) % 8 != 0 || count != (bytes.size() - 24) / 8 || held > count) return std::nullopt;
  SavedTokens saved{std::vector<int64_t>(count), static_cast<size_t>(held)};
  for (size_t i = 0; i < count; ++i) saved.tokens[i] = static_cast<int64_t>(read(24 + 8 * i));
  return saved;
}

}  // namespace

extern "C" {

int eov_conversation_write_state(eov_conversation* conversation, const char* path) {
  return guarded([&] {
    if (conversation == nullptr || path == nullptr) return fail(EOV_GENERATION_INVALID_ARGUMENT, "no conversation or path");
    if (conversation->member) return refuse_batched();
    const uint64_t owner = conversation->program->model->state_owner();
    if (owner == 0) return fail(EOV_GENERATION_INVALID_ARGUMENT, "only a program's state goes to a file");
    if (conversation->program->resident != conversation)
      return fail(EOV_GENERATION_INVALID_ARGUMENT, "the conversation's state is not in its program (another ran since)");
    const std::vector<uint8_t> tokens =
        tokens_bytes(conversation->conversation.tokens(), conversation->conversation.held().size());
    int code = executorch_openvino_save_state_of(owner, kFileState);
    if (code == 0) code = executorch_openvino_write_state(owner, kFileState, path, tokens.data(), tokens.size());
    const std::string why = code == 0 ? "" : executorch_openvino_last_error();
    executorch_openvino_forget_state_of(owner, kFileState);
    if (code != 0) return fail(EOV_GENERATION_INVALID_ARGUMENT, "writing the state to " + std::string(path) + " failed: " + why);
    return 0;
  });
}

int eov_conversation_read_state(eov_conversation* conversation, const char* path) {
  return guarded([&] {
    if (conversation == nullptr || path == nullptr) return fail(EOV_GENERATION_INVALID_ARGUMENT, "no conversation or path");
    if (conversation->member) return refuse_batched();
    const uint64_t owner = conversation->program->model->state_owner();
    if (owner == 0) return fail(EOV_GENERATION_INVALID_ARGUMENT, "only a program's state comes from a file");
    // Room for every token the context holds: a file that says more is malformed.
    std::vector<uint8_t> bytes(24 + 8 * static_cast<size_t>(std::max<int64_t>(conversation->program->model->context(), 0) + 1));
    size_t size = 0;
    if (executorch_openvino_read_state(owner, kFileState, path, bytes.data(), bytes.size(), &size) != 0)
      return fail(EOV_GENERATION_INVALID_ARGUMENT, executorch_openvino_last_error());
    std::optional<SavedTokens> tokens;
    if (size <= bytes.size()) {
      bytes.resize(size);
      tokens = tokens_from(bytes);
    }
    // The delegate installed the caches under kFileState; they are set in, or dropped, here.
    const bool usable = tokens && static_cast<int64_t>(tokens->held) <= conversation->program->model->context();
    const int restored = usable ? executorch_openvino_restore_state_of(owner, kFileState) : 0;
    const std::string why = restored != 0 ? executorch_openvino_last_error() : "";
    executorch_openvino_forget_state_of(owner, kFileState);
    if (!usable) return fail(EOV_GENERATION_INVALID_ARGUMENT, std::string(path) + ": its tokens are malformed");
    if (restored != 0) return fail(EOV_GENERATION_INVALID_ARGUMENT, why);
    conversation->conversation.resume(std::move(tokens->tokens), tokens->held);
    conversation->program->resident = conversation;
    if (conversation->draft) conversation->draft->forget();
    return 0;
  });
}

void eov_conversation_cancel(eov_conversation* conversation) {
  if (conversation != nullptr) conversation->conversation.cancel();
}

}  // extern "C"
