"""Speculative sampling (generation/decoding.py) draws each token from the model's distribution, as plain
sampling does, whatever the drafter proposes: checked against the exact distribution of the first tokens
after the first two of a small Markov-chain model, for drafters that are always, sometimes and never
right (a drafter is probed before its drafts are fed, so the first tokens are mostly plain steps). Drawing again at
the first rejected position (instead of keeping the draw that rejected the draft) would favour the draft
token; the test sees that too."""

from __future__ import annotations

import itertools
from typing import List, Sequence

import numpy as np
import pytest

from executorch_openvino.generation import SamplingOptions, TextModel, generate

# Next-token probabilities given the last token, over a vocabulary of 3.
CHAIN = np.array([[0.5, 0.3, 0.2],
                  [0.2, 0.5, 0.3],
                  [0.4, 0.1, 0.5]])
PROMPT = [0, 2]
TOKENS = 5  # generated; the last COMPARED are compared: 27 outcomes
COMPARED = 3
RUNS = 4000


def _model() -> TextModel:
    def step(tokens: Sequence[int], position: int) -> np.ndarray:
        return np.log(CHAIN[list(tokens)])  # each position's logits depend on its token only

    return TextModel(step=step, context=64, max_call_tokens=16, all_logits=True)


class _Fixed:
    """Proposes the same tokens whatever the history; asking costs nothing, so it is probed at every
    plain step and its drafts are fed from the step after a guess lands."""

    free_to_ask = True

    def __init__(self, tokens: List[int]):
        self.tokens = tokens

    def draft(self, history, limit):
        return self.tokens[:limit]


def _exact() -> dict:
    """The probability of each outcome of the last COMPARED tokens of TOKENS."""
    out = {}
    for outcome in itertools.product(range(3), repeat=TOKENS):
        probability, last = 1.0, PROMPT[-1]
        for token in outcome:
            probability, last = probability * CHAIN[last, token], token
        out[outcome[-COMPARED:]] = out.get(outcome[-COMPARED:], 0.0) + probability
    return out


def _distance(drafter) -> float:
    """Total variation between the drawn last tokens and the exact distribution."""
    model, counts = _model(), {}
    for seed in range(RUNS):
        tokens = tuple(generate(model, PROMPT, TOKENS, sampling=SamplingOptions(temperature=1.0, seed=seed),
                                drafter=drafter, max_draft=3).tokens[-COMPARED:])
        counts[tokens] = counts.get(tokens, 0) + 1
    return 0.5 * sum(abs(counts.get(outcome, 0) / RUNS - p) for outcome, p in _exact().items())


# Expected distance at 4000 draws over 27 outcomes: about 0.02; drawing the rejected position again moves
# the distribution by more than 0.1 for the drafter of ones.
@pytest.mark.parametrize("drafter", [None, _Fixed([1, 1, 1]), _Fixed([2, 2, 0]), _Fixed([0, 1, 2])],
                         ids=["plain", "ones", "twos-then-zero", "mixed"])
def test_tokens_are_drawn_as_plain_sampling_draws_them(drafter):
    assert _distance(drafter) < 0.05


def test_a_seed_fixes_speculative_sampling_and_drafts_get_kept():
    model = _model()
    runs = [generate(model, PROMPT, 32, sampling=SamplingOptions(temperature=1.0, seed=3), drafter=_Fixed([1, 1]),
                     max_draft=2) for _ in range(2)]
    assert runs[0].tokens == runs[1].tokens
    stats = runs[0].statistics
    assert 0 < stats.accepted < stats.drafted and stats.calls < 31, stats


@pytest.mark.parametrize("drafter", [_Fixed([1, 1, 1]), _Fixed([2, 2, 0]), _Fixed([0, 1, 2])],
                         ids=["ones", "twos-then-zero", "mixed"])
def test_under_one_seed_speculative_sampling_draws_plain_samplings_ids(drafter):
    """Each token costs one draw, a kept draft's position as well as the one that rejects a draft, so
    from the same logits the seed gives plain sampling's ids (the C++ loop is held to the same ids,
    tests/cpp/generation)."""
    model, accepted = _model(), 0
    for seed in range(20):
        options = SamplingOptions(temperature=1.0, top_p=0.9, repetition_penalty=1.2, seed=seed)
        plain = generate(model, PROMPT, 24, sampling=options).tokens
        speculative = generate(model, PROMPT, 24, sampling=options, drafter=drafter, max_draft=3)
        assert speculative.tokens == plain, seed
        accepted += speculative.statistics.accepted
    assert accepted > 0  # drafts were kept, not only rejected
