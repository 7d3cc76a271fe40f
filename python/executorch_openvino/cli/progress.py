"""What a command prints as it goes: results on stdout; slow steps, with a lowering's stages inside
them, on stderr, on a terminal or with -v only.

A pipe or a log file gets the results alone; a step's duration shows when it ends."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Iterator, Optional

from .. import lowering_progress

_verbose = {"on": False}


def show_steps_when_verbose(verbose: bool) -> None:
    """-v shows the steps wherever stderr goes (the command line sets it for the command it runs)."""
    _verbose["on"] = verbose


def steps_shown() -> bool:
    try:
        return _verbose["on"] or sys.stderr.isatty()
    except (AttributeError, ValueError):  # no stderr, or a closed one
        return _verbose["on"]


def say(text: str = "") -> None:
    print(text, flush=True)


@contextmanager
def step(what: str) -> Iterator[None]:
    """Shows `what ...` before a slow step and its duration when it ends; the stages a lowering
    inside it announces (lowering_progress) each on a line of their own, with theirs."""
    if not steps_shown():
        yield
        return
    out = sys.stderr
    start = time.perf_counter()
    stage: dict = {"name": None, "since": start}

    def write(text: str) -> None:
        out.write(text)
        out.flush()

    def end_of_stage(now: float) -> Optional[str]:
        return None if stage["name"] is None else f" {now - stage['since']:.1f} s\n"

    def stage_started(name: str) -> None:
        now = time.perf_counter()
        write((end_of_stage(now) or "\n") + f"  {name} ...")
        stage.update(name=name, since=now)

    write(f"{what} ...")
    try:
        with lowering_progress.listening(stage_started):
            yield
    except BaseException:
        write(" failed\n")
        raise
    now = time.perf_counter()
    ended = end_of_stage(now)
    write(f" {now - start:.1f} s\n" if ended is None else f"{ended}{what}: {now - start:.1f} s\n")
