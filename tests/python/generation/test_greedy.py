"""greedy (generation/decoding.py), the one greedy loop, over a step function that records its calls:
the prompt in one call or in pieces at their positions, each token the first of the largest logits,
fed at the next position only when the next token is asked for, the step's own logits handed back."""

from __future__ import annotations

import itertools

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
    """Guards against feeding the token just yielded before it is asked for (a fourth call here), a
    position off by one, and the last of equal maxima (9 each time)."""
    step = Recorded()
    taken = list(itertools.islice(greedy(step, [7, 8, 9], start=2), 3))
    assert [token for token, _ in taken] == [(5 + 2) % 9, (6 + 2) % 9, (7 + 2) % 9]
    assert step.calls == [([7, 8, 9], 2), ([7], 5), ([8], 6)]
    assert all(logits is returned for (_, logits), returned in zip(taken, step.returned))


def test_the_prompt_in_pieces_and_the_logits_as_returned():
    step = Recorded()
    first = next(greedy(step, [1, 2, 3, 4, 5], call_tokens=2))
    assert step.calls == [([1, 2], 0), ([3, 4], 2), ([5], 4)]
    assert first[0] == (4 + 1 + 2) % 9 and first[1] is step.returned[-1]


def test_an_empty_prompt_is_refused():
    with pytest.raises(ValueError, match="empty"):
        next(greedy(Recorded(), []))
