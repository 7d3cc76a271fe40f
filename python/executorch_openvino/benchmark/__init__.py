"""The measuring engine of `executorch-openvino bench` and of the project's benchmarks (bench/):
variants timed in interleaved rounds (rounds), samples turned into medians, ranges, per-round ratios
and the one percentile every command prints (stats), the machine a result was measured on (machine),
one JSON result format (results) and its Markdown, CSV and plot, tables and targets being data (report),
and the runtimes the command compares, made ready to be timed (backends).

    from executorch_openvino import benchmark

    timed = benchmark.interleaved({"a": benchmark.SequentialRunner(call_a),
                                   "b": benchmark.SequentialRunner(call_b)}, rounds=5, calls=50)
    run = benchmark.new_run("mine", "My comparison", versions=["openvino"])
    for key, slices in timed.slices.items():
        benchmark.add_row(run, "model", key, latency_ms=[s.latencies_ms for s in slices])
    run["report"] = {"tables": [{"columns": [{"title": "variant", "field": "variant"},
                                             {"title": "/ a", "field": "latency_ms", "vs": "a", "unit": "×"}]}]}
    benchmark.save(benchmark.finish(run), Path("results"))      # results/mine-<date>.json and .md

`python -m executorch_openvino.benchmark RUN.json` prints a saved run's Markdown again. Everything here
but backends imports only the standard library.
"""

from .results import FORMAT, add_row, finish, load, new_run, rows, save, write
from .rounds import ConcurrentRunner, Rounds, Runner, SequentialRunner, Slice, interleaved, round_order, time_calls
from .report import body, csv_text, render
from .stats import median, percentile, spread, summary

__all__ = ["FORMAT", "add_row", "finish", "load", "new_run", "rows", "save", "write", "ConcurrentRunner", "Rounds",
           "Runner", "SequentialRunner", "Slice", "interleaved", "round_order", "time_calls", "body", "csv_text",
           "render", "median", "percentile", "spread", "summary"]
