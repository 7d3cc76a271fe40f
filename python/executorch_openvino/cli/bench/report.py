"""bench's results as one run of the engine's format (executorch_openvino.benchmark.results): a row per
backend with its per-round samples and its outputs' difference from the reference, and the report that
lays the rows out, as data for the engine's renderer: the printed table, the CSV's columns and the plot.

Ratios are to native OpenVINO when it ran (else to executorch_openvino): latency as median over the
baseline's median, throughput as inferences per second over the baseline's; of the whole run, and round
by round, where both ran under the same load ("median [lowest–highest]" of the rounds' ratios).
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from ... import benchmark
from ...benchmark.backends import LABELS, NATIVE, OURS, Backend
from ...benchmark.rounds import Rounds

# Outputs agree when no element is further from the reference than this, relative to the
# reference's largest magnitude (at least 1): f32 kernels differ by ~1e-6, bf16 by ~1e-2.
AGREEMENT = 1e-3
VERSIONS = ("executorch-openvino", "executorch", "torch", "openvino")
FOOTNOTE = ("executorch.runtime rows include its Python call (inputs wrapped, outputs copied, torch at one thread so "
            "its idle OpenMP threads do not spin on OpenVINO's cores); native OpenVINO reuses its infer requests with "
            "their inputs set once. Per round: the ratios taken within each round, median [lowest–highest].")
# The CSV's columns, one line per backend: the row's own fields and the figures the table prints.
CSV_COLUMNS = ("backend", "label", "available", "requests", "calls", "median_ms", "p90_ms", "mean_ms", "min_ms",
               "throughput_per_s", "ratio", "round_ratio_min", "round_ratio_max", "max_abs_diff", "outputs_agree",
               "note")

Difference = Tuple[Optional[float], bool]  # (largest absolute difference, None: the shapes differ; agrees)


def _group(pte, method: str) -> str:
    """The rows' group: the program and its method."""
    return f"{Path(pte).name} ({method})"


def baseline(timed: Sequence[str]) -> str:
    return NATIVE if NATIVE in timed else OURS


def report_spec(throughput: bool, baseline_key: str, reference: str, plot_title: str, series: List[str]) -> dict:
    """The run's report: the table bench prints, the CSV's columns and the bar plot."""
    name = "native" if baseline_key == NATIVE else "executorch_openvino"
    # What a ratio compares: the median latency, or inferences per second (of the whole run, and each round's).
    whole, rounds = ("throughput_per_s", "round_throughput_per_s") if throughput else ("latency_ms", "latency_ms")
    ratio = {"field": whole, "vs": baseline_key, "whole": True, "format": ".3f", "unit": "×"}
    per_round = {"field": rounds, "vs": baseline_key, "format": ".3f", "unit": "×"}
    difference = {"title": f"max \\|diff\\| vs {LABELS[reference].split(' (')[0]}", "field": "max_abs_diff",
                  "format": ".1e",
                  "marks": [{"where": {"variant": reference}, "text": "(reference)"},
                            {"where": {"outputs_agree": False, "max_abs_diff": None}, "text": "differ (shapes)"},
                            {"where": {"outputs_agree": False}, "text": "{} DIFFERS"}]}
    median = {"field": "latency_ms", "stat": "median", "format": ".3f"}
    if throughput:
        columns = [{"title": "requests", "field": "requests", "format": "d"},
                   {"title": "inferences/s", "field": "throughput_per_s", "format": ".1f"},
                   {"title": "median latency ms", **median},
                   {"title": f"throughput / {name}'s", **ratio}]
    else:
        columns = [{"title": "calls", "field": "calls", "format": "d"},
                   {"title": "median ms", **median},
                   {"title": "p90 ms", "field": "latency_ms", "stat": "p90", "format": ".3f"},
                   {"title": f"ratio to {name}", **ratio}]
    figures = {"backend": {"field": "variant"}, "median_ms": {"field": "latency_ms", "stat": "median"},
               "p90_ms": {"field": "latency_ms", "stat": "p90"}, "mean_ms": {"field": "latency_ms", "stat": "mean"},
               "min_ms": {"field": "latency_ms", "stat": "min"}, "ratio": ratio,
               "round_ratio_min": {**per_round, "part": "lowest"}, "round_ratio_max": {**per_round, "part": "highest"}}
    return {
        "tables": [{"columns": [{"title": "backend", "field": "label"}, *columns,
                                {"title": "per round", **per_round}, difference],
                    "text": [FOOTNOTE]}],
        "csv": {"columns": [{"title": title, **figures.get(title, {"field": title})} for title in CSV_COLUMNS]},
        "plot": {"title": plot_title, "series": series,
                 **({"field": "throughput_per_s"} if throughput else median)},
    }


def new_bench_run(args, *, rounds: int, requests: int, options: Dict[str, str], reference: str,
                  timed: List[str]) -> dict:
    """The run starting now, with bench's settings and its report; its rows come when it is timed."""
    throughput = args.mode == "throughput"
    amount = f"{args.time:g} s" if args.time is not None else f"{args.iterations} calls"
    what = _group(args.pte, args.method)
    settings = {"tool": "executorch-openvino bench", "pte": str(args.pte), "method": args.method, "mode": args.mode,
                "rounds": rounds, "iterations": None if args.time is not None else args.iterations,
                "seconds": args.time, "warmup": args.warmup, "requests": requests, "options": options,
                "reference": reference, "baseline": baseline(timed)}
    plot_title = (f"{what}, {args.mode}, {amount} per backend: "
                  + ("inferences per second" if throughput else "median latency, ms"))
    return benchmark.new_run("bench", f"executorch-openvino bench: {what}, {args.mode}", versions=VERSIONS,
                             settings=settings,
                             report=report_spec(throughput, baseline(timed), reference, plot_title, timed))


def output_differences(outputs: Dict[str, Dict[int, object]], reference: str) -> Dict[str, Difference]:
    """Each backend's largest difference from the reference backend's outputs (the method outputs both
    have; None when their shapes differ), and whether it is within AGREEMENT."""
    import numpy as np

    expected = outputs.get(reference)
    if not expected:
        return {}
    found: Dict[str, Difference] = {}
    for key, got in outputs.items():
        shared = [i for i in got if i in expected]
        if not shared or any(np.shape(got[i]) != np.shape(expected[i]) for i in shared):
            found[key] = (None, False)
            continue
        largest = max(float(np.max(np.abs(np.asarray(got[i], np.float64) - np.asarray(expected[i], np.float64)),
                                    initial=0.0)) for i in shared)
        scale = max([1.0] + [float(np.max(np.abs(np.asarray(expected[i], np.float64)), initial=0.0)) for i in shared])
        found[key] = (largest, largest <= AGREEMENT * scale)
    return found


def add_backends(run: dict, made: Sequence[Backend], rounds: Optional[Rounds],
                 differences: Dict[str, Difference]) -> None:
    """A row per backend (the timed ones with their rounds' samples, calls, seconds and turns), and a
    note for each backend not timed and each whose outputs differ."""
    timed = rounds.slices if rounds is not None else {}
    group, reference = _group(run["settings"]["pte"], run["settings"]["method"]), run["settings"]["reference"]
    for backend in made:
        slices = timed.get(backend.key)
        row = benchmark.add_row(run, group, backend.key, label=backend.label, available=bool(slices),
                                properties=backend.properties)
        if backend.note:
            row["note"] = backend.note
            run["notes"].append(f"{backend.label}: {'' if slices else 'n/a: '}{backend.note}")
        if slices:
            seconds = sum(s.seconds for s in slices)
            row.update(requests=backend.requests, calls=sum(s.calls for s in slices),
                       latency_ms=[s.latencies_ms for s in slices],
                       throughput_per_s=sum(s.calls for s in slices) / seconds if seconds > 0 else None,
                       round_throughput_per_s=[s.throughput if s.calls else None for s in slices],
                       round_calls=[s.calls for s in slices], round_seconds=[round(s.seconds, 6) for s in slices],
                       turn=[order.index(backend.key) for order in rounds.order])
        if backend.key in differences:
            row["max_abs_diff"], row["outputs_agree"] = differences[backend.key]
            if not row["outputs_agree"]:
                largest = row["max_abs_diff"]
                run["notes"].append(
                    f"WARNING: {backend.label}'s outputs differ from {LABELS[reference]}'s by "
                    f"{largest if largest is not None else 'their shapes'}: the rows do not compute the same thing "
                    "(a lower precision or a quantized model does this)")
