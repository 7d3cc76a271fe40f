"""Interleaved rounds: the variants take turns, so a change in the machine's load during the run
reaches every variant alike. The order rotates from round to round and is reversed every other
round, so no variant always follows the same one; each turn starts with one untimed call, which
absorbs the switch (caches, and the previous library's threads still spinning).

A variant is timed through a Runner: `run(calls, seconds)` makes that many calls (or calls until that
many seconds have passed) and returns a Slice. SequentialRunner makes one call at a time;
ConcurrentRunner keeps several in flight (a thread per request); a Runner of one's own can drive
anything else (a C++ process, OpenVINO's asynchronous queue).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence


@dataclass
class Slice:
    """One variant's share of one round."""

    calls: int
    seconds: float  # wall time from the first call's start to the last call's end
    latencies_ms: List[float] = field(default_factory=list)

    @property
    def throughput(self) -> float:
        return self.calls / self.seconds if self.seconds > 0 else 0.0


class Runner:
    def run(self, calls: Optional[int], seconds: Optional[float]) -> Slice:  # pragma: no cover (interface)
        raise NotImplementedError


class SequentialRunner(Runner):
    """One call at a time, each timed."""

    def __init__(self, call: Callable[[], object]) -> None:
        self.call = call

    def run(self, calls: Optional[int], seconds: Optional[float]) -> Slice:
        latencies: List[float] = []
        start = time.perf_counter()
        deadline = start + seconds if seconds is not None else None
        while (calls is None or len(latencies) < calls) and (deadline is None or time.perf_counter() < deadline):
            before = time.perf_counter()
            self.call()
            latencies.append((time.perf_counter() - before) * 1e3)
        return Slice(len(latencies), time.perf_counter() - start, latencies)


class ConcurrentRunner(Runner):
    """One thread per request, each calling its own callable (its own method or model instance)
    until the slice's calls are used up or its time is over. Needs callables that release the GIL
    while they compute (executorch.runtime's execute, PyTorch's operators do)."""

    def __init__(self, calls_per_request: Sequence[Callable[[], object]]) -> None:
        self.callables = list(calls_per_request)

    def run(self, calls: Optional[int], seconds: Optional[float]) -> Slice:
        lock = threading.Lock()
        latencies: List[float] = []
        left = [calls]
        errors: List[BaseException] = []
        ready = threading.Barrier(len(self.callables) + 1)  # the clock starts once every thread exists
        deadline: Optional[float] = None

        def take() -> bool:
            with lock:
                if errors or (deadline is not None and time.perf_counter() >= deadline):
                    return False
                if left[0] is None:
                    return True
                if left[0] <= 0:
                    return False
                left[0] -= 1
                return True

        def work(call: Callable[[], object]) -> None:
            ready.wait()
            try:
                while take():
                    before = time.perf_counter()
                    call()
                    elapsed = (time.perf_counter() - before) * 1e3
                    with lock:
                        latencies.append(elapsed)
            except BaseException as error:  # re-raised in the caller's thread
                with lock:
                    errors.append(error)

        threads = [threading.Thread(target=work, args=(call,), daemon=True) for call in self.callables]
        for thread in threads:
            thread.start()
        start = time.perf_counter()
        deadline = start + seconds if seconds is not None else None
        ready.wait()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]
        return Slice(len(latencies), time.perf_counter() - start, latencies)


@dataclass
class Rounds:
    """What the rounds did: each round's order and each variant's slices, in round order."""

    order: List[List[str]] = field(default_factory=list)
    slices: Dict[str, List[Slice]] = field(default_factory=dict)


def split_calls(total: int, rounds: int) -> List[int]:
    """`total` calls spread over `rounds` as evenly as whole calls allow (the first rounds take the
    remainder)."""
    return [total // rounds + (1 if r < total % rounds else 0) for r in range(rounds)]


def round_order(keys: Sequence[str], r: int) -> List[str]:
    """Round r's order: rotated by r, reversed in odd rounds."""
    if not keys:
        return []
    shift = r % len(keys)
    order = list(keys[shift:]) + list(keys[:shift])
    return order[::-1] if r % 2 else order


def interleaved(runners: Dict[str, Runner], rounds: int, *, calls: Optional[int] = None,
                seconds: Optional[float] = None, warmup: int = 0, settle_calls: int = 1) -> Rounds:
    """Times every runner in `rounds` rounds. Each variant makes `calls` timed calls in all, or is
    timed for `seconds` in all, an equal share per round. `warmup` untimed calls per variant come
    first; each turn starts with `settle_calls` untimed ones."""
    if (calls is None) == (seconds is None):
        raise ValueError("give the calls or the seconds per variant, not both")
    keys = list(runners)
    for key in keys:
        if warmup:
            runners[key].run(warmup, None)
    shares = split_calls(calls, rounds) if calls is not None else [None] * rounds
    result = Rounds(slices={key: [] for key in keys})
    for r in range(rounds):
        order = round_order(keys, r)
        result.order.append(order)
        for key in order:
            if settle_calls:
                runners[key].run(settle_calls, None)
            result.slices[key].append(runners[key].run(shares[r], seconds / rounds if seconds is not None else None))
    return result


def time_calls(call: Callable[[], object], calls: int, warmup: int = 0) -> List[float]:
    """Milliseconds of each of `calls` calls, each timed alone, after `warmup` untimed ones."""
    for _ in range(warmup):
        call()
    return SequentialRunner(call).run(calls, None).latencies_ms
