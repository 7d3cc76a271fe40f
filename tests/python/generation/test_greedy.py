"""greedy (generation/engine.py): the engine's greedy loop over a step function that records its calls:
the prompt in one call or in pieces at their positions, each token the first of the largest logits,
fed at the next position only when a next token is asked for (the last one chosen is never fed). The
logits a caller compares are the ones its step recorded."""

from __future__ import annotations

import numpy as np
import pytest

from executorch_openvino.generation import greedy

VOCAB = 10


class Recorded:
    """A model whose last row ties its two largest logits at (position + 3) % VOCAB and 9, so the
    first of equal maxima is the token."""

    def __init__(self) -> None:
        self.calls, self.returned = [], []

    def __call__(self, tokens, position):
        self.calls.append((list(tokens), position))
        rows = np.zeros((len(tokens), VOCAB), np.float32)
        rows[-1, [(position + len(tokens) + 2) % 9, 9]] = 5.0
        self.returned.append(rows)
        return rows


def test_tokens_positions_and_the_last_taken_not_fed():
    """Guards against feeding the last token chosen (a fourth call here), a position off by one, and
    the last of equal maxima (9 each time)."""
    step = Recorded()
    taken = greedy(step, [7, 8, 9], 3, start=2)
    assert taken == [(5 + 2) % 9, (6 + 2) % 9, (7 + 2) % 9]
    assert step.calls == [([7, 8, 9], 2), ([7], 5), ([8], 6)]
    # The step's own logits, recorded as it returned them, are what chose each token.
    assert [int(np.argmax(rows[-1])) for rows in step.returned] == taken


def test_the_prompt_in_pieces():
    step = Recorded()
    assert greedy(step, [1, 2, 3, 4, 5], 1, call_tokens=2) == [(4 + 1 + 2) % 9]
    assert step.calls == [([1, 2], 0), ([3, 4], 2), ([5], 4)]


def test_torch_logits_of_any_leading_shape():
    import torch

    def step(tokens, position):
        rows = torch.zeros(1, len(tokens), VOCAB)
        rows[0, -1, (tokens[-1] + 1) % VOCAB] = 1.0
        return rows

    assert greedy(step, [3], 5) == [4, 5, 6, 7, 8]


def test_an_empty_prompt_is_refused():
    with pytest.raises(ValueError, match="empty"):
        greedy(Recorded(), [], 1)


def _resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20


@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/statm"), reason="reads Linux's /proc")
def test_a_long_prompt_costs_the_rows_returned_not_room_for_every_row():
    """A model behind a callback gets room for a row per token it is given and returns the last row
    only (as a program exported with last-row logits does): the room must not be filled in advance.
    Guards the engine's buffer being zero-filled (a vector resized): 2048 tokens at a 150k vocabulary
    touched 1.2 GB and took 0.7 s before a single token, and the bench's decode time carried it."""
    from executorch_openvino.generation import Conversation, Program

    vocab, prompt = 150_000, list(range(2048))
    row = np.zeros(vocab, np.float32)
    row[3] = 1.0
    program = Program.from_step(lambda tokens, position: row, vocab, context=4096, max_call_tokens=len(prompt))
    conversation = Conversation(program)
    before = _resident_mb()
    assert conversation.generate(prompt, 2, eos_ids=[]).tokens == [3, 3]
    grown = _resident_mb() - before  # the room is still held: the conversation is alive
    room = len(prompt) * vocab * 4 / 2**20
    assert grown < room / 10, f"{grown:.0f} MB resident for {room:.0f} MB of room"
