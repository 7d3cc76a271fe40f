// Text as it streams (text_stream.h).
#include "generation/text_stream.h"

#include <algorithm>

namespace executorch_openvino::generation {

namespace {

const char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

// The length of the UTF-8 character starting at `bytes[at]`: 1..4 when it is valid and whole, 0 when
// it is valid so far but cut short by the end, and -n when it is invalid: n the bytes of its longest
// valid beginning (1 when byte `at` cannot start one), which become one U+FFFD, as Unicode's
// "maximal subpart" practice, Python's errors="replace" and Rust's from_utf8_lossy (Hugging Face
// tokenizers' decode) replace them.
int character_at(const std::string& bytes, size_t at) {
  const auto lead = static_cast<unsigned char>(bytes[at]);
  int length;
  unsigned char low = 0x80, high = 0xBF;  // the second byte's range (narrower where forms are invalid)
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // past U+10FFFF
  } else {
    return -1;
  }
  for (int i = 1; i < length; ++i) {
    if (at + i >= bytes.size()) return 0;
    const auto next = static_cast<unsigned char>(bytes[at + i]);
    if (i == 1 ? (next < low || next > high) : (next & 0xC0) != 0x80) return -i;
  }
  return length;
}

}  // namespace

const std::string& Vocabulary::bytes(int64_t token) const {
  return token >= 0 && static_cast<size_t>(token) < tokens_.size() ? tokens_[static_cast<size_t>(token)] : none_;
}

size_t whole_characters(const std::string& bytes) {
  size_t at = 0;
  while (at < bytes.size()) {
    const int length = character_at(bytes, at);
    if (length == 0) break;
    at += static_cast<size_t>(length < 0 ? -length : length);
  }
  return at;
}

std::string valid_utf8(const std::string& bytes) {
  std::string text;
  size_t at = 0;
  while (at < bytes.size()) {
    const int length = character_at(bytes, at);
    if (length > 0) {
      text.append(bytes, at, static_cast<size_t>(length));
      at += static_cast<size_t>(length);
    } else {
      text += kReplacement;  // a character broken by its next byte, or cut short by the end
      at = length < 0 ? at + static_cast<size_t>(-length) : bytes.size();
    }
  }
  return text;
}

TextStream::TextStream(const Vocabulary& vocabulary, std::vector<std::string> stops)
    : vocabulary_(&vocabulary), stops_(std::move(stops)) {
  // The text is valid UTF-8, so only a valid stop string can occur in it, and then only at character
  // boundaries; an invalid one is made valid as the text is (the engine refuses them before).
  for (std::string& stop : stops_) stop = valid_utf8(stop);
  stops_.erase(std::remove(stops_.begin(), stops_.end(), std::string()), stops_.end());
}

std::string TextStream::push(int64_t token, bool& stopped) {
  if (stopped_) {
    stopped = true;
    return {};
  }
  pending_ += vocabulary_->bytes(token);
  const size_t whole = whole_characters(pending_);
  held_ += valid_utf8(pending_.substr(0, whole));
  pending_.erase(0, whole);
  if (!started_ && !held_.empty()) {
    started_ = true;
    if (vocabulary_->strip_first_space() && held_.front() == ' ') held_.erase(0, 1);
  }
  std::string out = release(false);
  stopped = stopped_;
  return out;
}

std::string TextStream::finish() {
  if (stopped_) return {};
  held_ += valid_utf8(pending_);
  pending_.clear();
  return release(true);
}

// Hands out what no stop string can still claim: all of it at the end, else all but the longest
// ending that begins a stop string; at a stop string, what precedes it. The stop string that ends
// first wins (of two ending together, the longer), as it would arriving a character at a time, so
// how the text is cut into tokens never changes where it stops.
std::string TextStream::release(bool final) {
  size_t first = std::string::npos, end = std::string::npos;
  for (const std::string& stop : stops_) {
    const size_t at = held_.find(stop);
    if (at == std::string::npos) continue;
    if (at + stop.size() < end || (at + stop.size() == end && at < first)) {
      first = at;
      end = at + stop.size();
    }
  }
  if (first != std::string::npos) {
    stopped_ = true;
    std::string out = held_.substr(0, first);
    held_.clear();
    return out;
  }
  size_t keep = 0;
  if (!final) {
    for (const std::string& stop : stops_) {
      for (size_t length = std::min(stop.size() - 1, held_.size()); length > keep; --length) {
        if (held_.compare(held_.size() - length, length, stop, 0, length) == 0) {
          keep = length;
          break;
        }
      }
    }
  }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

}  // namespace executorch_openvino::generation
