"""Medians, quantiles and ranges, and ratios taken round by round (free of drift between rounds; their
range shows the noise)."""

from __future__ import annotations

import math
import statistics
from typing import Iterable, List, Optional, Sequence, Tuple


def quantile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (NumPy's default), like the C++ benchmarks."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def median(values: Iterable[Optional[float]], empty: Optional[float] = None) -> Optional[float]:
    """The median of the values that are not None; `empty` when there are none."""
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else empty


def summary(values: Sequence[float]) -> Tuple[float, float, float]:
    """(median, lowest, highest)."""
    return statistics.median(values), min(values), max(values)


def spread(values: Sequence[float], spec: str = ".1f", unit: str = "") -> str:
    """"median<unit> [lowest–highest]", or "–" for no values."""
    if not values:
        return "–"
    middle, low, high = summary(values)
    return f"{middle:{spec}}{unit} [{low:{spec}}–{high:{spec}}]"


def ratios(values: Sequence[float], references: Sequence[float]) -> List[float]:
    """value / reference, pair by pair (round by round), where the reference is not zero."""
    return [value / reference for value, reference in zip(values, references) if reference]


def block_ratios(blocks: Sequence[Sequence[float]], references: Sequence[Sequence[float]]) -> List[float]:
    """Round by round, the median of a block over the median of the reference's block of that round."""
    return [statistics.median(a) / statistics.median(b) for a, b in zip(blocks, references) if a and b]
