"""Timing calls, for the bench command."""

from __future__ import annotations

import math
import time
from typing import List, Sequence


# --- timing --------------------------------------------------------------------------------------


def time_calls(call, iterations: int, warmup: int) -> List[float]:
    """Milliseconds of each of `iterations` calls, after `warmup` untimed ones."""
    for _ in range(warmup):
        call()
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e3)
    return times


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]
