"""bench's results: one Summary per backend from the interleaved rounds and the output check, and
the forms they are given in: a Markdown table, JSON, CSV and a bar chart.

Ratios are to native OpenVINO when it ran (else to executorch_openvino): latency as median over the
baseline's median, throughput as inferences per second over the baseline's. Each round's ratio
is taken within the round, where both ran under the same load; their range is reported beside the
ratio of the whole run.
"""

from __future__ import annotations

import csv
import json
import math
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from ...benchmark import machine as _machine
from ...benchmark.backends import LABELS, NATIVE, OURS, Backend
from ...benchmark.results import FORMAT
from ...benchmark.rounds import Rounds, Slice
from ...benchmark.stats import percentile

# Outputs agree when no element is further from the reference than this, relative to the
# reference's largest magnitude (at least 1): f32 kernels differ by ~1e-6, bf16 by ~1e-2.
AGREEMENT = 1e-3


@dataclass
class Summary:
    backend: str
    label: str
    available: bool
    note: str = ""
    requests: int = 1
    calls: int = 0
    median_ms: Optional[float] = None
    p90_ms: Optional[float] = None
    mean_ms: Optional[float] = None
    min_ms: Optional[float] = None
    throughput_per_s: Optional[float] = None
    ratio: Optional[float] = None
    round_ratio_min: Optional[float] = None
    round_ratio_max: Optional[float] = None
    round_medians_ms: List[float] = field(default_factory=list)
    round_throughputs_per_s: List[float] = field(default_factory=list)
    max_abs_diff: Optional[float] = None
    outputs_agree: Optional[bool] = None
    properties: Dict[str, str] = field(default_factory=dict)


def _measure(slices: Sequence[Slice], throughput: bool) -> float:
    """What a ratio compares: the median latency, or inferences per second."""
    if throughput:
        seconds = sum(s.seconds for s in slices)
        return sum(s.calls for s in slices) / seconds if seconds > 0 else math.nan
    return statistics.median([t for s in slices for t in s.latencies_ms]) if any(s.calls for s in slices) else math.nan


def summarize(backends: Sequence[Backend], rounds: Optional[Rounds], throughput: bool) -> List[Summary]:
    timed = rounds.slices if rounds is not None else {}
    baseline = NATIVE if NATIVE in timed else OURS
    summaries = []
    for backend in backends:
        summary = Summary(backend.key, backend.label, backend.key in timed, backend.note, backend.requests,
                          properties=backend.properties)
        slices = timed.get(backend.key)
        if slices:
            latencies = [t for s in slices for t in s.latencies_ms]
            summary.calls = sum(s.calls for s in slices)
            if latencies:
                summary.median_ms = statistics.median(latencies)
                summary.p90_ms = percentile(latencies, 0.9)
                summary.mean_ms = statistics.fmean(latencies)
                summary.min_ms = min(latencies)
            summary.throughput_per_s = _measure(slices, throughput=True)
            summary.round_medians_ms = [statistics.median(s.latencies_ms) for s in slices if s.latencies_ms]
            summary.round_throughputs_per_s = [s.throughput for s in slices]
            if baseline in timed:
                base = timed[baseline]
                summary.ratio = _measure(slices, throughput) / _measure(base, throughput)
                per_round = [_measure([mine], throughput) / _measure([theirs], throughput)
                             for mine, theirs in zip(slices, base) if mine.calls and theirs.calls]
                if per_round:
                    summary.round_ratio_min, summary.round_ratio_max = min(per_round), max(per_round)
        summaries.append(summary)
    return summaries


def check_outputs(summaries: Sequence[Summary], outputs: Dict[str, Dict[int, object]], reference: str) -> None:
    """Sets each summary's largest difference from the reference backend's outputs (the method
    outputs both have) and whether it is within AGREEMENT."""
    import numpy as np

    expected = outputs.get(reference)
    if not expected:
        return
    for summary in summaries:
        got = outputs.get(summary.backend)
        if got is None:
            continue
        shared = [i for i in got if i in expected]
        if not shared or any(np.shape(got[i]) != np.shape(expected[i]) for i in shared):
            summary.outputs_agree = False
            continue
        differences = [float(np.max(np.abs(np.asarray(got[i], np.float64) - np.asarray(expected[i], np.float64)),
                                    initial=0.0)) for i in shared]
        scale = max([1.0] + [float(np.max(np.abs(np.asarray(expected[i], np.float64)), initial=0.0)) for i in shared])
        summary.max_abs_diff = max(differences)
        summary.outputs_agree = summary.max_abs_diff <= AGREEMENT * scale


# --- forms ------------------------------------------------------------------------------------


def _number(value: Optional[float], digits: int = 3) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _ratio(value: Optional[float]) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.3f}x"


def _range(summary: Summary) -> str:
    if summary.round_ratio_min is None:
        return "n/a"
    return f"{summary.round_ratio_min:.3f}-{summary.round_ratio_max:.3f}"


def _difference(summary: Summary, reference: str) -> str:
    if summary.backend == reference:
        return "(reference)"
    if summary.outputs_agree is None:
        return "n/a"
    if summary.max_abs_diff is None:
        return "differ (shapes)"
    return f"{summary.max_abs_diff:.1e}" + ("" if summary.outputs_agree else " DIFFERS")


def table(summaries: Sequence[Summary], throughput: bool, reference: str) -> List[str]:
    baseline = "native" if any(s.backend == NATIVE and s.available for s in summaries) else "executorch_openvino"
    versus = f"vs {LABELS[reference].split(' (')[0]}"
    if throughput:
        lines = [f"| backend | requests | inferences/s | median latency ms | throughput / {baseline}'s | per round | "
                 f"max \\|diff\\| {versus} |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    else:
        lines = [f"| backend | calls | median ms | p90 ms | ratio to {baseline} | per round | max \\|diff\\| {versus} |",
                 "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for s in summaries:
        if not s.available:
            lines.append(f"| {s.label} | n/a | n/a | n/a | n/a | n/a | n/a |")
        elif throughput:
            lines.append(f"| {s.label} | {s.requests} | {_number(s.throughput_per_s, 1)} | {_number(s.median_ms)} | "
                         f"{_ratio(s.ratio)} | {_range(s)} | {_difference(s, reference)} |")
        else:
            lines.append(f"| {s.label} | {s.calls} | {_number(s.median_ms)} | {_number(s.p90_ms)} | {_ratio(s.ratio)} | "
                         f"{_range(s)} | {_difference(s, reference)} |")
    return lines


def document(summaries: Sequence[Summary], rounds: Optional[Rounds], settings: Dict[str, object]) -> Dict[str, object]:
    """Everything bench measured, for --json (the CSV holds the per-backend part)."""
    load = settings.get("load_average") or {}
    return {
        "format": FORMAT, "kind": "bench",
        **settings,
        "machine": _machine.describe(load_before=load.get("before")),
        "backends": [asdict(s) for s in summaries],
        "rounds_detail": [
            {"round": r, "order": order,
             "calls": {key: rounds.slices[key][r].calls for key in order},
             "seconds": {key: round(rounds.slices[key][r].seconds, 6) for key in order}}
            for r, order in enumerate(rounds.order)
        ] if rounds is not None else [],
    }


CSV_COLUMNS = ("backend", "label", "available", "requests", "calls", "median_ms", "p90_ms", "mean_ms", "min_ms",
               "throughput_per_s", "ratio", "round_ratio_min", "round_ratio_max", "max_abs_diff", "outputs_agree",
               "note")


def write_json(path: Path, content: Dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content, indent=2) + "\n")


def write_csv(path: Path, summaries: Sequence[Summary]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for summary in summaries:
            writer.writerow({key: ("" if value is None else value) for key, value in asdict(summary).items()})


def plot(summaries: Sequence[Summary], path: Path, title: str, throughput: bool) -> bool:
    """A bar chart (median latency with the p90 marked, or inferences per second); False when
    matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    timed = [s for s in summaries if s.available and s.calls][::-1]
    figure, axes = plt.subplots(figsize=(7, 0.6 * len(timed) + 1.6))
    names = [s.label for s in timed]
    if throughput:
        values = [s.throughput_per_s for s in timed]
        axes.barh(names, values, color="#4a7ebb")
        axes.set_xlabel("inferences per second")
    else:
        values = [s.median_ms for s in timed]
        upper = [s.p90_ms - s.median_ms for s in timed]
        axes.barh(names, values, xerr=[[0] * len(timed), upper], capsize=4, color="#4a7ebb")
        axes.set_xlabel("latency, ms (bar: median, whisker: p90)")
    for y, value in enumerate(values):
        axes.text(value, y, f" {value:.3f}", va="center", ha="left", fontsize=8)
    axes.set_title(title, fontsize=10)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return True
