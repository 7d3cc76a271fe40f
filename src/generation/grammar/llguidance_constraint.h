// Structured output with llguidance: a TokenConstraint for a JSON schema, a regular expression or a
// Lark grammar, over the vocabulary of a Hugging Face tokenizer.json. Every llguidance handle is
// owned by one object here and freed by it; every failure of the library comes back as a Failure
// carrying llguidance's own message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/outcome.h"
#include "generation/grammar/llguidance_api.h"
#include "generation/token_constraint.h"

namespace executorch_openvino::generation::grammar {

enum class GrammarKind {
  kJsonSchema,  // "json_schema": a JSON schema, as text
  kRegex,       // "regex": a regular expression in Rust's regex syntax, matched against the whole output
  kLark,        // "lark": a grammar in llguidance's Lark dialect
};

// "json_schema", "regex" or "lark"; anything else is kInvalidArgument.
Outcome<GrammarKind> parse_grammar_kind(std::string_view name);
const char* grammar_kind_name(GrammarKind kind);

// One vocabulary as llguidance sees it: each token's bytes and the end tokens. Immutable once made,
// and shared by every constraint over that vocabulary (and by threads: llguidance only reads it).
class GrammarTokenizer {
 public:
  // From the text of a tokenizer.json whose decoder is byte-level (GPT-2, Llama 3, Qwen) or a
  // sequence with ByteFallback and a Replace of "▁" by " " (Llama 2, Mistral, Gemma). `eos_tokens`:
  // the tokens that end the output (at least one), allowed only where the grammar may end.
  // `vocab_size`: the model's vocabulary (its logits' width) when larger than the tokenizer's; the
  // ids beyond the tokenizer's are empty tokens, never allowed. 0: the tokenizer's own.
  static Outcome<std::shared_ptr<const GrammarTokenizer>> from_tokenizer_json(
      std::shared_ptr<const LlguidanceLibrary> library, const std::string& tokenizer_json,
      const std::vector<int64_t>& eos_tokens, size_t vocab_size = 0);

  // From each token's bytes, index = id, for tokenizers whose tokenizer.json llguidance cannot read
  // (e.g. a Metaspace decoder). Special tokens (never produced by text) are listed in
  // `special_tokens`: a grammar may then name them (<|eot_id|> in Lark) but text never matches them.
  static Outcome<std::shared_ptr<const GrammarTokenizer>> from_token_bytes(
      std::shared_ptr<const LlguidanceLibrary> library, const std::vector<std::string>& token_bytes,
      const std::vector<int64_t>& special_tokens, const std::vector<int64_t>& eos_tokens, size_t vocab_size = 0);

  GrammarTokenizer(const GrammarTokenizer&) = delete;
  GrammarTokenizer& operator=(const GrammarTokenizer&) = delete;
  ~GrammarTokenizer();

  // The bytes of token `token` as it appears in running text: raw bytes, so a byte-level token that
  // holds half a UTF-8 character gives that half, a <0xNN> byte-fallback token gives the byte, and a
  // SentencePiece "▁word" gives " word" (a tokenizer.json's Strip decoder, which drops the very first
  // space of a text, is not applied). Special and padding tokens give "" unless `include_special`,
  // when special tokens give their text (e.g. "<|eot_id|>").
  std::string token_bytes(int64_t token, bool include_special = false) const;
  // token_bytes for the ids 0 .. count - 1 (count: the model's vocabulary size).
  std::vector<std::string> token_bytes_table(size_t count, bool include_special = false) const;
  // The bytes of a sequence of tokens, as above.
  std::string decode(const std::vector<int64_t>& tokens, bool include_special = false) const;
  // The bytes as tokens, by llguidance's approximation (the longest token at each step); for tests.
  std::vector<int64_t> tokenize(std::string_view bytes) const;

  const std::vector<int64_t>& eos_tokens() const { return eos_tokens_; }
  const LlguidanceLibrary& library() const { return *library_; }
  const LlgTokenizer* handle() const { return tokenizer_; }

 private:
  GrammarTokenizer(std::shared_ptr<const LlguidanceLibrary> library, LlgTokenizer* tokenizer,
                   std::vector<int64_t> eos_tokens)
      : library_(std::move(library)), tokenizer_(tokenizer), eos_tokens_(std::move(eos_tokens)) {}
  static Outcome<std::shared_ptr<const GrammarTokenizer>> create(std::shared_ptr<const LlguidanceLibrary> library,
                                                                 LlgTokenizerInitV2& init,
                                                                 const std::vector<int64_t>& eos_tokens);

  std::shared_ptr<const LlguidanceLibrary> library_;
  LlgTokenizer* tokenizer_;
  std::vector<int64_t> eos_tokens_;
};

// A grammar's constraint on one generation: the masks, the tokens taken, rollback. Not thread-safe
// (one generation at a time); clone() gives an independent copy at the same point (drafts).
class LlguidanceConstraint final : public TokenConstraint {
 public:
  // Compiles the grammar for the tokenizer's vocabulary. A grammar llguidance refuses (a schema it
  // cannot read, a bad regex, a Lark syntax error) is kInvalidArgument with llguidance's message.
  static Outcome<std::unique_ptr<LlguidanceConstraint>> create(std::shared_ptr<const GrammarTokenizer> tokenizer,
                                                               GrammarKind kind, const std::string& grammar);

  LlguidanceConstraint(const LlguidanceConstraint&) = delete;
  LlguidanceConstraint& operator=(const LlguidanceConstraint&) = delete;
  ~LlguidanceConstraint() override;

  // Bits beyond the tokenizer's vocabulary (padding rows of the logits) are 0; a `bits` shorter than
  // the tokenizer's vocabulary gets the allowed tokens that fit.
  Status allowed(TokenBits& bits) override;
  // A token the grammar does not allow here is refused (kInvalidArgument, naming the token and its
  // text) and changes nothing: the constraint stays usable. An end token where the grammar may end
  // (or must: stopped()) ends the output; nothing is accepted after it, until a rollback.
  Status accept(int64_t token) override;
  // Forgets the last `count` accepted tokens; more than were accepted is kInvalidArgument.
  Status rollback(size_t count) override;
  bool complete() override;
  bool stopped() override;

  // Back to the start, as created.
  Status reset() override;
  // An independent constraint at the same point (same accepted tokens).
  Outcome<std::unique_ptr<LlguidanceConstraint>> clone() const;

  size_t accepted_count() const { return accepted_; }
  // Words (32 tokens each) in llguidance's own mask: the tokenizer's vocabulary, rounded up.
  size_t mask_words() const { return mask_.size(); }
  const GrammarTokenizer& tokenizer() const { return *tokenizer_; }

 private:
  LlguidanceConstraint(std::shared_ptr<const GrammarTokenizer> tokenizer, LlgMatcher* matcher, size_t mask_words);
  Failure matcher_failure(const char* doing) const;

  std::shared_ptr<const GrammarTokenizer> tokenizer_;
  const LlguidanceSymbols* api_;
  LlgMatcher* matcher_;
  std::vector<uint32_t> mask_;
  size_t accepted_ = 0;
  bool ended_ = false;           // an end token was accepted
  bool end_in_matcher_ = false;  // ... and llguidance took it (else it had stopped, and we recorded it)
};

}  // namespace executorch_openvino::generation::grammar
