// libFuzzer target: the engine's streamed text (src/generation/text_stream.h), which turns the bytes
// of whatever tokens a model chooses (any bytes: a byte-level vocabulary reaches every one) into text.
// The input is a vocabulary and a generation: its first byte says how many stop strings follow (0-3),
// each a length byte then its bytes; the rest are token ids, one byte each, of a vocabulary whose
// token i is byte i, with four more tokens of several bytes (ids 0xFC-0xFF: parts of characters).
// Besides the sanitizers' findings it stops on a broken promise:
//   - every piece handed out is valid UTF-8, whole characters;
//   - without stop strings, the pieces and the final flush join to the whole generation's bytes made
//     valid (valid_utf8: one U+FFFD per broken piece), whatever the cut into tokens;
//   - with them, the text is a prefix of that; it stops where a stop string begins, and none is in it
//     (stop strings that are not valid UTF-8 count as made valid: only such can occur in text).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "generation/text_stream.h"

namespace {

using executorch_openvino::generation::TextStream;
using executorch_openvino::generation::valid_utf8;
using executorch_openvino::generation::Vocabulary;
using executorch_openvino::generation::whole_characters;

[[noreturn]] void broken(const char* promise) {
  std::fprintf(stderr, "text_stream_fuzzer: TextStream broke its promise: %s\n", promise);
  std::abort();
}

const Vocabulary& vocabulary() {
  static const Vocabulary made = [] {
    std::vector<std::string> tokens;
    for (int i = 0; i < 256; ++i) tokens.emplace_back(1, static_cast<char>(i));
    tokens[0xFC] = "\xE6\x97";      // the first two bytes of 日
    tokens[0xFD] = "\xA5 ";         // its last byte, then a space
    tokens[0xFE] = "\xF0\x9F\x98";  // most of an emoji
    tokens[0xFF] = "";              // a special token: prints nothing
    return Vocabulary(tokens);
  }();
  return made;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size_t at = 0;
  const size_t stop_count = data[at++] % 4;
  std::vector<std::string> stops;
  for (size_t i = 0; i < stop_count && at < size; ++i) {
    const size_t length = data[at++] % 8;
    const size_t take = std::min(length, size - at);
    stops.emplace_back(reinterpret_cast<const char*>(data + at), take);
    at += take;
  }
  TextStream stream(vocabulary(), stops);
  // What the stream looks for: each stop string made valid, as the text is.
  bool any_stop = false;
  for (std::string& stop : stops) {
    stop = valid_utf8(stop);
    any_stop = any_stop || !stop.empty();
  }
  std::string bytes, text;
  bool stopped = false;
  for (; at < size && !stopped; ++at) {
    bytes += vocabulary().bytes(data[at]);
    const std::string piece = stream.push(data[at], stopped);
    if (whole_characters(piece) != piece.size() || valid_utf8(piece) != piece) broken("a piece is not valid UTF-8");
    text += piece;
  }
  if (!stopped) {
    const std::string rest = stream.finish();
    if (valid_utf8(rest) != rest) broken("the flush is not valid UTF-8");
    text += rest;
  }
  const std::string whole = valid_utf8(bytes);
  if (!any_stop && text != whole) broken("without stop strings the text is not the bytes made valid");
  if (any_stop) {
    if (whole.compare(0, text.size(), text) != 0) broken("the text is not a prefix of the generation's");
    for (const std::string& stop : stops)
      if (!stop.empty() && text.find(stop) != std::string::npos) broken("a stop string was handed out");
    if (stopped) {
      bool begins = false;
      for (const std::string& stop : stops)
        begins = begins || (!stop.empty() && whole.compare(text.size(), stop.size(), stop) == 0);
      if (!begins) broken("it stopped where no stop string begins");
    }
  }
  return 0;
}
