"""Named sessions on one load of the weights: each session is the program loaded once more (its own
infer request, so its own KV caches or paged blocks; the compiled model and its weights are shared by
every load in the process) with a conversation on it, plus the scratch session anonymous requests
share. Warm resume is the engine's: a session is given the whole conversation and feeds only what it
does not hold.

With a state folder, named sessions outlive the process: a session's state (its tokens and caches) is
written to the folder when it closes and when the worker stops, and read back when a session of that
name opens again (docs/serving.md#state-files)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence
from urllib.parse import quote

from ..generation.engine import Conversation, Program
from .protocol import CAPACITY_EXHAUSTED, ProtocolError

log = logging.getLogger("executorch_openvino.worker")


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
    def __init__(self, pte: Path, data: Optional[Path], max_named: int, state_dir: Optional[Path] = None):
        self._pte, self._data = pte, data
        self.max_named = max_named
        self.state_dir = state_dir
        if state_dir is not None:
            state_dir.mkdir(parents=True, exist_ok=True)
        self.scratch = self._new()
        self._named: Dict[str, Session] = {}

    def state_file(self, name: str) -> Optional[Path]:
        # Any session id (the server allows printable ASCII) as one file name.
        return None if self.state_dir is None else self.state_dir / (quote(name, safe="") + ".state")

    def _persist(self, name: str, session: Session) -> None:
        path = self.state_file(name)
        if path is None or session.dirty or not session.conversation.tokens:
            return
        try:
            session.conversation.write_state(path)
        except Exception as failure:  # noqa: BLE001  (the session still closes; the reason is logged)
            log.warning("session %r: its state was not written: %s", name, failure)

    def _resume(self, name: str, session: Session) -> None:
        path = self.state_file(name)
        if path is None or not path.is_file():
            return
        try:
            session.conversation.read_state(path)
            log.info("session %r: resumed from %s (%d tokens)", name, path, len(session.conversation.tokens))
        except Exception as failure:  # noqa: BLE001  (a file that does not fit starts the session anew)
            log.warning("session %r: %s was not used: %s", name, path, failure)

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
            self._resume(name, session)
        return session

    def get(self, name: Optional[str]) -> Session:
        return self.scratch if name is None else self.open(name)

    def reset(self, name: str) -> None:
        if name in self._named:
            self._named[name].reset()
        path = self.state_file(name)
        if path is not None:
            path.unlink(missing_ok=True)

    def close(self, name: str) -> None:
        session = self._named.pop(name, None)  # its program and conversation are freed with it
        if session is not None:
            self._persist(name, session)

    def persist_all(self) -> None:
        """Every open named session's state to the folder (the worker is stopping)."""
        for name, session in self._named.items():
            self._persist(name, session)
