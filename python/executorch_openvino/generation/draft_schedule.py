"""When speculative decoding drafts, and how many tokens a call carries (decoding.generate asks).

What decides it, measured at SmolLM2-135M's shape on 2 cores (bench/results/speculative-*.md): a
call of 1 + 5 tokens costs about 1.2 plain steps, going back after a rejection about 0.4 of one,
and a call whose token count differs from the previous call's about 0.45 more, because OpenVINO
prepares its graph anew for the new shapes. Hence:

- drafts go in calls of one width, max_draft (the drafter's last proposal repeated up to it), so
  calls keep their shapes while drafting; the drafter is asked for fewer after a rejection (one more
  after a round wholly accepted, down to the number kept), which only matters to a drafter whose
  drafts cost time (a draft program);
- a drafter that costs nothing to ask (`free_to_ask`, as prompt lookup) is watched before it is
  trusted and after a round that kept nothing: asked at each plain step, and trusted again once its
  first guess is the token the model then chooses; drafts that never land then cost nothing;
- any other drafter pauses 1, 4, 16, then 64 steps after a round that kept nothing.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

LONGEST_PAUSE = 64


class DraftSchedule:
    def __init__(self, drafter, max_draft: int):
        self.drafter, self.max_draft = drafter, max_draft
        self.free = bool(getattr(drafter, "free_to_ask", False))
        self.limit = max_draft  # drafts asked of the drafter
        self.watching = self.free
        self.guess: Optional[int] = None  # the watched drafter's guess of the model's next token
        self.pause = self.paused = 0

    def drafts(self, conversation: Sequence[int], span: int) -> Tuple[List[int], int]:
        """The tokens to feed after the last one (none, or `span` of them), and how many of those
        the drafter proposed (the rest repeat its last)."""
        self.guess = None
        if span <= 0:
            return [], 0
        if self.paused > 0:
            self.paused -= 1
            return [], 0
        if self.watching:
            self.guess = next(iter(self.drafter.draft(conversation, 1)), None)
            return [], 0
        proposed = list(self.drafter.draft(conversation, min(self.limit, span)))[:span]
        return (proposed + proposed[-1:] * (span - len(proposed)), len(proposed)) if proposed else ([], 0)

    def chosen(self, token: int) -> None:
        """The model chose `token` after a call without drafts."""
        if self.guess is not None and self.guess == token:
            self.watching = False

    def kept(self, proposed: int, accepted: int) -> None:
        """A call with drafts kept `accepted` of them (`proposed` by the drafter)."""
        self.limit = min(self.max_draft, self.limit + 1) if accepted >= proposed else max(1, accepted)
        if accepted:
            self.pause = 0
        elif self.free:
            self.watching = True
        else:
            self.pause = self.paused = min(4 * self.pause or 1, LONGEST_PAUSE)
