"""Prompt-lookup drafts (the engine's lookup=True, through generation/engine.py), read from the calls
the target model receives: every call that carries drafts carries what a brute-force search of the
conversation so far proposes (what followed the most recent earlier occurrence of its longest final
n-gram of 3 to 1 tokens, looked up again from the proposal's end while a continuation stops at the
conversation's end), cut to the number asked and padded to the call's width with its last; the ids
are plain greedy decoding's; and drafting along thousands of tokens stays fast."""

from __future__ import annotations

import random
import time

import numpy as np

from executorch_openvino.generation import Conversation, Program

MAX_NGRAM = 3


def _brute_force_chained(history, max_draft, max_ngram=MAX_NGRAM):
    """n-grams of history + drafts, matched in the history where a token of the history follows them."""
    drafts = []
    while len(drafts) < max_draft:
        joined = history + drafts
        found = []
        for n in range(min(max_ngram, len(history) - 1), 0, -1):
            suffix = joined[len(joined) - n:]
            start = next((s for s in range(len(history) - n - 1, -1, -1) if history[s:s + n] == suffix), None)
            if start is not None:
                found = history[start + n:start + n + max_draft - len(drafts)]
                break
        if not found:
            break
        drafts += found
    return drafts


class Table:
    """A model whose next token is table[token] (a random map: greedy decoding falls into cycles, so
    lookups land, and leaves them, so some are rejected), every call recorded."""

    def __init__(self, table):
        self.table, self.calls = np.asarray(table), []

    def __call__(self, tokens, position):
        self.calls.append((list(tokens), position))
        rows = np.zeros((len(tokens), self.table.size), np.float32)
        rows[np.arange(len(tokens)), self.table[list(tokens)]] = 1.0
        return rows


def _run(table, prompt, count, max_draft, lookup=True):
    model = Table(table)
    program = Program.from_step(model, len(table), context=8192)
    result = Conversation(program).generate(prompt, count, eos_ids=[], lookup=lookup, max_draft=max_draft)
    return result, model.calls[1:]  # the decode calls (the prompt's first)


def test_the_drafts_fed_are_the_brute_force_lookups_and_the_ids_greedys():
    generator = random.Random(5)
    drafted_calls = accepted = 0
    for case in range(60):
        vocab = generator.randint(2, 40)
        table = [generator.randrange(vocab) for _ in range(vocab)]
        prompt = [generator.randrange(vocab) for _ in range(generator.randint(1, 40))]
        max_draft = generator.randint(1, 6)
        count = generator.randint(1, 60)
        plain, _ = _run(table, prompt, count, max_draft, lookup=False)
        result, calls = _run(table, prompt, count, max_draft)
        assert result.tokens == plain.tokens, case
        full = prompt + result.tokens
        for tokens, position in calls:
            assert tokens[0] == full[position], case  # the last token chosen, at its position
            if len(tokens) == 1:
                continue
            drafted_calls += 1
            span = len(tokens) - 1
            assert span == min(max_draft, len(prompt) + count - position - 1), case  # one width, to the end
            proposal = _brute_force_chained(full[:position + 1], max_draft)
            assert any(tokens[1:] == proposal[:n] + [proposal[n - 1]] * (span - n)
                       for n in range(1, min(len(proposal), span) + 1)), (case, tokens, proposal)
        accepted += result.statistics.accepted
    assert drafted_calls > 100 and accepted > 100  # drafts were fed and kept


def test_the_examples_by_hand():
    """A conversation 1 2 3 1 2 over a model that continues with 3 1 2 3 ...: the first decode step is
    plain (the lookup's guess, 1 after 1 2 3 1 2 3, is probed and lands); then "2 3 1" was followed by
    2 3 1, the end of the conversation; looked up again from there, 2 3: five drafts, all kept."""
    table = [0, 2, 3, 1]  # 1 -> 2 -> 3 -> 1
    result, calls = _run(table, [1, 2, 3, 1, 2], 12, max_draft=5)
    assert result.tokens == [3, 1, 2] * 4
    assert calls[:2] == [([3], 5), ([1, 2, 3, 1, 2, 3], 6)]
    assert result.statistics.drafted == result.statistics.accepted > 0
    # Nothing repeats: no drafts, every call plain.
    result, calls = _run([1, 2, 3, 4, 5, 6, 7, 0], [4, 5, 6], 4, max_draft=5)
    assert all(len(tokens) == 1 for tokens, _ in calls) and result.statistics.drafted == 0


def test_drafting_along_thousands_of_tokens_is_fast():
    """Nothing repeats: each lookup scans the whole conversation, 6000 tokens long at the end."""
    table = [(t + 1) % 8000 for t in range(8000)]

    def timed(lookup):
        started = time.perf_counter()
        result, _ = _run(table, [0], 6000, max_draft=5, lookup=lookup)
        assert result.tokens == list(range(1, 6001)) and result.statistics.drafted == 0
        return time.perf_counter() - started

    plain, lookup = timed(False), timed(True)
    assert lookup < 2 * plain + 0.5, (plain, lookup)
