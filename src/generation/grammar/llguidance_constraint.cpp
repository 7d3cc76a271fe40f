#include "generation/grammar/llguidance_constraint.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>

namespace executorch_openvino::generation::grammar {
namespace {

constexpr uint8_t kSpecialTokenMarker = 0xFF;  // llguidance's first byte of a special token's bytes

bool fits_token_id(int64_t token) {
  return token >= 0 && token < static_cast<int64_t>(std::numeric_limits<uint32_t>::max());
}

// Bytes as readable text for messages: printable ASCII as is, the rest as \xNN.
std::string printable(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02X", c);
      out += escaped;
    }
  }
  return out;
}

Failure invalid(std::string message) { return Failure{FailureKind::kInvalidArgument, std::move(message)}; }

}  // namespace

Outcome<GrammarKind> parse_grammar_kind(std::string_view name) {
  if (name == "json_schema") return GrammarKind::kJsonSchema;
  if (name == "regex") return GrammarKind::kRegex;
  if (name == "lark") return GrammarKind::kLark;
  return invalid("unknown grammar kind \"" + std::string(name) + "\" (json_schema, regex or lark)");
}

const char* grammar_kind_name(GrammarKind kind) {
  switch (kind) {
    case GrammarKind::kJsonSchema: return "json_schema";
    case GrammarKind::kRegex: return "regex";
    case GrammarKind::kLark: return "lark";
  }
  return "unknown";
}

// ---- GrammarTokenizer ----------------------------------------------------------------------------

Outcome<std::shared_ptr<const GrammarTokenizer>> GrammarTokenizer::create(
    std::shared_ptr<const LlguidanceLibrary> library, LlgTokenizerInitV2& init, const std::vector<int64_t>& eos_tokens) {
  if (library == nullptr) return invalid("no llguidance library");
  if (eos_tokens.empty()) return invalid("a grammar tokenizer needs at least one end token");
  std::vector<uint32_t> eos;
  for (int64_t token : eos_tokens) {
    if (!fits_token_id(token)) return invalid("end token " + std::to_string(token) + " is not a token id");
    eos.push_back(static_cast<uint32_t>(token));
  }
  init.struct_size = sizeof(LlgTokenizerInitV2);
  init.eos_token = eos.front();
  init.more_eos_tokens = eos.size() > 1 ? eos.data() + 1 : nullptr;
  init.more_eos_token_count = static_cast<uint32_t>(eos.size() - 1);
  // We have no tokenize function of our own to give: llguidance only tokenizes for fast-forward
  // tokens and prompt healing, neither of which the matcher's masks use.
  init.tokenize_greedily = true;

  std::array<char, 2048> error{};
  LlgTokenizer* tokenizer = library->api().llg_new_tokenizer_v2(&init, error.data(), error.size());
  if (tokenizer == nullptr) {
    error.back() = '\0';
    return invalid(std::string("llguidance refused the tokenizer: ") + error.data());
  }
  return std::shared_ptr<const GrammarTokenizer>(new GrammarTokenizer(std::move(library), tokenizer, eos_tokens));
}

Outcome<std::shared_ptr<const GrammarTokenizer>> GrammarTokenizer::from_tokenizer_json(
    std::shared_ptr<const LlguidanceLibrary> library, const std::string& tokenizer_json,
    const std::vector<int64_t>& eos_tokens, size_t vocab_size) {
  if (vocab_size > std::numeric_limits<uint32_t>::max()) return invalid("vocabulary size too large");
  LlgTokenizerInitV2 init{};
  init.vocab_size = static_cast<uint32_t>(vocab_size);
  init.tokenizer_json = tokenizer_json.c_str();
  return create(std::move(library), init, eos_tokens);
}

Outcome<std::shared_ptr<const GrammarTokenizer>> GrammarTokenizer::from_token_bytes(
    std::shared_ptr<const LlguidanceLibrary> library, const std::vector<std::string>& token_bytes,
    const std::vector<int64_t>& special_tokens, const std::vector<int64_t>& eos_tokens, size_t vocab_size) {
  const size_t count = std::max(token_bytes.size(), vocab_size);
  if (count == 0 || count > std::numeric_limits<uint32_t>::max()) return invalid("bad vocabulary size");
  std::vector<bool> special(count, false);
  for (int64_t token : special_tokens) {
    if (token < 0 || static_cast<size_t>(token) >= count) {
      return invalid("special token " + std::to_string(token) + " is outside the vocabulary");
    }
    special[static_cast<size_t>(token)] = true;
  }
  std::vector<uint32_t> sizes(count, 0);
  std::string bytes;
  for (size_t id = 0; id < token_bytes.size(); ++id) {
    if (special[id]) bytes += static_cast<char>(kSpecialTokenMarker);
    bytes += token_bytes[id];
    sizes[id] = static_cast<uint32_t>(token_bytes[id].size() + (special[id] ? 1 : 0));
  }
  LlgTokenizerInitV2 init{};
  init.vocab_size = static_cast<uint32_t>(count);
  init.token_sizes = sizes.data();
  init.token_bytes = reinterpret_cast<const uint8_t*>(bytes.data());
  return create(std::move(library), init, eos_tokens);
}

GrammarTokenizer::~GrammarTokenizer() { library_->api().llg_free_tokenizer(tokenizer_); }

std::string GrammarTokenizer::decode(const std::vector<int64_t>& tokens, bool include_special) const {
  std::vector<uint32_t> ids;
  ids.reserve(tokens.size());
  for (int64_t token : tokens) {
    // Ids outside the vocabulary decode as nothing (as padding tokens do); so do ids that are not ids.
    if (fits_token_id(token)) ids.push_back(static_cast<uint32_t>(token));
  }
  const uint32_t flags = include_special ? kLlgDecodeSpecial : kLlgDecodeRaw;
  const auto& api = library_->api();
  std::string out(64, '\0');
  size_t needed = api.llg_decode_tokens(tokenizer_, ids.data(), ids.size(), out.data(), out.size(), flags);
  if (needed > out.size()) {
    out.assign(needed, '\0');
    needed = api.llg_decode_tokens(tokenizer_, ids.data(), ids.size(), out.data(), out.size(), flags);
  }
  out.resize(needed > 0 ? needed - 1 : 0);  // the count includes the terminating NUL
  return out;
}

std::string GrammarTokenizer::token_bytes(int64_t token, bool include_special) const {
  if (!fits_token_id(token)) return {};
  std::string text = decode({token}, include_special);
  // A padding id (no bytes at all) reads "<[id]>" with special tokens included: it has no text.
  if (include_special && text == "<[" + std::to_string(token) + "]>") return {};
  return text;
}

std::vector<std::string> GrammarTokenizer::token_bytes_table(size_t count, bool include_special) const {
  std::vector<std::string> table(count);
  for (size_t id = 0; id < count; ++id) table[id] = token_bytes(static_cast<int64_t>(id), include_special);
  return table;
}

std::vector<int64_t> GrammarTokenizer::tokenize(std::string_view bytes) const {
  const auto& api = library_->api();
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  std::vector<uint32_t> ids(bytes.size() + 1);
  size_t count = api.llg_tokenize_bytes(tokenizer_, data, bytes.size(), ids.data(), ids.size());
  if (count > ids.size()) {
    ids.resize(count);
    count = api.llg_tokenize_bytes(tokenizer_, data, bytes.size(), ids.data(), ids.size());
  }
  return std::vector<int64_t>(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(std::min(count, ids.size())));
}

// ---- LlguidanceConstraint ------------------------------------------------------------------------

LlguidanceConstraint::LlguidanceConstraint(std::shared_ptr<const GrammarTokenizer> tokenizer, LlgMatcher* matcher,
                                           size_t mask_words)
    : tokenizer_(std::move(tokenizer)), api_(&tokenizer_->library().api()), matcher_(matcher), mask_(mask_words, 0) {}

LlguidanceConstraint::~LlguidanceConstraint() { api_->llg_free_matcher(matcher_); }

Outcome<std::unique_ptr<LlguidanceConstraint>> LlguidanceConstraint::create(
    std::shared_ptr<const GrammarTokenizer> tokenizer, GrammarKind kind, const std::string& grammar) {
  if (tokenizer == nullptr) return invalid("no grammar tokenizer");
  const LlguidanceSymbols& api = tokenizer->library().api();

  // Zeroed and oversized: a later release's set_defaults may fill fields we do not know of.
  LlgConstraintInitBuffer init;
  std::memset(&init, 0, sizeof init);
  api.llg_constraint_init_set_defaults(&init.head, tokenizer->handle());
  if (init.head.tokenizer != tokenizer->handle()) {
    return Failure{FailureKind::kUnsupportedRuntime,
                   "llguidance's constraint settings are not laid out as this build expects (" +
                       tokenizer->library().version() + ")"};
  }
  init.head.log_stderr_level = 0;  // failures come back as messages, not as lines on stderr
  init.head.log_buffer_level = 0;
  init.head.limits.verbose_errors = false;  // the message without the grammar and parser state

  LlgMatcher* matcher = api.llg_new_matcher(&init.head, grammar_kind_name(kind), grammar.c_str());
  if (matcher == nullptr) return Failure{FailureKind::kOutOfMemory, "llguidance made no matcher"};
  if (api.llg_matcher_is_error(matcher)) {
    const char* reason = api.llg_matcher_get_error(matcher);
    std::string message = std::string("llguidance refused the ") + grammar_kind_name(kind) + ": " +
                          (reason != nullptr ? reason : "no reason given");
    api.llg_free_matcher(matcher);
    return invalid(std::move(message));
  }
  const size_t mask_words = (api.llg_matcher_get_mask_byte_size(matcher) + 3) / 4;
  return std::unique_ptr<LlguidanceConstraint>(new LlguidanceConstraint(std::move(tokenizer), matcher, mask_words));
}

Failure LlguidanceConstraint::matcher_failure(const char* doing) const {
  const char* reason = api_->llg_matcher_get_error(matcher_);
  return Failure{FailureKind::kInvalidArgument,
                 std::string("llguidance failed ") + doing + ": " + (reason != nullptr ? reason : "no reason given")};
}

Status LlguidanceConstraint::allowed(TokenBits& bits) {
  if (api_->llg_matcher_is_error(matcher_)) return matcher_failure("earlier");
  const size_t bytes = mask_.size() * sizeof(uint32_t);
  if (bits.size() == mask_.size()) {
    if (api_->llg_matcher_compute_mask_into(matcher_, bits.data(), bytes) != 0) {
      return matcher_failure("computing the mask");
    }
    return ok_status();
  }
  if (api_->llg_matcher_compute_mask_into(matcher_, mask_.data(), bytes) != 0) {
    return matcher_failure("computing the mask");
  }
  const size_t shared = std::min(bits.size(), mask_.size());
  std::copy(mask_.begin(), mask_.begin() + static_cast<std::ptrdiff_t>(shared), bits.begin());
  std::fill(bits.begin() + static_cast<std::ptrdiff_t>(shared), bits.end(), 0u);
  return ok_status();
}

Status LlguidanceConstraint::accept(int64_t token) {
  if (api_->llg_matcher_is_error(matcher_)) return matcher_failure("earlier");
  if (!fits_token_id(token) || static_cast<size_t>(token) >= mask_.size() * 32) {
    return invalid("token " + std::to_string(token) + " is outside the grammar's vocabulary");
  }
  const auto id = static_cast<uint32_t>(token);
  // Checked first, so a refused token leaves the matcher as it was (a refused consume would put it
  // in the error state for good).
  const auto& eos = tokenizer_->eos_tokens();
  const bool is_end = std::find(eos.begin(), eos.end(), token) != eos.end();
  if (ended_) {
    return invalid("token " + std::to_string(token) + " (\"" + printable(tokenizer_->token_bytes(token, true)) +
                   "\") cannot follow: the output has ended");
  }
  if (is_end && api_->llg_matcher_is_stopped(matcher_) && !api_->llg_matcher_is_error(matcher_)) {
    // Where nothing but the end may follow, llguidance's mask allows the end tokens but consuming one
    // fails and leaves the matcher in the error state (1.9.1): the end is recorded here instead.
    ended_ = true;
    end_in_matcher_ = false;
    ++accepted_;
    return ok_status();
  }
  // An end token is checked by whether the text may end here (validate_tokens says 0 for it once
  // the grammar has stopped); any other first with validate_tokens.
  int32_t taken = 0;
  if (is_end) {
    taken = api_->llg_matcher_is_accepting(matcher_) ? 1 : 0;
  } else {
    taken = api_->llg_matcher_validate_tokens(matcher_, &id, 1);
  }
  if (taken < 0) return matcher_failure("checking a token");
  if (taken == 0) {
    return invalid("token " + std::to_string(token) + " (\"" + printable(tokenizer_->token_bytes(token, true)) +
                   "\") is not allowed by the grammar here");
  }
  if (api_->llg_matcher_consume_token(matcher_, id) != 0) return matcher_failure("taking a token");
  if (is_end) {
    ended_ = true;
    end_in_matcher_ = true;
  }
  ++accepted_;
  return ok_status();
}

Status LlguidanceConstraint::rollback(size_t count) {
  if (count == 0) return ok_status();
  if (count > accepted_) {
    return invalid("cannot roll back " + std::to_string(count) + " tokens: only " + std::to_string(accepted_) +
                   " were accepted");
  }
  if (api_->llg_matcher_is_error(matcher_)) return matcher_failure("earlier");
  size_t in_matcher = count;
  if (ended_ && !end_in_matcher_) --in_matcher;  // the end recorded here, not in llguidance
  if (in_matcher > 0 && api_->llg_matcher_rollback(matcher_, in_matcher) != 0) return matcher_failure("rolling back");
  ended_ = false;
  end_in_matcher_ = false;
  accepted_ -= count;
  return ok_status();
}

bool LlguidanceConstraint::complete() { return ended_ || api_->llg_matcher_is_accepting(matcher_); }

bool LlguidanceConstraint::stopped() { return ended_ || api_->llg_matcher_is_stopped(matcher_); }

Status LlguidanceConstraint::reset() {
  if (api_->llg_matcher_reset(matcher_) != 0) return matcher_failure("resetting");
  accepted_ = 0;
  ended_ = false;
  end_in_matcher_ = false;
  return ok_status();
}

Outcome<std::unique_ptr<LlguidanceConstraint>> LlguidanceConstraint::clone() const {
  LlgMatcher* copy = api_->llg_clone_matcher(matcher_);
  if (copy == nullptr) return Failure{FailureKind::kOutOfMemory, "llguidance could not copy the matcher"};
  std::unique_ptr<LlguidanceConstraint> cloned(new LlguidanceConstraint(tokenizer_, copy, mask_.size()));
  cloned->accepted_ = accepted_;
  cloned->ended_ = ended_;
  cloned->end_in_matcher_ = end_in_matcher_;
  return cloned;
}

}  // namespace executorch_openvino::generation::grammar
