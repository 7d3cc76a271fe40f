"""Choosing the next token (the engine's sampler, through generation/engine.py) as Hugging Face
transformers' generate does: the distribution drawn from is that of its logits processors (repetition
penalty over the whole conversation, temperature, top-k, top-p) over random logits with and without
ties; a seed names numpy's PCG64 draws (one uniform number a token, over the ids of positive
probability in id order), so every id is predicted exactly from transformers' distribution; greedy is
argmax after the penalty; draws follow the distribution; options and logits out of range are refused."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from transformers import (RepetitionPenaltyLogitsProcessor, TemperatureLogitsWarper, TopKLogitsWarper,
                          TopPLogitsWarper)

from executorch_openvino.generation import Conversation, GenerationValueError, Program, SamplingOptions

GRID = [SamplingOptions(temperature, top_k, top_p, penalty)
        for temperature, top_k, top_p, penalty in itertools.product((0.7, 1.0, 1.6), (0, 1, 3, 40),
                                                                    (1.0, 0.9, 0.5, 0.05), (1.0, 1.3, 0.8))]


def _transformers(logits: np.ndarray, history: list, options: SamplingOptions):
    """(generate's distribution, its scores before top-p), from its own processors in its order, in float64."""
    ids = torch.tensor([history], dtype=torch.long).reshape(1, -1)
    scores = torch.from_numpy(np.asarray(logits, np.float32).astype(np.float64))[None]
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


def _expected(logits: np.ndarray, history: list, options: SamplingOptions) -> np.ndarray:
    """transformers' distribution, where tokens of one value straddle the top-p boundary keeping the
    lowest ids of them (transformers keeps whichever torch.sort put last: the same number, so the same
    probabilities)."""
    theirs, before_top_p = _transformers(logits, history, options)
    if options.top_p < 1.0:
        for value in set(before_top_p[theirs > 0]):
            group = np.flatnonzero(before_top_p == value)
            kept = np.count_nonzero(theirs[group] > 0)
            if kept < group.size:
                probability = theirs[group][theirs[group] > 0][0]
                theirs[group] = 0.0
                theirs[group[:kept]] = probability
    return theirs


def _draw(probabilities: np.ndarray, rng: np.random.Generator) -> int:
    """numpy's next uniform number over the cumulative probabilities of the ids that can be drawn."""
    support = np.flatnonzero(probabilities > 0)
    cumulative = np.cumsum(probabilities[support])
    pick = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    return int(support[min(pick, support.size - 1)])


def _fixed(logits: np.ndarray, context: int = 1 << 20) -> Program:
    """A model whose every position's logits are `logits`."""
    row = np.asarray(logits, np.float32)
    return Program.from_step(lambda tokens, position: np.tile(row, (len(tokens), 1)), row.size, context)


def _generate(program: Program, prompt: list, count: int, options: SamplingOptions) -> list:
    return Conversation(program).generate(prompt, count, sampling=options, eos_ids=[]).tokens


def _case(rng: np.random.Generator, vocab: int, tied: bool):
    # Ties: a few distinct values only, so equal logits meet at the top-k and top-p boundaries.
    logits = rng.integers(-4, 5, vocab) * 0.75 if tied else rng.normal(0, 3, vocab)
    history = rng.integers(0, vocab, rng.integers(1, min(2 * vocab, 200) + 2)).tolist()  # repeats included
    return np.asarray(logits, np.float32), history


@pytest.mark.parametrize("tied", [False, True], ids=["distinct", "tied"])
@pytest.mark.parametrize("vocab", [1, 2, 5, 64, 1000, 32000])
def test_each_seed_draws_the_id_numpy_draws_from_transformers_distribution(vocab, tied):
    """One token after a prompt (the history the penalty sees), over the whole grid of options, two
    seeds each: the engine's id is the one numpy's generator of that seed draws from transformers'
    distribution. Top-k keeps every tie of the k-th value, as transformers does; top-p keeps the
    lowest ids of a tie it cuts."""
    rng = np.random.default_rng(vocab + 1000 * tied)
    for options in GRID:
        logits, history = _case(rng, vocab, tied)
        expected = _expected(logits, history, options)
        program = _fixed(logits)
        for seed in (int(rng.integers(0, 2**63)), 7):
            seeded = SamplingOptions(options.temperature, options.top_k, options.top_p,
                                     options.repetition_penalty, seed)
            assert _generate(program, history, 1, seeded) == [_draw(expected, np.random.default_rng(seed))], \
                (options, seed)


def test_a_generation_draws_one_number_a_token_with_the_penalty_over_what_it_generated():
    """Sixty tokens: each drawn with the next of the seed's numbers from the distribution after the
    conversation so far (prompt and generated ids), so a penalized id gets less likely as it recurs."""
    rng = np.random.default_rng(11)
    for options in (SamplingOptions(1.0, 0, 1.0, 1.5), SamplingOptions(0.8, 5, 0.9, 1.3), SamplingOptions(1.2, 0, 0.7, 0.9)):
        logits, history = _case(rng, 12, tied=False)
        numbers = np.random.default_rng(99)
        expected = []
        for _ in range(60):
            expected.append(_draw(_expected(logits, history + expected, options), numbers))
        seeded = SamplingOptions(options.temperature, options.top_k, options.top_p, options.repetition_penalty, 99)
        assert _generate(_fixed(logits), history, 60, seeded) == expected, options


def test_top_p_removes_a_token_exactly_at_the_boundary_and_keeps_one_at_least():
    # Four equal tokens: ascending cumulative 0.25, 0.5, 0.75, 1 (exact in binary); at most 1 - 0.5 goes.
    half = SamplingOptions(temperature=1.0, top_p=0.5, seed=1)
    assert set(_generate(_fixed(np.zeros(4)), [0], 400, half)) == {0, 1}
    assert np.count_nonzero(_transformers(np.zeros(4), [], half)[0]) == 2
    # 1 - top_p rounds to 1: every cumulative probability is at most that, and the most probable stays.
    tiny = SamplingOptions(temperature=1.0, top_p=1e-20, seed=1)
    logits = np.array([0.0, 2.0, 1.0])
    assert list(_transformers(logits, [], tiny)[0]) == [0, 1, 0]
    assert set(_generate(_fixed(logits), [0], 100, tiny)) == {1}


def test_greedy_is_argmax_after_the_penalty_first_of_equal_maxima():
    rng = np.random.default_rng(7)
    for vocab in (1, 3, 50, 5000):
        for penalty in (1.0, 1.5, 0.7):
            logits, history = _case(rng, vocab, tied=True)
            options = SamplingOptions(top_k=3, top_p=0.2, repetition_penalty=penalty)  # greedy ignores both
            penalized, _ = _transformers(logits, history, SamplingOptions(temperature=1.0, repetition_penalty=penalty))
            expected = int(np.argmax(penalized))  # softmax keeps the order, and the first of ties
            assert _generate(_fixed(logits), history, 1, options) == [expected]
    assert _generate(_fixed(np.array([1.0, 3.0, 3.0, 0.0])), [0], 1, SamplingOptions()) == [1]
    # The penalty divides a positive logit and multiplies a negative one: both become less likely.
    assert _generate(_fixed(np.array([2.0, 1.0])), [0, 0], 1, SamplingOptions(repetition_penalty=4.0)) == [1]
    assert _generate(_fixed(np.array([-1.0, -2.0])), [0], 1, SamplingOptions(repetition_penalty=4.0)) == [1]


def test_a_seed_fixes_the_draws_and_another_seed_or_none_changes_them():
    program = _fixed(np.random.default_rng(3).normal(0, 1, 50))

    def draws(seed):
        return _generate(program, [0], 300, SamplingOptions(temperature=1.0, repetition_penalty=1.1, seed=seed))

    first = draws(1234)
    assert draws(1234) == first
    assert draws(1235) != first
    assert draws(None) != draws(None)
    assert len(set(first)) > 10  # they are draws, not one token over and over


def test_draws_follow_the_filtered_distribution():
    """Whatever the generator: the frequencies of 20000 draws from one row fit the distribution."""
    logits = np.array([1.0, 2.5, 0.3, 2.5, -1.0, 1.7, 0.9, 3.0])
    options = SamplingOptions(temperature=0.8, top_k=6, top_p=0.95, seed=5)
    expected = _expected(logits, [], options)
    count = 20000
    observed = np.bincount(_generate(_fixed(logits), [0], count, options), minlength=logits.size)
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
    with pytest.raises(GenerationValueError, match=named):
        _generate(_fixed(np.zeros(3)), [0], 1, options)


def test_options_in_range_pass_and_bad_logits_or_ids_are_refused():
    program = _fixed(np.zeros(3))
    for options in GRID + [SamplingOptions(), SamplingOptions(top_p=1.0, top_k=10**9, seed=0)]:
        assert len(_generate(program, [0], 1, options)) == 1
    for options in (SamplingOptions(), SamplingOptions(temperature=1.0, repetition_penalty=1.2)):
        for logits in (np.array([0.0, np.nan]), np.array([0.0, np.inf]), np.full(3, -np.inf)):
            with pytest.raises(ValueError, match="logit"):
                _generate(_fixed(logits), [0], 1, options)
        for prompt in ([3], [-1]):
            with pytest.raises(ValueError, match="outside the model's vocabulary"):
                _generate(program, prompt, 1, options)
    masked = _fixed(np.array([0.0, -np.inf, 1.0]))  # masked ids are fine, and never drawn
    assert 1 not in _generate(masked, [0], 200, SamplingOptions(temperature=1.0, repetition_penalty=1.2, seed=2))
