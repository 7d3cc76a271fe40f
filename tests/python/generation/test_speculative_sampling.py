"""Speculative sampling (the engine, through generation/engine.py) draws each token from the model's
distribution, as plain sampling does, whatever the drafter proposes: checked against the exact
distribution of the first tokens after the first two of a small Markov-chain model, for prompt lookup
and for draft programs that are always, sometimes and never right (a drafter is probed before its
drafts are fed, so the first tokens are mostly plain steps). Drawing again at the first rejected
position (instead of keeping the draw that rejected the draft) would favour the draft token; the test
sees that too. Under one seed, speculative sampling gives plain sampling's ids."""

from __future__ import annotations

import itertools
from typing import Callable, Optional, Sequence

import numpy as np
import pytest

from executorch_openvino.generation import Conversation, Program, SamplingOptions

# Next-token probabilities given the last token, over a vocabulary of 3.
CHAIN = np.array([[0.5, 0.3, 0.2],
                  [0.2, 0.5, 0.3],
                  [0.4, 0.1, 0.5]])
PROMPT = [0, 2]
TOKENS = 5  # generated; the last COMPARED are compared: 27 outcomes
COMPARED = 3
RUNS = 4000


def _model() -> Program:
    def step(tokens: Sequence[int], position: int) -> np.ndarray:
        return np.log(CHAIN[list(tokens)])  # each position's logits depend on its token only

    return Program.from_step(step, 3, context=64, max_call_tokens=16)


def _draft(after: Callable[[int], int]) -> Program:
    """A draft program proposing after(token) after each token, whatever came before."""

    def step(tokens: Sequence[int], position: int) -> np.ndarray:
        rows = np.full((len(tokens), 3), -10.0, np.float32)
        rows[np.arange(len(tokens)), [after(t) for t in tokens]] = 0.0
        return rows

    return Program.from_step(step, 3, context=64, all_logits=False)


DRAFTERS = {
    "plain": None,
    "lookup": "lookup",
    "ones": lambda token: 1,
    "twos-then-zero": lambda token: 0 if token == 2 else 2,
    "mixed": lambda token: (token + 1) % 3,
}


def _generate(model: Program, drafter, count: int, options: SamplingOptions, max_draft: int = 3):
    draft: Optional[Program] = _draft(drafter) if callable(drafter) else None
    return Conversation(model).generate(PROMPT, count, sampling=options, eos_ids=[], lookup=drafter == "lookup",
                                        draft=draft, max_draft=max_draft)


def _exact() -> dict:
    """The probability of each outcome of the last COMPARED tokens of TOKENS."""
    out = {}
    for outcome in itertools.product(range(3), repeat=TOKENS):
        probability, last = 1.0, PROMPT[-1]
        for token in outcome:
            probability, last = probability * CHAIN[last, token], token
        out[outcome[-COMPARED:]] = out.get(outcome[-COMPARED:], 0.0) + probability
    return out


# Expected distance at 4000 draws over 27 outcomes: about 0.02; drawing the rejected position again moves
# the distribution by more than 0.1 for the drafter of ones.
@pytest.mark.parametrize("name", list(DRAFTERS))
def test_tokens_are_drawn_as_plain_sampling_draws_them(name):
    model, counts, accepted = _model(), {}, 0
    for seed in range(RUNS):
        result = _generate(model, DRAFTERS[name], TOKENS, SamplingOptions(temperature=1.0, seed=seed))
        tokens = tuple(result.tokens[-COMPARED:])
        counts[tokens] = counts.get(tokens, 0) + 1
        accepted += result.statistics.accepted
    distance = 0.5 * sum(abs(counts.get(outcome, 0) / RUNS - p) for outcome, p in _exact().items())
    assert distance < 0.05
    if name != "plain":
        assert accepted > 0  # drafts were fed and kept: the speculative path was taken


def test_a_seed_fixes_speculative_sampling_and_drafts_get_kept():
    model = _model()
    runs = [_generate(model, DRAFTERS["lookup"], 32, SamplingOptions(temperature=1.0, seed=3), max_draft=2)
            for _ in range(2)]
    assert runs[0].tokens == runs[1].tokens
    stats = runs[0].statistics
    assert 0 < stats.accepted < stats.drafted and stats.calls < 31, stats


@pytest.mark.parametrize("name", ["lookup", "ones", "twos-then-zero", "mixed"])
def test_under_one_seed_speculative_sampling_draws_plain_samplings_ids(name):
    """Each token costs one draw, a kept draft's position as well as the one that rejects a draft, so
    from the same logits the seed gives plain sampling's ids."""
    model, accepted = _model(), 0
    for seed in range(20):
        options = SamplingOptions(temperature=1.0, top_p=0.9, repetition_penalty=1.2, seed=seed)
        plain = _generate(model, None, 24, options).tokens
        speculative = _generate(model, DRAFTERS[name], 24, options)
        assert speculative.tokens == plain, seed
        accepted += speculative.statistics.accepted
    assert accepted > 0  # drafts were kept, not only rejected
