"""Drafts for speculative decoding found in the conversation itself (prompt lookup), no second model.

Generated text often repeats what came before (code being edited, a document being quoted, names):
when the last few tokens occurred earlier, the tokens that followed them then are a good guess of
what follows now. The model checks the guess in one call over all of its tokens and keeps the
longest correct start, so a draft costs little when wrong and saves steps when right.

`PromptLookup.draft` takes the longest n-gram (max_ngram down to min_ngram) ending the history that
occurred earlier, and drafts up to max_draft tokens that followed its most recent earlier
occurrence; with `chain` (the default, and what the C++ PromptLookup always does), a continuation that
runs into the end of the history is looked up again from its own end, so a short cycle drafts several
turns of itself (speculative calls have one width: draft_schedule.py). An index of n-gram -> last position is kept across calls and grows with the history, so
a draft costs time in the tokens added since the last call, not in the length of the conversation;
a history that does not extend the last one (a new conversation, rejected tokens taken back) is
indexed anew.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np


class PromptLookup:
    """Drafts from earlier occurrences of the history's last max_ngram .. min_ngram tokens."""

    def __init__(self, max_ngram: int = 3, min_ngram: int = 1, max_draft: int = 5, chain: bool = True):
        if not 1 <= min_ngram <= max_ngram:
            raise ValueError(f"n-gram lengths must satisfy 1 <= min_ngram <= max_ngram, not {min_ngram}, {max_ngram}")
        if max_draft < 1:
            raise ValueError(f"max_draft must be 1 or more, not {max_draft}")
        self.max_ngram, self.min_ngram, self.max_draft = max_ngram, min_ngram, max_draft
        # A continuation cut short by the end of the history is looked up again from its own end
        # (a cycle shorter than max_draft drafts several turns of itself).
        self.chain = chain
        self._tokens: List[int] = []
        # Each n-gram that some token follows -> where it last started. The history's final n-grams
        # are not in it until a token follows them, so a lookup never finds the suffix itself.
        self._last_start: Dict[Tuple[int, ...], int] = {}

    def draft(self, history: Sequence[int], limit: Optional[int] = None) -> List[int]:
        """Up to max_draft (or `limit`, if fewer) tokens guessed to follow `history`; [] when none of
        its final n-grams occurred before."""
        tokens = history.tolist() if isinstance(history, np.ndarray) else list(history)
        if tokens[:len(self._tokens)] != self._tokens:
            self._tokens, self._last_start = [], {}
        self._index(tokens)
        most = self.max_draft if limit is None else min(limit, self.max_draft)
        drafts: List[int] = []
        while len(drafts) < most:
            found = self._continuation(tokens, drafts, most - len(drafts))
            drafts += found
            if not found or not self.chain:
                break
        return drafts

    def _continuation(self, tokens: List[int], drafts: List[int], room: int) -> List[int]:
        """What followed, in `tokens`, the longest final n-gram of tokens + drafts found earlier."""
        end = len(tokens) + len(drafts)
        for n in range(min(self.max_ngram, end - 1), self.min_ngram - 1, -1):
            tail = tuple(tokens[end - n:] + drafts) if n > len(drafts) else tuple(drafts[len(drafts) - n:])
            start = self._last_start.get(tail)
            if start is not None:
                return tokens[start + n:start + n + room]
        return []

    def _index(self, tokens: List[int]) -> None:
        """Adds the n-grams that end before the last token and are not indexed yet (later ones win)."""
        for last in range(max(len(self._tokens) - 1, 0), len(tokens) - 1):
            for n in range(self.min_ngram, min(self.max_ngram, last + 1) + 1):
                self._last_start[tuple(tokens[last - n + 1:last + 1])] = last - n + 1
        self._tokens = tokens
