"""Stop strings in streamed text (the engine, through generation/engine.py), over a model that emits
given pieces of text as tokens: a stop string split over tokens is found, text is held back only while
it could begin one, what precedes the first stop string completed is handed out and nothing after it
(no further token is generated), and any cutting of the text into tokens gives the same result."""

from __future__ import annotations

import random

import numpy as np
import pytest

from executorch_openvino.generation import Conversation, GenerationValueError, Program, Vocabulary

START, END, MARK = 0, 1, 2  # the prompt's token, end-of-sequence and a token of no text, then the pieces


def _model(sequence):
    """Emits `sequence` after the prompt's one token, then END."""
    vocab = 3 + len(sequence)

    def step(tokens, position):
        rows = np.zeros((len(tokens), vocab), np.float32)
        for i in range(len(tokens)):
            at = position + i  # the next token is sequence[at]
            rows[i, sequence[at] if at < len(sequence) else END] = 1.0
        return rows

    return Program.from_step(step, vocab, context=64)


def _stream(stop, pieces, tokens=False):
    """([text handed out after each piece], the text handed out at the end): each piece is a token, then
    a token of no text marks the end (whatever comes after it is the flush)."""
    vocabulary = Vocabulary([b"", b"", b""] + [piece.encode() for piece in pieces])
    sequence = [3 + i for i in range(len(pieces))] + [MARK]
    out, seen = [], []

    def on_token(token):
        out.append("")
        seen.append(token)

    def on_text(text):
        assert out, "text before any token"
        out[-1] += text

    result = Conversation(_model(sequence)).generate([START], 100, eos_ids=[END], vocabulary=vocabulary,
                                                     stop=stop, on_token=on_token, on_text=on_text)
    assert result.text == "".join(out) and seen == result.tokens
    stopped = result.stopped_by == "stop"
    assert stopped or result.stopped_by == "eos", result.stopped_by
    fed = [(text, stopped and i == len(out) - 1) for i, text in enumerate(out[:len(pieces)])]
    flushed = out[len(pieces)] if len(out) > len(pieces) else ""
    return (fed, flushed, result) if tokens else (fed, flushed)


def test_a_stop_string_split_over_pieces_is_found_and_held_back_meanwhile():
    fed, flushed, result = _stream(["<|end|>"], ["Hello <|", "en", "d|> and more", "ignored"], tokens=True)
    assert fed == [("Hello ", False), ("", False), ("", True)] and flushed == ""
    assert result.tokens == [3, 4, 5]  # nothing generated after the token that completed it


def test_a_false_start_is_emitted_once_it_cannot_be_a_stop_string():
    fed, flushed = _stream(["<|end|>"], ["a <|e", "nx", " b <", "|"])
    assert fed == [("a ", False), ("<|enx", False), (" b ", False), ("", False)]
    assert flushed == "<|"  # at the end of the stream, what was held is text


def test_only_the_tail_that_begins_a_stop_string_is_held():
    fed, flushed = _stream(["User:", "xyz"], ["said x", "U", "ser", "s: two"])
    # "x" may begin "xyz"; "xU" begins nothing, "U" begins "User:"
    assert fed == [("said ", False), ("x", False), ("", False), ("Users: two", False)] and flushed == ""


def test_several_stop_strings_stop_at_the_first_completed():
    assert _stream(["###", "\nUser:"], ["answer.\nUs", "er: next ###"]) == ([("answer.", False), ("", True)], "")
    # In one piece: "c" ends before "abcd" does, as it would arriving character by character.
    assert _stream(["abcd", "c"], ["xabcd"]) == ([("xab", True)], "")
    assert _stream(["abcd", "c"], ["xa", "b", "cd"]) == ([("x", False), ("", False), ("ab", True)], "")
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


def test_empty_or_lone_stop_strings_are_refused_and_stop_strings_need_a_vocabulary():
    program = _model([3])
    with pytest.raises(ValueError, match="non-empty"):
        Conversation(program).generate([START], 4, vocabulary=Vocabulary([b""] * 4), stop=["</s>", ""])
    with pytest.raises(TypeError, match="not a string"):
        Conversation(program).generate([START], 4, vocabulary=Vocabulary([b""] * 4), stop="</s>")
    with pytest.raises(GenerationValueError, match="vocabulary"):
        Conversation(program).generate([START], 4, stop=["</s>"])


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
    for _ in range(600):
        stop = ["".join(generator.choice("abc") for _ in range(generator.randint(1, 4)))
                for _ in range(generator.randint(1, 3))]
        text = "".join(generator.choice("abcd") for _ in range(generator.randint(1, 14)))
        cuts = sorted(generator.sample(range(1, len(text)), generator.randint(0, max(len(text) - 1, 0))))
        pieces = [text[i:j] for i, j in zip([0] + cuts, cuts + [len(text)])]
        fed, flushed = _stream(stop, pieces)
        emitted, seen, stopped = "", "", False
        for piece, (out, stopped) in zip(pieces, fed):
            emitted, seen = emitted + out, seen + piece
            if stopped:
                break
            assert len(emitted) == len(seen) - _held(stop, seen), (stop, pieces)
        assert (emitted + flushed, stopped) == _reference(stop, text), (stop, pieces)
        stopped_count += stopped
    assert 60 < stopped_count < 540  # both outcomes met often
