"""Text from the engine (generation/engine.py with a Vocabulary): a byte-level BPE tokenizer trained here
on non-ASCII text (so some tokens end inside a UTF-8 character) and a model of random logits behind
Program.from_step, sampled. The pieces on_text hands out are whole UTF-8 characters each, and together
the tokenizer's decoding of the ids; a stop string that never occurs changes nothing; one that occurs
ends the text right before it (and the ids at the token that completed it); a temperature above 1 works
and a seed reproduces it."""

from __future__ import annotations

import random

import numpy as np
import pytest

from executorch_openvino.generation import Conversation, Program, SamplingOptions, Vocabulary

llguidance = pytest.importorskip("llguidance")

ALPHABET = "αβγδεζηθλμπσωжзийклмнпр日本語中文字🙂🎉éüß"
NEW_TOKENS = 160


@pytest.fixture(scope="module")
def tokenizer():
    from workloads.tokenizer import byte_level_bpe

    rng = random.Random(0)
    words = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(2, 6))) for _ in range(300)]
    text = [" ".join(rng.choice(words) for _ in range(40)) for _ in range(300)]
    return byte_level_bpe(text, vocab_size=600)


@pytest.fixture(scope="module")
def token_bytes(tokenizer):
    lexer = llguidance.LLTokenizer(tokenizer.to_str())
    size = tokenizer.get_vocab_size()
    return [b"" if lexer.is_special_token(i) else lexer.decode_bytes([i]) for i in range(size)]


@pytest.fixture(scope="module")
def program(tokenizer, token_bytes):
    """Random logits given the last token, those of tokens that end inside a character or begin with
    a continuation byte raised, so that characters split over tokens are common."""
    size = tokenizer.get_vocab_size()
    table = np.random.default_rng(1).normal(0, 2, (size, size)).astype(np.float32)
    split = [i for i, data in enumerate(token_bytes)
             if _ends_inside_a_character(data) or (data and 0x80 <= data[0] < 0xC0)]
    table[:, split] += 2.0
    return Program.from_step(lambda tokens, position: table[list(tokens)], size, context=1024)


def _ends_inside_a_character(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.reason == "unexpected end of data"
    return False


def test_the_tokenizer_has_tokens_that_end_inside_a_character(tokenizer, token_bytes):
    inside = [i for i, data in enumerate(token_bytes) if _ends_inside_a_character(data)]
    # Merged tokens too, not only the lone lead bytes of the alphabet.
    assert len(inside) > 10 and any(len(token_bytes[i]) > 1 for i in inside)


def _generate(program, tokenizer, token_bytes, seed, stop=(), temperature=1.5):
    pieces = []
    prompt = tokenizer.encode("αβγ 日本 жзи").ids
    result = Conversation(program).generate(prompt, NEW_TOKENS, sampling=SamplingOptions(temperature=temperature, seed=seed),
                                            eos_ids=[], vocabulary=Vocabulary(token_bytes), stop=stop,
                                            on_text=lambda text: pieces.append(text))
    return result, pieces


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_streamed_pieces_are_whole_characters_and_join_to_the_tokenizers_decoding(program, tokenizer, token_bytes, seed):
    result, pieces = _generate(program, tokenizer, token_bytes, seed)
    assert len(result.tokens) == NEW_TOKENS and result.stopped_by == "length"
    for piece in pieces:  # each piece, on its own, is valid UTF-8 (the binding decodes it strictly)
        assert piece and piece.encode("utf-8").decode("utf-8") == piece
    assert "".join(pieces) == result.text == tokenizer.decode(result.tokens)
    # The test met what it is about: tokens ending inside a character, whose bytes waited for the rest.
    assert any(_ends_inside_a_character(token_bytes[t]) for t in result.tokens)
    assert len(pieces) < len(result.tokens)


def test_a_stop_string_that_never_occurs_changes_nothing(program, tokenizer, token_bytes):
    plain, _ = _generate(program, tokenizer, token_bytes, 4)
    never = "never§"
    assert never not in plain.text
    stopped, pieces = _generate(program, tokenizer, token_bytes, 4, stop=[never])
    assert (stopped.tokens, stopped.text, stopped.stopped_by) == (plain.tokens, plain.text, "length")
    assert "".join(pieces) == plain.text


def test_a_stop_string_that_occurs_ends_the_text_right_before_it(program, tokenizer, token_bytes):
    plain, _ = _generate(program, tokenizer, token_bytes, 5)
    characters = plain.text.replace("\ufffd", "")
    stop = characters[len(characters) // 2:len(characters) // 2 + 2]
    at = plain.text.find(stop)
    assert 0 < at
    stopped, pieces = _generate(program, tokenizer, token_bytes, 5, stop=[stop])
    assert stopped.stopped_by == "stop"
    assert stopped.text == "".join(pieces) == plain.text[:at]
    # The same draws up to the token that completed the stop string, and nothing after it.
    assert stopped.tokens == plain.tokens[:len(stopped.tokens)]
    assert stop in tokenizer.decode(stopped.tokens) and stop not in tokenizer.decode(stopped.tokens[:-1])


def test_a_temperature_of_1_5_works_with_a_seed_and_reproduces(program, tokenizer, token_bytes):
    first, _ = _generate(program, tokenizer, token_bytes, 7, temperature=1.5)
    again, _ = _generate(program, tokenizer, token_bytes, 7, temperature=1.5)
    other, _ = _generate(program, tokenizer, token_bytes, 8, temperature=1.5)
    assert (again.tokens, again.text) == (first.tokens, first.text)
    assert other.tokens != first.tokens
    assert len(set(first.tokens)) > 40  # drawn from a flattened distribution, not a cycle
