"""What a command prints as it goes: lines, and slow steps with their duration."""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Iterator


def say(text: str = "") -> None:
    print(text, flush=True)


@contextmanager
def step(what: str) -> Iterator[None]:
    """Prints `what ...` before a slow step and its duration when it ends."""
    print(f"{what} ...", end="", flush=True)
    start = time.perf_counter()
    try:
        yield
    except BaseException:
        print(" failed", flush=True)
        raise
    print(f" {time.perf_counter() - start:.1f} s", flush=True)
