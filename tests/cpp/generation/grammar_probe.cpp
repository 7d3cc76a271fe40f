// A test-only C surface over the grammar constraints (src/generation/grammar), built as a loadable
// module for tests/python/generation/test_grammar.py. The tests drive it through ctypes from a
// Python process, where the llguidance wheel's module (which needs Python's symbols) can be opened.
// Every function reports failures as "<kind>: <message>" in `error` and never throws.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "generation/grammar/llguidance_constraint.h"

namespace grammar = executorch_openvino::generation::grammar;
using executorch_openvino::Failure;
using executorch_openvino::FailureKind;

namespace {

struct Probe {
  std::shared_ptr<const grammar::GrammarTokenizer> tokenizer;
  std::unique_ptr<grammar::LlguidanceConstraint> constraint;
};

const char* kind_name(FailureKind kind) {
  switch (kind) {
    case FailureKind::kRuntimeUnavailable: return "runtime_unavailable";
    case FailureKind::kUnsupportedRuntime: return "unsupported_runtime";
    case FailureKind::kInvalidBlob: return "invalid_blob";
    case FailureKind::kInvalidArgument: return "invalid_argument";
    case FailureKind::kDeviceUnavailable: return "device_unavailable";
    case FailureKind::kOpenVinoError: return "openvino_error";
    case FailureKind::kOutOfMemory: return "out_of_memory";
  }
  return "unknown";
}

int report(const Failure& failure, char* error, size_t error_size) {
  if (error != nullptr && error_size > 0) {
    const std::string text = std::string(kind_name(failure.kind)) + ": " + failure.message;
    const size_t size = std::min(text.size(), error_size - 1);
    std::memcpy(error, text.data(), size);
    error[size] = '\0';
  }
  return -1;
}

}  // namespace

#define PROBE_EXPORT extern "C" __attribute__((visibility("default")))

// A constraint of `kind` over the tokenizer.json text (or, when `token_bytes_blob` is not null, over
// `token_count` tokens whose bytes are back to back in the blob, sizes in `token_sizes`, the ids in
// `special` special). null on failure.
PROBE_EXPORT void* eov_grammar_probe_open(const char* library_path, const char* tokenizer_json,
                                          const uint32_t* token_sizes, const char* token_bytes_blob,
                                          size_t token_count, const int64_t* special, size_t special_count,
                                          const int64_t* eos, size_t eos_count, size_t vocab_size, const char* kind,
                                          const char* grammar_text, char* error, size_t error_size) {
  auto library = grammar::LlguidanceLibrary::open(
      library_path != nullptr ? std::optional<std::filesystem::path>(library_path) : std::nullopt);
  if (!library) return report(library.failure(), error, error_size), nullptr;
  auto parsed_kind = grammar::parse_grammar_kind(kind);
  if (!parsed_kind) return report(parsed_kind.failure(), error, error_size), nullptr;
  std::vector<int64_t> eos_tokens(eos, eos + eos_count);
  executorch_openvino::Outcome<std::shared_ptr<const grammar::GrammarTokenizer>> tokenizer = Failure{};
  if (token_bytes_blob != nullptr) {
    std::vector<std::string> table;
    size_t offset = 0;
    for (size_t id = 0; id < token_count; ++id) {
      table.emplace_back(token_bytes_blob + offset, token_sizes[id]);
      offset += token_sizes[id];
    }
    tokenizer = grammar::GrammarTokenizer::from_token_bytes(
        library.value(), table, std::vector<int64_t>(special, special + special_count), eos_tokens, vocab_size);
  } else {
    tokenizer = grammar::GrammarTokenizer::from_tokenizer_json(library.value(), tokenizer_json, eos_tokens, vocab_size);
  }
  if (!tokenizer) return report(tokenizer.failure(), error, error_size), nullptr;
  auto constraint = grammar::LlguidanceConstraint::create(tokenizer.value(), parsed_kind.value(), grammar_text);
  if (!constraint) return report(constraint.failure(), error, error_size), nullptr;
  return new Probe{tokenizer.value(), std::move(constraint).value()};
}

PROBE_EXPORT void eov_grammar_probe_free(void* probe) { delete static_cast<Probe*>(probe); }

// The mask into `words` (n_words of them), and how long computing it took.
PROBE_EXPORT int eov_grammar_probe_allowed(void* probe, uint32_t* words, size_t n_words, uint64_t* nanoseconds,
                                           char* error, size_t error_size) {
  grammar::LlguidanceConstraint& constraint = *static_cast<Probe*>(probe)->constraint;
  std::vector<uint32_t> bits(n_words);
  const auto start = std::chrono::steady_clock::now();
  auto status = constraint.allowed(bits);
  const auto stop = std::chrono::steady_clock::now();
  if (nanoseconds != nullptr) {
    *nanoseconds = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count());
  }
  if (!status) return report(status.failure(), error, error_size);
  std::memcpy(words, bits.data(), n_words * sizeof(uint32_t));
  return 0;
}

PROBE_EXPORT int eov_grammar_probe_accept(void* probe, int64_t token, char* error, size_t error_size) {
  auto status = static_cast<Probe*>(probe)->constraint->accept(token);
  return status ? 0 : report(status.failure(), error, error_size);
}

PROBE_EXPORT int eov_grammar_probe_rollback(void* probe, size_t count, char* error, size_t error_size) {
  auto status = static_cast<Probe*>(probe)->constraint->rollback(count);
  return status ? 0 : report(status.failure(), error, error_size);
}

// 1: complete, 2: stopped, 3: both.
PROBE_EXPORT int eov_grammar_probe_state(void* probe) {
  grammar::LlguidanceConstraint& constraint = *static_cast<Probe*>(probe)->constraint;
  return (constraint.complete() ? 1 : 0) | (constraint.stopped() ? 2 : 0);
}

PROBE_EXPORT void* eov_grammar_probe_clone(void* probe, char* error, size_t error_size) {
  auto* original = static_cast<Probe*>(probe);
  auto cloned = original->constraint->clone();
  if (!cloned) return report(cloned.failure(), error, error_size), nullptr;
  return new Probe{original->tokenizer, std::move(cloned).value()};
}

// The tokenizer's table of `count` tokens' bytes: each size into `sizes`, the bytes back to back
// into `blob` when it holds them all. Returns the bytes' total size.
PROBE_EXPORT size_t eov_grammar_probe_token_table(void* probe, size_t count, int include_special, uint32_t* sizes,
                                                  char* blob, size_t blob_size) {
  const auto table = static_cast<Probe*>(probe)->tokenizer->token_bytes_table(count, include_special != 0);
  size_t total = 0;
  for (const std::string& bytes : table) total += bytes.size();
  if (blob == nullptr || blob_size < total) return total;
  size_t offset = 0;
  for (size_t id = 0; id < table.size(); ++id) {
    sizes[id] = static_cast<uint32_t>(table[id].size());
    std::memcpy(blob + offset, table[id].data(), table[id].size());
    offset += table[id].size();
  }
  return total;
}

PROBE_EXPORT size_t eov_grammar_probe_mask_words(void* probe) {
  return static_cast<Probe*>(probe)->constraint->mask_words();
}
