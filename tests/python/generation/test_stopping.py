"""Stop strings in streamed text (generation/stopping.py): a stop string split over pieces is found,
text is held back only while it could begin one, what precedes the first stop string completed is
emitted and nothing after it, and any cutting of the text into pieces gives the same result."""

from __future__ import annotations

import random

import pytest

from executorch_openvino.generation import StopStrings


def _stream(stop, pieces):
    """[(emitted, stopped) per piece], flushed."""
    watcher = StopStrings(stop)
    return [watcher.feed(piece) for piece in pieces], watcher.flush()


def test_a_stop_string_split_over_pieces_is_found_and_held_back_meanwhile():
    fed, flushed = _stream(["<|end|>"], ["Hello <|", "en", "d|> and more", "ignored"])
    assert fed == [("Hello ", False), ("", False), ("", True), ("", True)] and flushed == ""


def test_a_false_start_is_emitted_once_it_cannot_be_a_stop_string():
    fed, flushed = _stream(["<|end|>"], ["a <|e", "nx", " b <", "|"])
    assert fed == [("a ", False), ("<|enx", False), (" b ", False), ("", False)]
    assert flushed == "<|"  # at the end of the stream, what was held is text


def test_only_the_tail_that_begins_a_stop_string_is_held():
    watcher = StopStrings(["User:", "xyz"])
    assert watcher.feed("said x") == ("said ", False)  # "x" may begin "xyz"
    assert watcher.feed("U") == ("x", False)  # "xU" begins nothing; "U" begins "User:"
    assert watcher.feed("ser") == ("", False)
    assert watcher.feed("s: two") == ("Users: two", False)
    assert watcher.flush() == ""


def test_several_stop_strings_stop_at_the_first_completed():
    assert _stream(["###", "\nUser:"], ["answer.\nUs", "er: next ###"]) == ([("answer.", False), ("", True)], "")
    # In one piece: "c" ends before "abcd" does, as it would arriving character by character.
    assert _stream(["abcd", "c"], ["xabcd"]) == ([("xab", True)], "")
    # Ending together: the longer one, so nothing of it is emitted.
    assert _stream(["b", "ab"], ["xab"]) == ([("x", True)], "")


def test_a_stop_string_that_begins_a_longer_text_stops_it_and_a_longer_stop_string_loses():
    assert _stream(["END"], ["THE ", "ENDING"]) == ([("THE ", False), ("", True)], "")
    assert _stream(["<|end", "<|end|>"], ["a<|en", "d|>"]) == ([("a", False), ("", True)], "")


def test_no_stop_string_emits_everything():
    pieces = ["The <", "/s", "pan> is", " not </", "s"]
    fed, flushed = _stream(["</s>"], pieces)
    assert not any(stopped for _, stopped in fed)
    assert "".join(text for text, _ in fed) + flushed == "".join(pieces)
    assert flushed == "</s"
    assert _stream([], ["a", "b"]) == ([("a", False), ("b", False)], "")


def test_empty_or_lone_stop_strings_are_refused():
    with pytest.raises(ValueError, match="non-empty"):
        StopStrings(["</s>", ""])
    with pytest.raises(TypeError, match="not a string"):
        StopStrings("</s>")


def _reference(stop, text):
    """(what a stream of `text` emits, stopped): text before the stop string that ends first."""
    found = [(text.find(s) + len(s), text.find(s)) for s in stop if s in text]
    return (text[:min(found)[1]], True) if found else (text, False)


def _held(stop, text):
    """The longest tail of text that begins a stop string (shorter than it)."""
    return max((n for s in stop for n in range(1, len(s)) if text.endswith(s[:n])), default=0)


def test_any_cutting_into_pieces_gives_the_result_of_the_whole_text_holding_the_least():
    generator = random.Random(0)
    stopped_count = 0
    for _ in range(2000):
        stop = ["".join(generator.choice("abc") for _ in range(generator.randint(1, 4)))
                for _ in range(generator.randint(1, 3))]
        text = "".join(generator.choice("abcd") for _ in range(generator.randint(0, 14)))
        cuts = sorted(generator.sample(range(1, len(text)), generator.randint(0, max(len(text) - 1, 0))))
        pieces = [text[i:j] for i, j in zip([0] + cuts, cuts + [len(text)])]
        watcher = StopStrings(stop)
        emitted, stopped, seen = "", False, ""
        for piece in pieces:
            out, stopped = watcher.feed(piece)
            emitted, seen = emitted + out, seen + piece
            if stopped:
                break
            assert len(emitted) == len(seen) - _held(stop, seen), (stop, pieces)
        emitted += watcher.flush()
        assert (emitted, stopped) == _reference(stop, text), (stop, pieces)
        stopped_count += stopped
    assert 200 < stopped_count < 1800  # both outcomes met often
