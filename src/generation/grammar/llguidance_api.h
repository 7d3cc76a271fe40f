// llguidance's C API in our own declarations, and its library opened at run time. Only what the
// grammar constraints call; the library is either a libllguidance built from the crate's C API or the
// Python wheel's llguidance/_lib.abi3.so, which exports the same functions. We never include
// llguidance's header: the library is optional and found at run time, and these layouts are what its
// exported functions take, checked against llguidance 1.9.1 (tests/python/generation/test_grammar.py
// drives every call below).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "common/outcome.h"
#include "loader/dynamic_library.h"

namespace executorch_openvino::generation::grammar {

// Opaque handles; only ever used through pointers the library hands out.
struct LlgTokenizer;
struct LlgMatcher;

// Bytes -> token ids, for a tokenizer the caller supplies; the library calls it from any thread.
// Returns how many ids the bytes make (it may be more than `capacity`, then only `capacity` are written).
using LlgTokenizeFunction = size_t (*)(const void* user_data, const uint8_t* bytes, size_t size,
                                       uint32_t* tokens, size_t capacity);

// What llg_new_tokenizer_v2 reads. The library reads only `struct_size` bytes, so fields appended by
// later releases default to zero for us. Either the tokens' bytes (`token_sizes` + `token_bytes`, one
// entry per id) or the text of a Hugging Face tokenizer.json; `vocab_size` pads the vocabulary with
// empty (never allowed) tokens up to that many ids when it is larger than the tokenizer's own.
struct LlgTokenizerInitV2 {
  size_t struct_size;
  uint32_t vocab_size;
  uint32_t eos_token;                // the end token; the library wants it below the vocabulary size
  const uint32_t* token_sizes;       // vocab_size entries, or null with tokenizer_json
  const uint8_t* token_bytes;        // every token's bytes, back to back
  const char* tokenizer_json;        // NUL-terminated tokenizer.json text, or null
  bool tokenize_assumes_string;      // the tokenize function accepts only valid UTF-8
  LlgTokenizeFunction tokenize;      // may be null when tokenize_greedily is set
  bool tokenize_greedily;            // approximate the tokenizer by the longest token at each step
  const void* tokenize_user_data;
  const char* const* slices;         // null: the library's default partitions of the vocabulary
  const uint32_t* more_eos_tokens;   // further end tokens (e.g. Llama 3's <|eot_id|> besides <|end_of_text|>)
  uint32_t more_eos_token_count;
};

// Resource limits of the parser; zero means the library's default.
struct LlgParserLimits {
  size_t max_items_in_row;
  uint64_t initial_lexer_fuel;
  uint64_t step_lexer_fuel;
  size_t step_max_items;
  size_t max_lexer_states;
  size_t max_grammar_size;
  bool precompute_large_lexemes;
  bool verbose_errors;
};

// The fields of the constraint settings that we read or write. The struct has no size field, so a
// later release may append fields that llg_constraint_init_set_defaults fills in: it is only ever
// used inside LlgConstraintInitBuffer, zeroed and far larger than any layout we know (1.9.1: 80 bytes).
struct LlgConstraintInitHead {
  const LlgTokenizer* tokenizer;
  uint32_t log_buffer_level;   // 0 none, 1 warnings, 2 info
  uint32_t log_stderr_level;   // the same, written to stderr
  bool fast_forward_tokens_ok;
  bool backtrack_ok;
  LlgParserLimits limits;
};
union LlgConstraintInitBuffer {
  LlgConstraintInitHead head;
  alignas(16) unsigned char room[1024];
};

// Decoding flags of llg_decode_tokens.
inline constexpr uint32_t kLlgDecodeRaw = 0;             // no special tokens, bytes as they are
inline constexpr uint32_t kLlgDecodeSpecial = 1;         // special tokens by their text
inline constexpr uint32_t kLlgDecodeValidUtf8 = 2;       // invalid UTF-8 replaced by U+FFFD

using llg_get_version_fn = const char* (*)();
using llg_new_tokenizer_v2_fn = LlgTokenizer* (*)(const LlgTokenizerInitV2* init, char* error, size_t error_size);
using llg_free_tokenizer_fn = void (*)(LlgTokenizer* tokenizer);
// Both return the size the whole answer needs: the bytes plus a terminating NUL for decode.
using llg_decode_tokens_fn = size_t (*)(const LlgTokenizer* tokenizer, const uint32_t* tokens, size_t count,
                                        char* out, size_t out_size, uint32_t flags);
using llg_tokenize_bytes_fn = size_t (*)(const LlgTokenizer* tokenizer, const uint8_t* bytes, size_t size,
                                         uint32_t* tokens, size_t capacity);
using llg_constraint_init_set_defaults_fn = void (*)(LlgConstraintInitHead* init, const LlgTokenizer* tokenizer);
// Never null; a matcher whose grammar was refused is in the error state (llg_matcher_get_error says why).
using llg_new_matcher_fn = LlgMatcher* (*)(const LlgConstraintInitHead* init, const char* kind, const char* grammar);
using llg_clone_matcher_fn = LlgMatcher* (*)(const LlgMatcher* matcher);
using llg_free_matcher_fn = void (*)(LlgMatcher* matcher);
using llg_matcher_get_error_fn = const char* (*)(LlgMatcher* matcher);
using llg_matcher_is_error_fn = bool (*)(const LlgMatcher* matcher);
using llg_matcher_get_mask_byte_size_fn = size_t (*)(const LlgMatcher* matcher);
// The int32_t results: 0 done, -1 failed (the matcher is then in the error state for good).
using llg_matcher_compute_mask_into_fn = int32_t (*)(LlgMatcher* matcher, uint32_t* mask, size_t mask_bytes);
using llg_matcher_consume_token_fn = int32_t (*)(LlgMatcher* matcher, uint32_t token);
using llg_matcher_rollback_fn = int32_t (*)(LlgMatcher* matcher, size_t count);
using llg_matcher_reset_fn = int32_t (*)(LlgMatcher* matcher);
// How many of the tokens, from the first, the matcher would take; -1 on error. Changes nothing.
using llg_matcher_validate_tokens_fn = int32_t (*)(LlgMatcher* matcher, const uint32_t* tokens, size_t count);
using llg_matcher_is_accepting_fn = bool (*)(LlgMatcher* matcher);
using llg_matcher_is_stopped_fn = bool (*)(const LlgMatcher* matcher);

// X(name) for every symbol we call; a library missing any one of them is refused, naming it.
#define EXECUTORCH_OPENVINO_LLGUIDANCE_SYMBOLS(X) \
  X(llg_get_version)                              \
  X(llg_new_tokenizer_v2)                         \
  X(llg_free_tokenizer)                           \
  X(llg_decode_tokens)                            \
  X(llg_tokenize_bytes)                           \
  X(llg_constraint_init_set_defaults)             \
  X(llg_new_matcher)                              \
  X(llg_clone_matcher)                            \
  X(llg_free_matcher)                             \
  X(llg_matcher_get_error)                        \
  X(llg_matcher_is_error)                         \
  X(llg_matcher_get_mask_byte_size)               \
  X(llg_matcher_compute_mask_into)                \
  X(llg_matcher_consume_token)                    \
  X(llg_matcher_rollback)                         \
  X(llg_matcher_reset)                            \
  X(llg_matcher_validate_tokens)                  \
  X(llg_matcher_is_accepting)                     \
  X(llg_matcher_is_stopped)

struct LlguidanceSymbols {
#define EXECUTORCH_OPENVINO_DECLARE_LLG_SYMBOL(name) name##_fn name = nullptr;
  EXECUTORCH_OPENVINO_LLGUIDANCE_SYMBOLS(EXECUTORCH_OPENVINO_DECLARE_LLG_SYMBOL)
#undef EXECUTORCH_OPENVINO_DECLARE_LLG_SYMBOL
};

// The environment variable naming the library when the caller does not.
inline constexpr const char* kLlguidanceLibraryVariable = "LLGUIDANCE_LIB_PATH";

// The opened library and its functions. It stays loaded for the rest of the process once opened
// (a Rust library's thread-local destructors must not outlive its code), so the symbols stay valid.
class LlguidanceLibrary {
 public:
  // Opens `path`, else the file LLGUIDANCE_LIB_PATH names, else libllguidance.so (.dylib,
  // llguidance.dll) by the platform's search. The failure (kRuntimeUnavailable) names the path
  // tried, the system's reason, and what to do.
  static Outcome<std::shared_ptr<const LlguidanceLibrary>> open(
      const std::optional<std::filesystem::path>& path = std::nullopt);

  const LlguidanceSymbols& api() const { return symbols_; }
  // llguidance's own account of itself, e.g. "llguidance@1.9.1 derivre@0.3.13".
  const std::string& version() const { return version_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  LlguidanceLibrary(std::filesystem::path path, LlguidanceSymbols symbols, std::string version)
      : path_(std::move(path)), symbols_(symbols), version_(std::move(version)) {}

  std::filesystem::path path_;
  LlguidanceSymbols symbols_;
  std::string version_;
};

// Resolves every symbol; fails naming the first the library does not export.
Outcome<LlguidanceSymbols> resolve_llguidance_symbols(const loader::DynamicLibrary& library);

}  // namespace executorch_openvino::generation::grammar
