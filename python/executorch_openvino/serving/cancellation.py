"""Cancellation from the server: 8-byte little-endian request ids on an inherited pipe
(EXECUTORCH_LLM_WORKER_CONTROL_FD), read by a thread of their own so that a stop reaches a
generation that is running. A frame names the request it cancels: one for a request that ended is
dropped, and one that comes before its request has begun cancels it as soon as it begins."""

from __future__ import annotations

import os
import threading
from typing import Callable, Optional

CONTROL_FD_ENV = "EXECUTORCH_LLM_WORKER_CONTROL_FD"
FRAME = 8


class Cancellation:
    def __init__(self, fd: Optional[int]):
        self._fd = fd
        self._lock = threading.Lock()
        self._active: Optional[int] = None
        self._cancel: Optional[Callable[[], None]] = None
        self._cancelled_active = False
        self._early: set = set()  # ids seen before their request began
        self._last_finished = 0
        if fd is not None:
            threading.Thread(target=self._read, name="cancellation", daemon=True).start()

    @classmethod
    def from_environment(cls) -> "Cancellation":
        value = os.environ.get(CONTROL_FD_ENV)
        if not value:
            return cls(None)
        try:
            fd = int(value)
            os.fstat(fd)
        except (ValueError, OSError):
            return cls(None)  # not a descriptor we inherited: no cancellation, said in the ready line
        return cls(fd)

    @property
    def supported(self) -> bool:
        return self._fd is not None

    def begin(self, request_id: Optional[int], cancel: Callable[[], None]) -> None:
        """A request starts; `cancel` ends it (from the reading thread)."""
        with self._lock:
            self._active, self._cancel, self._cancelled_active = request_id, cancel, False
            if request_id is not None and request_id in self._early:
                self._early.discard(request_id)
                self._cancelled_active = True
                cancel()

    def end(self) -> bool:
        """The request ended; whether a frame cancelled it."""
        with self._lock:
            cancelled = self._cancelled_active
            if self._active is not None:
                self._last_finished = max(self._last_finished, self._active)
                self._early = {i for i in self._early if i > self._last_finished}
            self._active, self._cancel, self._cancelled_active = None, None, False
            return cancelled

    def _frame(self, request_id: int) -> None:
        with self._lock:
            if request_id == self._active and self._cancel is not None:
                self._cancelled_active = True
                self._cancel()
            elif request_id > self._last_finished and len(self._early) < 1024:
                self._early.add(request_id)

    def _read(self) -> None:
        pending = b""
        while True:
            try:
                chunk = os.read(self._fd, 4096)
            except InterruptedError:
                continue
            except OSError:
                return
            if not chunk:  # the server closed its end
                return
            pending += chunk
            while len(pending) >= FRAME:
                self._frame(int.from_bytes(pending[:FRAME], "little"))
                pending = pending[FRAME:]
