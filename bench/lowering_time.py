"""Lowering time of recurrent models, this checkout's Python package against an earlier commit's
(the partitioner before recurrent layers were kept whole), alternating, each lowering in a fresh
process: export, then to_edge_transform_and_lower + to_executorch timed.

  .venv/bin/python bench/lowering_time.py [--before 3f3337b] [--repeats 1]

The cases are ExecuTorch's backend test suite's LSTM models (its test_lstm.py) and the zoo's GRU.
The earlier commit's python/ folder is taken with `git archive` into a temporary folder; both use
this build's library. Report: bench/results/lowering-time-<date>.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

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
    environment = {**os.environ, "PYTHONPATH": python_folder}
    out = subprocess.run([sys.executable, __file__, "--child", case], capture_output=True, text=True, env=environment)
    if out.returncode != 0:
        raise RuntimeError(f"{case}: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else 'failed'}")
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="3f3337b")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(lower_once(args.child))
        return 0

    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="lowering-before-") as folder:
        archive = Path(folder) / "before.tar"
        subprocess.run(["git", "-C", str(REPO), "archive", "-o", str(archive), args.before, "python"], check=True)
        with tarfile.open(archive) as tar:
            tar.extractall(folder)
        sides = {"before": str(Path(folder) / "python"), "after": str(REPO / "python")}
        times = {case: {"before": [], "after": []} for case in CASES}
        for repeat in range(args.repeats):
            for i, case in enumerate(CASES):
                order = ["before", "after"] if (i + repeat) % 2 == 0 else ["after", "before"]
                for side in order:
                    times[case][side].append(child(sides[side], case))
                print(case, json.dumps(times[case]), flush=True)
    lines = [
        f"# Lowering time of recurrent models, {datetime.datetime.now():%Y-%m-%d %H:%M}",
        "",
        f"- {os.cpu_count()} logical cores (shared); load average (1 min) {load_before:.2f} before, {os.getloadavg()[0]:.2f} after",
        f"- before: commit {args.before}'s python/ (each recurrent layer decomposed by to_edge); after: this checkout",
        "- to_edge_transform_and_lower + to_executorch, median of the repeats, a fresh process each, before and after alternating",
        "",
        "| case | before s | after s | after / before |",
        "|---|---|---|---|",
    ]
    for case, sides_times in times.items():
        before, after = statistics.median(sides_times["before"]), statistics.median(sides_times["after"])
        lines.append(f"| {case} | {before:.1f} | {after:.1f} | {after / before:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    results = REPO / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / f"lowering-time-{datetime.date.today()}.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
