// Text as it streams (src/generation/text_stream.h): tokens' bytes handed out as whole UTF-8
// characters, invalid bytes as U+FFFD (as Python's bytes.decode("utf-8", "replace") gives them), and
// stop strings: nothing from the first one on, text that may begin one held until it cannot.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "generation/text_stream.h"

namespace executorch_openvino::generation {
namespace {

const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// What each push hands out, and whether the stream had stopped after it.
struct Pushed {
  std::vector<std::string> pieces;
  std::vector<bool> stopped;
};

Pushed push_all(TextStream& stream, const std::vector<int64_t>& tokens) {
  Pushed out;
  for (int64_t token : tokens) {
    bool stopped = false;
    out.pieces.push_back(stream.push(token, stopped));
    out.stopped.push_back(stopped);
  }
  return out;
}

// A byte-level tokenizer's tokens may end inside a character: "€" (E2 82 AC) split after its second
// byte, "😀" (F0 9F 98 80) over three tokens. Their bytes wait until the character is whole; one
// still cut short at the end becomes U+FFFD. Fails on a stream that hands out every push's bytes
// made valid (push() taking all of pending_ rather than whole_characters(pending_)): tried, the
// first half of "€" comes out as U+FFFD and the rest as another.
TEST(TextStreamTest, ATokenEndingInsideACharacterHoldsItsBytesUntilItIsWhole) {
  const Vocabulary vocabulary({"a", "\xE2\x82", "\xAC", "\xF0\x9F", "\x98", "\x80", "b"});
  TextStream stream(vocabulary, {});
  const Pushed pushed = push_all(stream, {0, 1, 2, 3, 4, 5, 6});
  EXPECT_EQ(pushed.pieces, (std::vector<std::string>{"a", "", "\xE2\x82\xAC", "", "", "\xF0\x9F\x98\x80", "b"}));
  EXPECT_EQ(stream.finish(), "");
  TextStream cut(vocabulary, {});
  EXPECT_EQ(push_all(cut, {6, 1}).pieces, (std::vector<std::string>{"b", ""}));
  EXPECT_EQ(cut.finish(), kReplacement);  // the end came inside the character
  EXPECT_EQ(whole_characters("a\xE2\x82"), 1u);
  EXPECT_EQ(whole_characters("a\xE2\x82\xAC"), 4u);
}

// Bytes no character can be made of are handed out at once as U+FFFD, one for each maximal invalid
// piece as Python's decoder gives them (a lone lead byte, an overlong form, a surrogate, a sequence
// broken off by an ASCII byte), never held waiting for more. Fails on a stream that counts an invalid
// byte as an incomplete character (whole_characters stopping there): tried, "\xFF" is held to the
// end. The broken-off case ("\xE2\x82x" one U+FFFD, as Python's) failed on the engine as first
// written, which gave one per byte (two): fixed in character_at.
TEST(TextStreamTest, InvalidBytesBecomeTheReplacementCharacter) {
  const Vocabulary vocabulary({"\xFF", "x", "\xE2\x82", "y"});
  TextStream stream(vocabulary, {});
  EXPECT_EQ(push_all(stream, {1, 0, 1}).pieces, (std::vector<std::string>{"x", kReplacement, "x"}));
  // A character broken off by the next token's ASCII byte: its piece is one U+FFFD.
  EXPECT_EQ(push_all(stream, {2, 3}).pieces, (std::vector<std::string>{"", kReplacement + "y"}));
  EXPECT_EQ(valid_utf8("\xC0\x80"), kReplacement + kReplacement);             // overlong
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), kReplacement + kReplacement + kReplacement);  // a surrogate
  EXPECT_EQ(valid_utf8("\xE2\x82x"), kReplacement + "x");
  EXPECT_EQ(valid_utf8("\xF0\x9F\x98x"), kReplacement + "x");
  EXPECT_EQ(valid_utf8("\x80\x80"), kReplacement + kReplacement);
  EXPECT_EQ(valid_utf8("ok \xE2\x82\xAC"), "ok \xE2\x82\xAC");
}

// A stop string: the text before it is handed out, nothing from it on (in the same token or later
// ones); text that may begin it (" E", "EN") is held, then released when the next token shows it is
// not the stop ("Ex"), or at the end. Fails on a stream that never holds (release() keeping nothing
// back): tried, "E" is handed out before the "ND" that completes the stop, so text of the stop string
// reaches the caller.
TEST(TextStreamTest, StopStringsEndTheTextAndWhatMayBeginOneWaits) {
  const Vocabulary vocabulary({"Hello", " E", "x", "N", "D", " tail", "abENDzz", "\xE2\x82", "\xAC"});
  TextStream stream(vocabulary, {"END", "\xE2\x82\xAC!"});
  const Pushed pushed = push_all(stream, {0, 1, 2, 1, 3, 4, 5});
  EXPECT_EQ(pushed.pieces, (std::vector<std::string>{"Hello", " ", "Ex", " ", "", "", ""}));
  EXPECT_EQ(pushed.stopped, (std::vector<bool>{false, false, false, false, false, true, true}));
  EXPECT_EQ(stream.finish(), "");  // the held "E" and "N" were the stop's
  // The stop inside one token: what precedes it only.
  TextStream inside(vocabulary, {"END"});
  EXPECT_EQ(push_all(inside, {6, 0}).pieces, (std::vector<std::string>{"ab", ""}));
  // Held at the end: handed out by finish(). A stop beginning with a multi-byte character: held
  // whole once complete ("€" may begin "€!").
  TextStream held(vocabulary, {"END", "\xE2\x82\xAC!"});
  EXPECT_EQ(push_all(held, {0, 7, 8, 1}).pieces, (std::vector<std::string>{"Hello", "", "", "\xE2\x82\xAC "}));
  EXPECT_EQ(held.finish(), "E");
}

// Without stop strings (none, or only empty ones) every push hands out its whole characters at once
// and nothing stops. Fails on a stream that keeps an empty stop string (the constructor not removing
// it): tried, "" is found at the start of the text and the stream stops at its first token with
// nothing handed out.
TEST(TextStreamTest, NoStopStringsChangeNothing) {
  const Vocabulary vocabulary({"Hello", " E", "N", "D", "\xE2\x82\xAC"});
  const std::vector<int64_t> tokens{0, 1, 2, 3, 4, 1};
  for (const std::vector<std::string>& stops : {std::vector<std::string>{}, std::vector<std::string>{""}}) {
    TextStream stream(vocabulary, stops);
    const Pushed pushed = push_all(stream, tokens);
    EXPECT_EQ(pushed.pieces, (std::vector<std::string>{"Hello", " E", "N", "D", "\xE2\x82\xAC", " E"}))
        << stops.size();
    EXPECT_EQ(pushed.stopped, std::vector<bool>(tokens.size(), false)) << stops.size();
    EXPECT_EQ(stream.finish(), "");
  }
}

}  // namespace
}  // namespace executorch_openvino::generation
