"""Samples to figures: the one percentile every command prints, medians, ranges, and ratios taken
round by round (each round's ratio is free of the drift between rounds; their range shows the noise).

The percentile is linear interpolation between the closest ranks (NumPy's default, R's type 7), the
definition `executorch-openvino-run` (src/runner/runner.cpp) uses too, so that the two commands give the
same p90 for the same samples (tests/python/benchmark/test_percentile.py holds them equal).
"""

from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple


def percentile(values: Sequence[float], fraction: float) -> float:
    """The `fraction` (0 to 1) percentile of `values`: linear interpolation between closest ranks."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"percentile fraction {fraction} is outside 0..1")
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def median(values: Sequence[float]) -> float:
    return percentile(values, 0.5)


def summary(values: Sequence[float]) -> Tuple[float, float, float]:
    """(median, lowest, highest)."""
    return median(values), min(values), max(values)


def flat(samples) -> List[float]:
    """The numbers of a field: a list of numbers, or a list of lists (one per round), flattened."""
    out: List[float] = []
    for item in samples:
        if isinstance(item, (list, tuple)):
            out.extend(x for x in item if x is not None)
        elif item is not None:
            out.append(item)
    return out


def per_round(samples) -> List[Optional[float]]:
    """One figure per round: a round's number, or the median of its samples (None for an empty round)."""
    out: List[Optional[float]] = []
    for item in samples:
        if isinstance(item, (list, tuple)):
            known = [x for x in item if x is not None]
            out.append(median(known) if known else None)
        else:
            out.append(item)
    return out


def round_ratios(samples, reference) -> List[float]:
    """Round by round: this field's figure over the reference's (rounds where both have one)."""
    return [a / b for a, b in zip(per_round(samples), per_round(reference)) if a is not None and b]


def round_differences(samples, reference) -> List[float]:
    """Round by round: this field's figure minus the reference's."""
    return [a - b for a, b in zip(per_round(samples), per_round(reference)) if a is not None and b is not None]


def spread(values: Sequence[float], spec: str = ".2f", unit: str = "") -> str:
    """"median [lowest–highest]<unit>", or "–" for no values."""
    if not values:
        return "–"
    middle, low, high = summary(values)
    return f"{middle:{spec}} [{low:{spec}}–{high:{spec}}]{unit}"


__all__ = ["percentile", "median", "summary", "flat", "per_round", "round_ratios", "round_differences", "spread"]
