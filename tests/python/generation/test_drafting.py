"""Prompt-lookup drafts (generation/drafting.py) equal a brute-force search of the history, whether
each history is new, grows token by token or is cut back, and stay fast over thousands of tokens."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest

from executorch_openvino.generation import PromptLookup


def _brute_force(history, max_ngram, min_ngram, max_draft):
    """What follows the most recent earlier occurrence of the longest final n-gram that has one."""
    for n in range(min(max_ngram, len(history) - 1), min_ngram - 1, -1):
        suffix = history[len(history) - n:]
        for start in range(len(history) - n - 1, -1, -1):
            if history[start:start + n] == suffix:
                return history[start + n:start + n + max_draft]
    return []


def _brute_force_chained(history, max_ngram, min_ngram, max_draft):
    """The same, looked up again from the end of history + drafts while a continuation stops at the
    history's end: n-grams of history + drafts, matched where a token of the history follows them."""
    drafts = []
    while len(drafts) < max_draft:
        joined = history + drafts
        found = []
        for n in range(min(max_ngram, len(history) - 1), min_ngram - 1, -1):
            suffix = joined[len(joined) - n:]
            start = next((s for s in range(len(history) - n - 1, -1, -1) if history[s:s + n] == suffix), None)
            if start is not None:
                found = history[start + n:start + n + max_draft - len(drafts)]
                break
        if not found:
            break
        drafts += found
    return drafts


SETTINGS = [(3, 1, 5), (1, 1, 1), (4, 2, 8), (2, 2, 3)]


@pytest.mark.parametrize("max_ngram, min_ngram, max_draft", SETTINGS)
def test_drafts_equal_brute_force_on_random_histories(max_ngram, min_ngram, max_draft):
    generator = random.Random(max_ngram * 10 + min_ngram)
    found = 0
    for _ in range(400):
        alphabet = generator.randint(1, 12)  # small ones repeat n-grams often, large ones seldom
        history = [generator.randrange(alphabet) for _ in range(generator.randint(0, 60))]
        expected = _brute_force(history, max_ngram, min_ngram, max_draft)
        assert PromptLookup(max_ngram, min_ngram, max_draft, chain=False).draft(history) == expected, history
        found += bool(expected)
    assert 50 < found < 380  # drafts and no drafts both met


@pytest.mark.parametrize("max_ngram, min_ngram, max_draft", SETTINGS)
def test_chained_drafts_equal_brute_force_and_extend_the_plain_ones(max_ngram, min_ngram, max_draft):
    generator = random.Random(max_ngram * 10 + min_ngram + 5)
    longer = 0
    for _ in range(400):
        alphabet = generator.randint(1, 12)
        history = [generator.randrange(alphabet) for _ in range(generator.randint(0, 60))]
        chained = PromptLookup(max_ngram, min_ngram, max_draft).draft(history)  # chain: the default
        assert chained == _brute_force_chained(history, max_ngram, min_ngram, max_draft), history
        plain = _brute_force(history, max_ngram, min_ngram, max_draft)
        assert chained[:len(plain)] == plain
        longer += len(chained) > len(plain)
    assert longer > 20 or max_draft == 1  # continuations cut at the history's end were extended


def test_a_growing_history_cut_back_at_times_drafts_as_a_fresh_one():
    generator = random.Random(1)
    lookup = PromptLookup(chain=False)
    history: list = []
    for step in range(3000):
        if generator.random() < 0.03:  # rejected draft tokens taken back, or a new conversation
            del history[generator.randint(0, len(history)):]
        history.extend(generator.randrange(6) for _ in range(generator.randint(1, 4)))
        assert lookup.draft(history) == _brute_force(history, 3, 1, 5), step
    assert lookup.draft(np.array(history)) == _brute_force(history, 3, 1, 5)  # numpy histories too


def test_the_examples_by_hand():
    lookup = PromptLookup(max_ngram=2, min_ngram=1, max_draft=3, chain=False)
    assert lookup.draft([]) == [] and lookup.draft([7]) == []
    assert lookup.draft([1, 2, 3, 9, 1, 2]) == [3, 9, 1]  # "1 2" occurred; what followed
    assert lookup.draft([1, 2, 3, 4, 2, 5, 2]) == [5, 2]  # the latest "2", cut at the end of history
    assert lookup.draft([1, 1, 1]) == [1]  # overlapping the suffix, not the suffix itself
    assert lookup.draft([4, 5, 6]) == []
    assert PromptLookup(3, 2, 5).draft([1, 2, 7, 2]) == []  # no 2- or 3-gram repeats; 1-grams not asked
    # "1 2" is followed by 3 1 2, the end of the history; looked up again from there: 3 1
    assert PromptLookup(3, 1, 5).draft([1, 2, 3, 1, 2]) == [3, 1, 2, 3, 1]  # chained by default, as in C++
    assert PromptLookup(3, 1, 5, chain=False).draft([1, 2, 3, 1, 2]) == [3, 1, 2]


def test_settings_out_of_range_are_refused():
    for max_ngram, min_ngram, max_draft in ((0, 0, 5), (2, 3, 5), (3, 1, 0)):
        with pytest.raises(ValueError):
            PromptLookup(max_ngram, min_ngram, max_draft)


def test_drafting_along_thousands_of_tokens_is_fast():
    history = list(range(6000))  # nothing repeats: a search would scan the whole history every time
    lookup = PromptLookup()
    started = time.perf_counter()
    for length in range(1, len(history) + 1):
        assert lookup.draft(history[:length]) == []
    # Searching the history anew at each token (_brute_force) takes about 4 s here; the index, 0.1 s.
    assert time.perf_counter() - started < 1.5
