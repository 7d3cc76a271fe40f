"""When speculative decoding drafts (generation/draft_schedule.py), without a model: calls keep one
width, a free drafter is watched until a guess lands, any other pauses longer after each round that
kept nothing."""

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
    assert schedule.drafts([1, 2], 5) == ([7, 8, 8, 8, 8], 2)  # the width stays 5 whatever was proposed
    schedule.kept(2, 1)  # one kept: one asked next time, still fed at the full width
    assert schedule.drafts([1, 2], 5) == ([7, 7, 7, 7, 7], 1) and drafter.asked == [5, 1]
    schedule.kept(1, 3)  # the padding landed too: a full acceptance, one more asked
    schedule.drafts([1, 2], 5)
    assert drafter.asked[-1] == 2
    assert schedule.drafts([1, 2], 3) == ([7, 8, 8], 2)  # near the end the width is what is left
    assert schedule.drafts([1, 2], 0) == ([], 0)


def test_a_drafter_that_costs_time_pauses_longer_after_each_round_that_kept_nothing():
    schedule = DraftSchedule(_Fixed([7], free=False), max_draft=4)
    rounds, expected_gaps = [], [1, 4, 16, LONGEST_PAUSE, LONGEST_PAUSE]
    for step in range(300):
        drafts, _ = schedule.drafts([1], 4)
        if drafts:
            rounds.append(step)
            schedule.kept(1, 0)
    assert [b - a - 1 for a, b in zip(rounds, rounds[1:])][:5] == expected_gaps


def test_a_free_drafter_drafts_only_after_a_guess_lands_and_is_watched_again_after_a_miss():
    drafter = _Fixed([7, 8, 9], free=True)
    schedule = DraftSchedule(drafter, max_draft=3)
    for chosen in (5, 6, 4):  # watched: asked for one guess a step, nothing fed
        assert schedule.drafts([1], 3) == ([], 0) and drafter.asked[-1] == 1
        schedule.chosen(chosen)
    assert schedule.drafts([1], 3) == ([], 0)
    schedule.chosen(7)  # the guess was the model's choice: trusted from the next step
    assert schedule.drafts([1], 3) == ([7, 8, 9], 3)
    schedule.kept(3, 2)  # some kept: drafting goes on
    assert schedule.drafts([1], 3) == ([7, 8, 8], 2)
    schedule.kept(2, 0)  # nothing kept: watched again
    assert schedule.drafts([1], 3) == ([], 0)
    schedule.chosen(7)
    assert schedule.drafts([1], 3)[1] == 1  # after a rejection it is asked for one, fed at width 3
