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
