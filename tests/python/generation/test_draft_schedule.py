"""When speculative decoding drafts (generation/draft_schedule.py), without a model: calls keep one
width; a drafter is probed (asked for one guess at a plain step) before its drafts are fed, at every
plain step when asking is free, after longer pauses while it misses when asking costs time."""

from __future__ import annotations

from executorch_openvino.generation.draft_schedule import LONGEST_PAUSE, DraftSchedule


class _Fixed:
    """Proposes `proposal` (cut to the limit asked) and records each limit it was asked for."""

    def __init__(self, proposal, free):
        self.proposal, self.free_to_ask, self.asked = proposal, free, []

    def draft(self, history, limit):
        self.asked.append(limit)
        return self.proposal[:limit]


def test_drafts_are_padded_to_one_width_and_fewer_are_asked_after_a_rejection():
    drafter = _Fixed([7, 8], free=False)
    schedule = DraftSchedule(drafter, max_draft=5)
    assert schedule.drafts([1, 2], 5) == ([], 0)  # probed first: one guess, nothing fed
    schedule.chosen(7)  # the guess landed: trusted
    assert schedule.drafts([1, 2], 5) == ([7, 8, 8, 8, 8], 2)  # the width stays 5 whatever was proposed
    schedule.kept(2, 1)  # one kept: one asked next time, still fed at the full width
    assert schedule.drafts([1, 2], 5) == ([7, 7, 7, 7, 7], 1) and drafter.asked == [1, 5, 1]
    schedule.kept(1, 3)  # the padding landed too: a full acceptance, one more asked
    schedule.drafts([1, 2], 5)
    assert drafter.asked[-1] == 2
    assert schedule.drafts([1, 2], 3) == ([7, 8, 8], 2)  # near the end the width is what is left
    assert schedule.drafts([1, 2], 0) == ([], 0)


def _probes(schedule, steps, chosen):
    """Runs `steps` plain steps choosing `chosen`; the steps at which the drafter was asked, and
    whether anything was ever fed."""
    asked, fed = [], False
    for step in range(steps):
        drafts, _ = schedule.drafts([1], 4)
        fed = fed or bool(drafts)
        if schedule.probed:
            asked.append(step)
        schedule.chosen(chosen)
    return asked, fed


def test_a_drafter_that_costs_time_is_probed_after_longer_pauses_while_it_misses_and_never_fed():
    asked, fed = _probes(DraftSchedule(_Fixed([7], free=False), max_draft=4), 300, chosen=5)
    assert not fed  # its guesses never landed: the target never carried a draft
    gaps = [b - a - 1 for a, b in zip(asked, asked[1:])]
    assert asked[0] == 0 and gaps[:6] == [0, 3, 15, LONGEST_PAUSE - 1, LONGEST_PAUSE - 1, LONGEST_PAUSE - 1]


def test_after_a_round_that_kept_nothing_the_drafter_is_probed_again_and_trusted_once_it_lands():
    schedule = DraftSchedule(_Fixed([7], free=False), max_draft=4)
    schedule.drafts([1], 4)
    schedule.chosen(7)  # the first probe lands
    assert schedule.drafts([1], 4)[0]
    schedule.kept(1, 0)  # a round that kept nothing: probed at the next plain step
    assert _probes(schedule, 1, chosen=9) == ([0], False)  # that probe misses: 3 steps, then a probe
    assert _probes(schedule, 4, chosen=7) == ([3], False)  # which lands
    assert schedule.drafts([1], 4)[0]  # trusted again
    schedule.kept(1, 0)  # kept nothing again: the pause goes on growing (16)
    assert _probes(schedule, 16, chosen=9) == ([15], False)
    assert _probes(schedule, 64, chosen=7) == ([63], False)
    assert schedule.drafts([1], 4)[0]
    schedule.kept(1, 1)  # a round that kept a draft starts the count again
    assert schedule.drafts([1], 4)[0]
    schedule.kept(1, 0)
    assert _probes(schedule, 1, chosen=9) == ([0], False)


def test_a_free_drafter_drafts_only_after_a_guess_lands_and_is_probed_again_after_a_miss():
    drafter = _Fixed([7, 8, 9], free=True)
    schedule = DraftSchedule(drafter, max_draft=3)
    for chosen in (5, 6, 4):  # probed: asked for one guess a step, nothing fed
        assert schedule.drafts([1], 3) == ([], 0) and drafter.asked[-1] == 1
        schedule.chosen(chosen)
    assert schedule.drafts([1], 3) == ([], 0)
    schedule.chosen(7)  # the guess was the model's choice: trusted from the next step
    assert schedule.drafts([1], 3) == ([7, 8, 9], 3)
    schedule.kept(3, 2)  # some kept: drafting goes on
    assert schedule.drafts([1], 3) == ([7, 8, 8], 2)
    schedule.kept(2, 0)  # nothing kept: probed again, at once
    assert schedule.drafts([1], 3) == ([], 0)
    schedule.chosen(7)
    assert schedule.drafts([1], 3)[1] == 1  # after a rejection it is asked for one, fed at width 3
