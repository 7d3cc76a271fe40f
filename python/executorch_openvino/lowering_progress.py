"""Where a lowering is: each stage announces itself as it starts, to whoever listens (the command
line shows them as progress, cli/progress.py); with nobody listening, an announcement costs nothing.

The stages are ExecuTorch's and ours, in the order a method meets them; a program of several
methods meets them once per method. A stage lasts until the next one starts.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator, List

DECOMPOSITIONS = "decompositions and edge passes"  # ExecuTorch's, from the partitioner's first hook
PARTITIONING = "partitioning"
CONVERSION = "conversion"  # fx_passes/ and convert/
IR_PASSES = "IR passes"
WEIGHT_COMPRESSION = "weight compression"  # one of the IR passes, shown apart: NNCF's can take minutes
CONTAINER = "writing the delegate blob"

_listeners: List[Callable[[str], None]] = []


def started(stage: str) -> None:
    for listener in tuple(_listeners):
        listener(stage)


@contextmanager
def listening(listener: Callable[[str], None]) -> Iterator[None]:
    """Calls `listener(stage)` as each stage starts inside the block."""
    _listeners.append(listener)
    try:
        yield
    finally:
        _listeners.remove(listener)
