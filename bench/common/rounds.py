"""Interleaved rounds: the order the variants take in each round, so that drift and noise from other
processes reach every variant alike, and the timed call."""

from __future__ import annotations

from typing import Callable, List, Sequence, TypeVar

T = TypeVar("T")


def alternating(items: Sequence[T], r: int) -> List[T]:
    """Round r's order: as given in even rounds, reversed in odd ones (two sides: each goes first
    every other round)."""
    return list(items) if r % 2 == 0 else list(items)[::-1]


def rotated(items: Sequence[T], r: int, reverse_odd: bool = False) -> List[T]:
    """Round r's order: rotated by r (every item goes first in turn), and reversed in odd rounds when
    `reverse_odd` (so that no item always follows the same one)."""
    items = list(items)
    if not items:
        return items
    shift = r % len(items)
    order = items[shift:] + items[:shift]
    return order[::-1] if reverse_odd and r % 2 else order


def time_calls(call: Callable[[], object], calls: int, warmup: int = 0) -> List[float]:
    """Milliseconds of each of `calls` calls, each timed alone (perf_counter), after `warmup` untimed
    ones: the timed loop of the package's `bench` command, so that the benchmarks and the command time
    a call alike (the package's python/ must be on sys.path)."""
    from executorch_openvino.benchmark import time_calls as package_time_calls

    return package_time_calls(call, calls, warmup)
