"""Stopping at stop strings in text that streams out piece by piece.

A stop string can arrive split over pieces ("<|e", "nd|>"), so text that could be its beginning is
held back until the next piece settles it; only that much is held (the longest tail of the text that
is the beginning of some stop string), so text reaches the user as soon as it cannot be part of one.
Generation stops at the first stop string to be completed; what precedes it is emitted, it and what
follows are not. The result does not depend on how the text is cut into pieces: a piece holding
several stop strings stops at the one that ends first, as it would have arriving character by
character.
"""

from __future__ import annotations

from typing import Sequence, Tuple


class StopStrings:
    """Watches streamed text for any of `stop`; once one is found, it has stopped for good."""

    def __init__(self, stop: Sequence[str]):
        if isinstance(stop, str):  # a lone string would be taken as its characters
            raise TypeError("stop must be a sequence of strings, not a string")
        self.stop = tuple(stop)
        if any(not isinstance(s, str) or not s for s in self.stop):
            raise ValueError(f"stop strings must be non-empty strings: {self.stop!r}")
        self._held = ""
        self._stopped = False

    def feed(self, piece: str) -> Tuple[str, bool]:
        """(the text that can be emitted now, whether a stop string has been found)."""
        if self._stopped:
            return "", True
        text = self._held + piece
        # The stop string that ends first (the longer one if two end together).
        found = [(start + len(s), start) for s in self.stop if (start := text.find(s)) >= 0]
        if found:
            self._held, self._stopped = "", True
            return text[:min(found)[1]], True
        held = self._beginning_of_a_stop(text)
        self._held = text[len(text) - held:]
        return text[:len(text) - held], False

    def flush(self) -> str:
        """What is held back, at the end of the stream ("" once stopped)."""
        held, self._held = self._held, ""
        return held

    def _beginning_of_a_stop(self, text: str) -> int:
        """The length of the longest tail of `text` that begins some stop string (shorter than it)."""
        longest = 0
        for s in self.stop:
            for length in range(min(len(s) - 1, len(text)), longest, -1):
                if text.endswith(s[:length]):
                    longest = length
                    break
        return longest
