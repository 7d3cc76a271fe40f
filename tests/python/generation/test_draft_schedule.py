"""When speculative decoding drafts (the engine's schedule, through generation/engine.py), read from the
calls a target and a draft program (Python step functions) receive and from the statistics: calls
with drafts keep one width; a drafter is probed (asked for one guess at a plain step) before its drafts
are fed; a draft program is probed after pauses of 1, 4, 16, then 64 plain steps while it misses, and
drafts that never land never reach the target; prompt lookup (free to ask) is probed at every plain
step; after a rejection fewer drafts are asked; a round that kept nothing sends the drafter back to
probing."""

from __future__ import annotations

import numpy as np

from executorch_openvino.generation import Conversation, Program

VOCAB = 1000
PROMPT = [0, 1, 2]


class Table:
    """next token = after(token); every call (tokens, position) recorded."""

    def __init__(self, after, log=None, name=""):
        self.after, self.calls, self.log, self.name = after, [], log, name

    def __call__(self, tokens, position):
        self.calls.append((list(tokens), position))
        if self.log is not None:
            self.log.append((self.name, list(tokens), position))
        rows = np.zeros((len(tokens), VOCAB), np.float32)
        rows[np.arange(len(tokens)), [self.after(t) % VOCAB for t in tokens]] = 1.0
        return rows


def _run(target_after, draft_after, count, max_draft, prompt=PROMPT, lookup=False):
    log = []
    target = Table(target_after, log, "target")
    draft = Table(draft_after, log, "draft") if draft_after is not None else None
    result = Conversation(Program.from_step(target, VOCAB, 4096)).generate(
        prompt, count, eos_ids=[], lookup=lookup, max_draft=max_draft,
        draft=Program.from_step(draft, VOCAB, 4096, all_logits=False) if draft else None)
    return result, log


def _probes(log, prompt=PROMPT):
    """The plain decode steps (0: the first after the prompt) at which the draft program was asked."""
    return [position + len(tokens) - 1 - len(prompt) for name, tokens, position in log if name == "draft"]


def test_a_draft_program_that_misses_is_probed_after_longer_pauses_and_never_fed():
    result, log = _run(lambda t: t + 1, lambda t: t + 2, 300, max_draft=4)
    assert result.tokens == [(2 + i) % VOCAB for i in range(1, 301)]  # the target's own ids
    stats = result.statistics
    assert stats.drafted == 0 and stats.calls == 299  # never fed: plain decoding's calls
    assert all(len(tokens) == 1 for name, tokens, _ in log[1:] if name == "target")
    probes = _probes(log)
    gaps = [b - a - 1 for a, b in zip(probes, probes[1:])]
    assert probes[0] == 0 and gaps[:6] == [0, 3, 15, 63, 63, 63], probes


def test_a_draft_program_that_lands_is_fed_at_one_width_and_all_kept():
    result, log = _run(lambda t: t + 1, lambda t: t + 1, 60, max_draft=4)
    stats = result.statistics
    assert result.tokens == [(2 + i) % VOCAB for i in range(1, 61)]
    widths = [len(tokens) for name, tokens, _ in log[1:] if name == "target"]
    # The probe (a plain step), then every call the last token and 4 drafts, but near the end.
    assert widths[0] == 1 and set(widths[1:-1]) == {5}, widths
    assert stats.drafted == stats.accepted == 4 * (len(widths) - 1) - (5 - widths[-1]) and stats.calls == len(widths)


def _rounds(log):
    """[(drafts asked of the draft program, the target call that followed)] for each drafted call."""
    rounds, asked = [], 0
    for name, tokens, position in log[1:]:
        if name == "draft":
            asked += 1
        else:
            if len(tokens) > 1:
                rounds.append((asked, tokens, position))
            asked = 0
    return rounds


def test_after_a_rejection_fewer_drafts_are_asked_and_after_full_acceptance_one_more():
    """The target counts up; the draft counts up but jumps after every id ending in 7: each round's
    drafts are the draft's greedy ids, asked as many as the last round kept (one at least), one more
    after a round that kept all (up to max_draft), and padded to the width of max_draft."""
    max_draft = 5
    result, log = _run(lambda t: t + 1, lambda t: t + 1 if t % 10 != 7 else t + 5, 200, max_draft=max_draft)
    rounds = _rounds(log)
    assert len(rounds) > 10
    limit = max_draft
    for index, (asked, tokens, position) in enumerate(rounds):
        drafts = tokens[1:]
        assert len(drafts) == max_draft or position + max_draft >= len(PROMPT) + 200  # one width
        if index:  # after a probe that landed, the limit stays what it was
            assert asked == min(limit, len(drafts)), (index, asked, limit)
        proposed = drafts[:asked]
        assert drafts == proposed + [proposed[-1]] * (len(drafts) - asked)
        kept = 0
        while kept < len(proposed) and proposed[kept] == (tokens[0] + 1 + kept) % VOCAB:
            kept += 1
        limit = min(max_draft, asked + 1) if kept >= asked else max(1, kept)
    stats = result.statistics
    assert 0 < stats.accepted < stats.drafted


def test_a_free_drafter_whose_guesses_never_land_is_never_fed():
    """Prompt lookup, probed at every plain step, always guesses wrong here (each id the target chooses,
    t + 10, appeared in the prompt followed by t + 1): no call carries drafts, so they cost no call."""
    steps = 64
    prompt = [t for i in range(steps + 1) for t in (13 + 10 * i, 14 + 10 * i)] + [3]
    result, log = _run(lambda t: t + 10, None, steps, max_draft=4, prompt=prompt, lookup=True)
    assert result.tokens == [(3 + 10 * i) % VOCAB for i in range(1, steps + 1)]
    assert result.statistics.drafted == 0 and result.statistics.calls == steps - 1
    assert all(len(tokens) == 1 for _, tokens, _ in log[1:])


def test_a_free_drafter_is_fed_once_its_guess_lands_and_probed_again_after_a_round_that_kept_nothing():
    """Prompt lookup over a target that repeats the prompt's cycle 1 2 3 4 and, at a few positions,
    leaves it: the first step is a probe, drafts follow from the next, a round that kept nothing is
    followed by a plain step (a probe), and drafts resume once a guess lands."""
    leave = {20, 27, 34}

    def step(tokens, position):
        rows = np.zeros((len(tokens), VOCAB), np.float32)
        for i, token in enumerate(tokens):
            rows[i, 9 if position + i in leave else (token % 4) + 1] = 1.0
        return rows

    calls = []
    recorded = lambda tokens, position: (calls.append((list(tokens), position)), step(tokens, position))[1]  # noqa: E731
    result = Conversation(Program.from_step(recorded, VOCAB, 4096)).generate(
        [1, 2, 3, 4, 1, 2, 3, 4], 40, eos_ids=[], lookup=True, max_draft=3)
    widths = [len(tokens) for tokens, _ in calls[1:]]
    assert widths[0] == 1 and widths[1] == 4, widths
    full = [1, 2, 3, 4, 1, 2, 3, 4] + result.tokens
    rejected = [i for i, (tokens, position) in enumerate(calls[1:], 1)
                if len(tokens) > 1 and tokens[1] != full[position + 1]]
    assert rejected, "a round kept nothing"
    for i in rejected:
        if i + 1 < len(calls):
            assert len(calls[i + 1][0]) == 1, (i, calls[i:i + 3])  # probed again, nothing fed
    assert any(len(tokens) > 1 for tokens, _ in calls[rejected[-1] + 2:])  # trusted again
