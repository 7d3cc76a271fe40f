"""Named sessions on one load of the weights: each session is the program loaded once more (its own
infer request, so its own KV caches or paged blocks; the compiled model and its weights are shared by
every load in the process) with a conversation on it, plus the scratch session anonymous requests
share. Warm resume is the engine's: a session is given the whole conversation and feeds only what it
does not hold."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from ..generation.engine import Conversation, Program
from .protocol import CAPACITY_EXHAUSTED, ProtocolError


@dataclass
class Session:
    program: Program
    conversation: Conversation
    dirty: bool = False  # a generation failed inside the program: the next one starts anew

    def reset(self) -> None:
        # A conversation that holds nothing feeds from position 0, which starts the caches anew.
        self.conversation = Conversation(self.program)
        self.dirty = False

    def resume_reason(self, ids: Sequence[int]) -> str:
        """How the prompt relates to what the session holds (the server logs it)."""
        if self.dirty:
            return "dirty"
        held = self.conversation.tokens
        if not held:
            return "new"
        if list(ids) == held:
            return "equal"
        if len(ids) > len(held) and list(ids[: len(held)]) == held:
            return "exact_prefix"
        return "mismatch"


class SessionTable:
    def __init__(self, pte: Path, data: Optional[Path], max_named: int):
        self._pte, self._data = pte, data
        self.max_named = max_named
        self.scratch = self._new()
        self._named: Dict[str, Session] = {}

    def _new(self) -> Session:
        program = Program.load(self._pte, self._data)
        return Session(program, Conversation(program))

    @property
    def program(self) -> Program:
        return self.scratch.program

    def names(self) -> List[str]:
        return list(self._named)

    def open(self, name: str) -> Session:
        """The named session, admitted if new (idempotent)."""
        session = self._named.get(name)
        if session is None:
            if len(self._named) >= self.max_named:
                raise ProtocolError(f"{len(self._named)} named sessions are open, the most this worker hosts "
                                    f"(--max-sessions {self.max_named}): close one first", CAPACITY_EXHAUSTED)
            session = self._named[name] = self._new()
        return session

    def get(self, name: Optional[str]) -> Session:
        return self.scratch if name is None else self.open(name)

    def reset(self, name: str) -> None:
        if name in self._named:
            self._named[name].reset()

    def close(self, name: str) -> None:
        self._named.pop(name, None)  # its program and conversation are freed with it
