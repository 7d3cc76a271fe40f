// Tokens to text as it streams: each token's bytes (the vocabulary), handed out only as whole UTF-8
// characters (a byte-level tokenizer's token may end inside one; its bytes wait for the rest), with
// stop strings: the text before the first one is handed out, the rest never is, and text that may be
// the start of one waits until it is known not to be.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/outcome.h"

namespace executorch_openvino::generation {

class Vocabulary {
 public:
  // `strip_first_space`: a generation's text drops its first space (a SentencePiece tokenizer's
  // decoder does: its words carry their space in front, the first one too).
  explicit Vocabulary(std::vector<std::string> tokens, bool strip_first_space = false)
      : tokens_(std::move(tokens)), strip_first_space_(strip_first_space) {}
  bool strip_first_space() const { return strip_first_space_; }
  // A token's bytes; "" for one outside the vocabulary or printing nothing (a special token).
  const std::string& bytes(int64_t token) const;
  size_t size() const { return tokens_.size(); }

 private:
  std::vector<std::string> tokens_;
  bool strip_first_space_;
  std::string none_;
};

class TextStream {
 public:
  TextStream(const Vocabulary& vocabulary, std::vector<std::string> stops);

  // Adds a token's bytes; the text now certain (whole characters, no stop string in the making).
  // `stopped` turns true at the first stop string.
  std::string push(int64_t token, bool& stopped);
  // The text still held at the end: an incomplete character becomes U+FFFD.
  std::string finish();

 private:
  std::string release(bool final);

  const Vocabulary* vocabulary_;
  std::vector<std::string> stops_;
  std::string pending_;  // bytes not yet whole characters
  std::string held_;     // whole characters that may begin a stop string
  bool stopped_ = false;
  bool started_ = false;  // text has been handed out (or the first space dropped)
};

// The length of the longest prefix of `bytes` made of whole UTF-8 characters; an invalid sequence counts
// as a character (it becomes U+FFFD when handed out).
size_t whole_characters(const std::string& bytes);
// `bytes` with every invalid or incomplete sequence replaced by U+FFFD.
std::string valid_utf8(const std::string& bytes);

}  // namespace executorch_openvino::generation
