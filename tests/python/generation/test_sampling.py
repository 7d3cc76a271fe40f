"""Choosing the next token (generation/sampling.py) as Hugging Face transformers' generate does: the
distribution drawn from is that of its logits processors (repetition penalty, temperature, top-k,
top-p) over random logits with and without ties; greedy is argmax; a seed fixes the draws; draws
follow the distribution; options out of range are refused."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from transformers import (RepetitionPenaltyLogitsProcessor, TemperatureLogitsWarper, TopKLogitsWarper,
                          TopPLogitsWarper)

from executorch_openvino.generation import Sampler, SamplingOptions

GRID = [SamplingOptions(temperature, top_k, top_p, penalty)
        for temperature, top_k, top_p, penalty in itertools.product((0.7, 1.0, 1.6), (0, 1, 3, 40),
                                                                    (1.0, 0.9, 0.5, 0.05), (1.0, 1.3, 0.8))]


def _transformers(logits: np.ndarray, history: list, options: SamplingOptions):
    """(generate's distribution, its scores before top-p), from its own processors in its order, in float64."""
    ids = torch.tensor([history], dtype=torch.long).reshape(1, -1)
    scores = torch.from_numpy(logits).double()[None]
    if options.repetition_penalty != 1.0:
        scores = RepetitionPenaltyLogitsProcessor(float(options.repetition_penalty))(ids, scores)
    if options.temperature != 1.0:
        scores = TemperatureLogitsWarper(float(options.temperature))(ids, scores)
    if options.top_k:
        scores = TopKLogitsWarper(options.top_k)(ids, scores)
    before_top_p = scores[0].numpy().copy()
    if options.top_p < 1.0:
        scores = TopPLogitsWarper(float(options.top_p))(ids, scores)
    return torch.softmax(scores, dim=-1)[0].numpy(), before_top_p


def _case(rng: np.random.Generator, vocab: int, tied: bool):
    # Ties: a few distinct values only, so equal logits meet at the top-k and top-p boundaries.
    logits = rng.integers(-4, 5, vocab) * 0.75 if tied else rng.normal(0, 3, vocab)
    history = rng.integers(0, vocab, rng.integers(0, 2 * vocab + 1)).tolist()  # repeats included
    return logits, history


@pytest.mark.parametrize("vocab", [1, 2, 5, 64, 1000, 32000])
def test_the_distribution_is_transformers_on_distinct_logits(vocab):
    rng = np.random.default_rng(vocab)
    for options in GRID:
        logits, history = _case(rng, vocab, tied=False)
        theirs, _ = _transformers(logits, history, options)
        ours = Sampler(options).filtered_probabilities(logits, history)
        assert np.array_equal(ours > 0, theirs > 0), options
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6, err_msg=str(options))


@pytest.mark.parametrize("vocab", [2, 5, 64, 1000])
def test_the_distribution_is_transformers_on_tied_logits(vocab):
    """Top-k keeps every tie of the k-th value, as transformers does. Where tokens of one value
    straddle the top-p boundary, transformers keeps whichever torch.sort put last, not by id: the
    same number of them must stay (so the same probabilities), and ours are the lowest ids."""
    rng = np.random.default_rng(100 + vocab)
    straddled = 0
    for options in GRID:
        logits, history = _case(rng, vocab, tied=True)
        theirs, before_top_p = _transformers(logits, history, options)
        ours = Sampler(options).filtered_probabilities(logits, history)
        np.testing.assert_allclose(np.sort(ours), np.sort(theirs), rtol=0, atol=1e-6, err_msg=str(options))
        differing = (ours > 0) != (theirs > 0)
        if differing.any():
            assert options.top_p < 1, options
            (value,) = set(before_top_p[differing])
            group = np.flatnonzero(before_top_p == value)
            kept = np.flatnonzero(ours[group] > 0)
            assert kept.size == np.count_nonzero(theirs[group] > 0) and list(kept) == list(range(kept.size))
            straddled += 1
        np.testing.assert_allclose(ours[~differing], theirs[~differing], rtol=0, atol=1e-6, err_msg=str(options))
    if vocab >= 64:
        assert straddled > 0  # the case above was met


def test_top_p_removes_a_token_exactly_at_the_boundary_and_keeps_one_at_least():
    # Four equal tokens: ascending cumulative 0.25, 0.5, 0.75, 1 (exact in binary); at most 1 - 0.5 goes.
    ours = Sampler(SamplingOptions(temperature=1.0, top_p=0.5)).filtered_probabilities(np.zeros(4), [])
    theirs, _ = _transformers(np.zeros(4), [], SamplingOptions(temperature=1.0, top_p=0.5))
    assert list(ours) == [0.5, 0.5, 0, 0] and np.count_nonzero(theirs) == 2
    # 1 - top_p rounds to 1: every cumulative probability is at most that, and the most probable stays.
    tiny = SamplingOptions(temperature=1.0, top_p=1e-20)
    logits = np.array([0.0, 2.0, 1.0])
    assert list(Sampler(tiny).filtered_probabilities(logits, [])) == list(_transformers(logits, [], tiny)[0]) == [0, 1, 0]


def test_greedy_is_argmax_after_the_penalty_first_of_equal_maxima():
    rng = np.random.default_rng(7)
    for vocab in (1, 3, 50, 5000):
        for penalty in (1.0, 1.5, 0.7):
            logits, history = _case(rng, vocab, tied=True)
            options = SamplingOptions(top_k=3, top_p=0.2, repetition_penalty=penalty)  # greedy ignores both
            penalized, _ = _transformers(logits, history, SamplingOptions(temperature=1.0, repetition_penalty=penalty))
            expected = int(np.argmax(penalized))  # softmax keeps the order, and the first of ties
            sampler = Sampler(options)
            assert sampler.next_token(logits, history) == expected
            assert list(np.flatnonzero(sampler.filtered_probabilities(logits, history))) == [expected]
    assert Sampler().next_token(np.array([1.0, 3.0, 3.0, 0.0]), []) == 1
    # The penalty divides a positive logit and multiplies a negative one: both become less likely.
    assert Sampler(SamplingOptions(repetition_penalty=4.0)).next_token(np.array([2.0, 1.0]), [0, 0]) == 1
    assert Sampler(SamplingOptions(repetition_penalty=4.0)).next_token(np.array([-1.0, -2.0]), [0]) == 1


def _draws(sampler: Sampler, logits: np.ndarray, count: int) -> list:
    history: list = []
    for _ in range(count):
        history.append(sampler.next_token(logits, history))
    return history


def test_a_seed_fixes_the_draws_and_another_seed_or_none_changes_them():
    logits = np.random.default_rng(3).normal(0, 1, 50)

    def draws(seed):
        return _draws(Sampler(SamplingOptions(temperature=1.0, repetition_penalty=1.1, seed=seed)), logits, 300)

    first = draws(1234)
    assert draws(1234) == first
    assert draws(1235) != first
    assert draws(None) != draws(None)
    assert len(set(first)) > 10  # they are draws, not one token over and over


def test_draws_follow_the_filtered_distribution():
    logits = np.array([1.0, 2.5, 0.3, 2.5, -1.0, 1.7, 0.9, 3.0])
    options = SamplingOptions(temperature=0.8, top_k=6, top_p=0.95, seed=5)
    sampler = Sampler(options)
    expected = sampler.filtered_probabilities(logits, [])
    count = 20000
    observed = np.bincount([sampler.next_token(logits, []) for _ in range(count)], minlength=logits.size)
    support = expected > 0
    assert 2 <= support.sum() < logits.size  # top-k and top-p removed something, several remain
    assert observed[~support].sum() == 0
    chi_square = (((observed - count * expected)[support]) ** 2 / (count * expected[support])).sum()
    assert chi_square < 25  # above it with 4 degrees of freedom (5 ids): once in 20000


@pytest.mark.parametrize("options, named", [
    (SamplingOptions(temperature=-0.1), "temperature"), (SamplingOptions(temperature=float("nan")), "temperature"),
    (SamplingOptions(temperature=float("inf")), "temperature"), (SamplingOptions(top_k=-1), "top_k"),
    (SamplingOptions(top_k=2.5), "top_k"), (SamplingOptions(top_p=0.0), "top_p"), (SamplingOptions(top_p=1.01), "top_p"),
    (SamplingOptions(top_p=float("nan")), "top_p"), (SamplingOptions(repetition_penalty=0.0), "repetition_penalty"),
    (SamplingOptions(repetition_penalty=-1.0), "repetition_penalty"),
])
def test_options_out_of_range_are_refused(options, named):
    with pytest.raises(ValueError, match=named):
        options.validate()
    with pytest.raises(ValueError, match=named):
        Sampler(options)


def test_options_in_range_pass_and_bad_logits_or_history_are_refused():
    for options in GRID + [SamplingOptions(), SamplingOptions(top_p=1.0, top_k=10**9, seed=0)]:
        options.validate()
    sampler = Sampler(SamplingOptions(temperature=1.0, repetition_penalty=1.2))
    for logits in (np.zeros((2, 3)), np.zeros(0), np.array([0.0, np.nan]), np.array([0.0, np.inf]),
                   np.full(3, -np.inf)):
        with pytest.raises(ValueError, match="logits"):
            sampler.next_token(logits, [])
    for history in ([3], [-1]):
        with pytest.raises(ValueError, match="outside the vocabulary"):
            sampler.next_token(np.zeros(3), history)
    assert sampler.next_token(np.array([0.0, -np.inf, 1.0]), [0]) in (0, 2)  # masked ids are fine
