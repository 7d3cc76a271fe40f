"""Lowering time of recurrent models, this checkout's Python package against an earlier commit's
(the partitioner before recurrent layers were kept whole), alternating, each lowering in a fresh
process: export, then to_edge_transform_and_lower + to_executorch timed.

  .venv/bin/python bench/lowering/lowering_time.py [--before 3f3337b] [--repeats 1] [--results-dir DIR]

The cases are ExecuTorch's backend test suite's LSTM models (its test_lstm.py) and the zoo's GRU.
The earlier commit's python/ folder is taken with `git archive` into a temporary folder; both use
this build's library. Report: bench/results/lowering-time-<date>.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common
from common import git, machine, paths, processes, reports  # noqa: E402
from common.rounds import alternating  # noqa: E402

# name -> (Model options of the suite's test_lstm.Model, input shape)
CASES = {
    "lstm 2 layers, 10 steps": (dict(num_layers=2), (1, 10, 64)),
    "lstm 50 steps": ({}, (1, 50, 64)),
    "lstm batch 100": ({}, (100, 10, 64)),
    "lstm 3 layers": (dict(num_layers=3), (1, 10, 64)),
    "lstm bidirectional": (dict(bidirectional=True), (1, 10, 64)),
}


def lower_once(case: str) -> float:
    import torch
    from executorch.backends.test.suite.operators.test_lstm import Model
    from executorch.exir import to_edge_transform_and_lower

    import executorch_openvino

    options, shape = CASES[case]
    torch.manual_seed(0)
    model = Model(**options).eval()
    exported = torch.export.export(model, (torch.randn(*shape),))
    started = time.perf_counter()
    to_edge_transform_and_lower(exported, partitioner=[executorch_openvino.OpenvinoPartitioner()]).to_executorch()
    return time.perf_counter() - started


def child(python_folder: str, case: str) -> float:
    out = processes.run_python(Path(__file__), "--child", case, env=processes.child_env(PYTHONPATH=python_folder))
    if out.returncode != 0:
        raise RuntimeError(f"{case}: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else 'failed'}")
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="3f3337b")
    parser.add_argument("--repeats", type=int, default=1)
    reports.add_results_dir(parser)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(lower_once(args.child))
        return 0

    load_before = machine.load_average()
    with tempfile.TemporaryDirectory(prefix="lowering-before-") as folder:
        git.extract(args.before, Path(folder), ["python"])
        sides = {"before": str(Path(folder) / "python"), "after": str(paths.PYTHON)}
        times = {case: {"before": [], "after": []} for case in CASES}
        for repeat in range(args.repeats):
            for i, case in enumerate(CASES):
                for side in alternating(["before", "after"], i + repeat):
                    times[case][side].append(child(sides[side], case))
                print(case, json.dumps(times[case]), flush=True)
    lines = [
        f"# Lowering time of recurrent models, {datetime.datetime.now():%Y-%m-%d %H:%M}",
        "",
        f"- {machine.machine(load_before)}",
        f"- before: commit {args.before}'s python/ (each recurrent layer decomposed by to_edge); after: this checkout",
        "- to_edge_transform_and_lower + to_executorch, median of the repeats, a fresh process each, before and after alternating",
        "",
        *reports.table_head(["case", "before s", "after s", "after / before"]),
    ]
    for case, sides_times in times.items():
        before, after = statistics.median(sides_times["before"]), statistics.median(sides_times["after"])
        lines.append(reports.row(case, f"{before:.1f}", f"{after:.1f}", f"{after / before:.2f}"))
    reports.print_and_save("\n".join(lines) + "\n", reports.results_dir(args.results_dir),
                           f"lowering-time-{reports.stamp()}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
