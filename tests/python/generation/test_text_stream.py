"""The engine's streamed text (src/generation/text_stream.cpp) against Python's own UTF-8 decoder:
for byte sequences of valid, broken and cut-short characters, fed one byte-token at a time, the pieces
handed out are whole characters and join to exactly bytes.decode("utf-8", "replace"): a broken
character's valid start is one U+FFFD (Unicode's "maximal subpart"), as Python does. Fails on the
version that replaced each byte of a broken start on its own (tried: two U+FFFD for b"\\xe6\\x97a"),
and on one that hands out a character's first bytes before it completes (a piece that does not
decode on its own)."""

from __future__ import annotations

import random

import numpy as np

from executorch_openvino.generation import Conversation, Program, Vocabulary

END = 256
BYTES = Vocabulary([bytes([i]) for i in range(256)] + [b""])
POOL = list("aé日😀".encode()) + [0x80, 0xC0, 0xC3, 0xE6, 0xED, 0xA0, 0xF4, 0x90, 0xFF]


def _stream(sequence):
    """The pieces on_text sees while a model emits `sequence`, a byte-token each, then the end."""

    def step(tokens, position):
        at = position + len(tokens) - 1
        row = np.zeros(END + 1, np.float32)
        row[sequence[at] if at < len(sequence) else END] = 10.0
        return row

    pieces = []
    result = Conversation(Program.from_step(step, END + 1, 64, 64)).generate(
        [0], len(sequence) + 1, eos_ids=[END], vocabulary=BYTES, on_text=pieces.append)
    return result, pieces


def test_the_streamed_text_is_pythons_decoding_in_whole_characters():
    for trial in range(400):
        rng = random.Random(trial)
        sequence = [rng.choice(POOL) for _ in range(rng.randint(1, 14))]
        result, pieces = _stream(sequence)
        assert result.tokens == sequence and result.stopped_by == "eos"
        assert "".join(pieces) == bytes(sequence).decode("utf-8", "replace"), sequence
        for piece in pieces:
            piece.encode("utf-8")  # each piece whole: no lone surrogate, nothing cut


def test_a_character_split_across_tokens_waits_for_its_last_byte():
    sequence = list("日é".encode())
    result, pieces = _stream(sequence)
    assert pieces == ["日", "é"]
