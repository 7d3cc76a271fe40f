"""When speculative decoding drafts, and how many tokens a call carries (decoding.generate asks).

What decides it, measured at SmolLM2-135M's shape on 2 cores (bench/results/speculative-*.md): a
call of 1 + 5 tokens costs about 1.2 plain steps, going back after a rejection about 0.4 of one
(nothing with paged attention), and a call whose token count differs from the previous call's about
0.45 more, because OpenVINO prepares its graph anew for the new shapes. A failed round thus costs the
target about two plain steps' worth of calls, a failed guess at a plain step none. Hence:

- drafts go in calls of one width, max_draft (the drafter's last proposal repeated up to it), so
  calls keep their shapes while drafting; the drafter is asked for fewer after a rejection (one more
  after a round wholly accepted, down to the number kept), which only matters to a drafter whose
  drafts cost time (a draft program);
- a drafter is probed before it is trusted, at the start and after each miss: at a plain step it is
  asked for one guess of the model's next token, and its drafts are fed from the next step only if
  that guess is the token the model then chooses. A probe costs the target nothing: the call is the
  plain step's own. Drafts that never land therefore never reach the target;
- a drafter that costs nothing to ask (`free_to_ask`, as prompt lookup) is probed at every plain step
  until a guess lands; any other (a draft program, whose guess costs it a call to catch up) is probed
  after 1, 4, 16, then every 64 plain steps while it keeps missing (a miss: a wrong or missing guess,
  or a round that kept no draft; a round that kept one starts the count again).
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

LONGEST_PAUSE = 64


class DraftSchedule:
    def __init__(self, drafter, max_draft: int):
        self.drafter, self.max_draft = drafter, max_draft
        self.free = bool(getattr(drafter, "free_to_ask", False))
        self.limit = max_draft  # drafts asked of the drafter
        self.probing = True  # its drafts wait for a guess that lands
        self.probed = False  # whether this plain step asked for a guess
        self.guess: Optional[int] = None  # the drafter's guess of the model's next token
        self.pause = 0  # plain steps from the last miss to the next probe (0 before any miss)
        self.waiting = 0  # plain steps left before that probe

    def drafts(self, conversation: Sequence[int], span: int) -> Tuple[List[int], int]:
        """The tokens to feed after the last one (none, or `span` of them), and how many of those
        the drafter proposed (the rest repeat its last)."""
        self.guess, self.probed = None, False
        if span <= 0:
            return [], 0
        if self.waiting > 0:
            self.waiting -= 1
            return [], 0
        if self.probing:
            self.probed = True
            self.guess = next(iter(self.drafter.draft(conversation, 1)), None)
            return [], 0
        proposed = list(self.drafter.draft(conversation, min(self.limit, span)))[:span]
        return (proposed + proposed[-1:] * (span - len(proposed)), len(proposed)) if proposed else ([], 0)

    def chosen(self, token: int) -> None:
        """The model chose `token` after a call without drafts."""
        if not self.probed:
            return
        if self.guess is not None and self.guess == token:
            self.probing = False
        else:
            self._missed()

    def kept(self, proposed: int, accepted: int) -> None:
        """A call with drafts kept `accepted` of them (`proposed` by the drafter)."""
        self.limit = min(self.max_draft, self.limit + 1) if accepted >= proposed else max(1, accepted)
        if accepted:
            self.pause = 0
        else:
            self.probing = True
            self._missed()

    def _missed(self) -> None:
        """The next probe comes after a longer pause, unless asking costs nothing."""
        if not self.free:
            self.pause = min(4 * self.pause or 1, LONGEST_PAUSE)
            self.waiting = self.pause - 1  # the probe is the pause's last plain step
