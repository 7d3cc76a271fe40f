"""Export time of an LLM, ours beside optimum-intel's, and this checkout's package against an earlier
commit's: each export in a fresh process, the three alternating within every round.

  .venv/bin/python bench/llm/export_time.py [--size smollm2-360m] [--formats fp32,int8,int4]
                                            [--before 4eaa8e1] [--rounds 2] [--results-dir DIR]

Ours is the LLM bench's export (bench/llm/llm_setup.export_et "ours": torch.export, NNCF's weight
compression for int8 / int4, to_edge_transform_and_lower with OpenvinoPartitioner, to_executorch, the
.pte written); optimum-intel's is `optimum-cli export openvino` of the same weights (export_ov). The
earlier commit's python/ folder is taken with `git archive`. Each ours export also reports where its
time went (torch.export, ExecuTorch's decompositions, its edge passes, our partitioner and preprocess,
to_executorch), its process's peak resident memory, and what ExecuTorch's own steps alone cost against
optimum-intel's whole export: the part no partitioner can shorten. Report: bench/results/export-time-<date>.md.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common
from common import git, machine, memory, paths, processes, reports  # noqa: E402
from common.reports import say  # noqa: E402
from common.rounds import rotated  # noqa: E402

PHASES = ("torch.export", "decompositions", "edge passes", "partition", "preprocess", "to_executorch")
# The steps every ExecuTorch program takes, whatever its delegate: what no partitioner can shorten.
EXECUTORCH_STEPS = ("torch.export", "decompositions", "edge passes", "to_executorch")


def _timed_phases(times: dict) -> None:
    """Wraps ExecuTorch's and our phases so that `times` adds up their seconds (outermost calls only)."""
    from executorch.exir import program as exir_program
    from executorch.exir.program import _program
    from torch.export import ExportedProgram

    import executorch_openvino.preprocess as preprocess
    import torch
    from executorch_openvino import OpenvinoPartitioner

    depth = [0]

    def wrap(owner, name, phase):
        real = getattr(owner, name)

        @functools.wraps(real)
        def timed(*args, **kwargs):
            started, depth[0] = time.perf_counter(), depth[0] + 1
            try:
                return real(*args, **kwargs)
            finally:
                depth[0] -= 1
                if depth[0] == 0:
                    times[phase] += time.perf_counter() - started

        setattr(owner, name, timed)

    wrap(torch.export, "export", "torch.export")
    wrap(ExportedProgram, "run_decompositions", "decompositions")
    wrap(_program, "_generate_edge_program", "edge passes")
    wrap(OpenvinoPartitioner, "partition", "partition")
    wrap(preprocess.ExecutorchOpenvinoBackend, "preprocess", "preprocess")
    wrap(exir_program.EdgeProgramManager, "to_executorch", "to_executorch")


def child(python_folder: str, fmt: str, size_name: str, work: str) -> dict:
    paths.on_path(Path(python_folder), Path(__file__).resolve().parent)
    import llm_setup

    times = defaultdict(float)
    _timed_phases(times)
    started = time.perf_counter()
    llm_setup.export_et("ours", fmt, llm_setup.SIZES[size_name], Path(work))
    return {"seconds": time.perf_counter() - started, "phases": dict(times), "peak_mb": memory.peak_kb() / 1024}


def run_ours(python_folder: Path, fmt: str, size: str, work: Path) -> dict:
    done = processes.run_python(Path(__file__), "--child", python_folder, fmt, size, work, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"ours {fmt}: {done.stderr.strip()[-1500:]}")
    return processes.last_json(done.stdout)


def run_optimum(fmt: str, size_name: str, work: Path) -> dict:
    import llm_setup

    shutil.rmtree(work / f"ov-{fmt}", ignore_errors=True)
    started = time.perf_counter()
    try:
        llm_setup.export_ov(fmt, llm_setup.SIZES[size_name], work)
    except RuntimeError as error:
        if not str(error).startswith("n/a"):
            raise
        return {"error": str(error)}  # optimum-intel is not installed: make venv-bench
    return {"seconds": time.perf_counter() - started}


def _median_range(values) -> str:
    return f"{statistics.median(values):.1f} [{min(values):.1f}–{max(values):.1f}]" if values else "n/a"


def _optimum_seconds(sides: dict) -> list:
    """optimum-intel's export times of one format (none where it is not installed)."""
    return [r["seconds"] for r in sides["optimum-intel"] if "seconds" in r and "error" not in r]


def _peak(runs) -> str:
    """The export process's peak resident memory, median over the rounds."""
    peaks = [r["peak_mb"] for r in runs if "peak_mb" in r]
    return f"{statistics.median(peaks):.0f}" if peaks else "n/a"


def report(args, results: dict, load_before: str, commit: str) -> str:
    lines = [
        f"# Export time, {datetime.datetime.now():%Y-%m-%d %H:%M}",
        "",
        f"- {machine.machine(load_before)}",
        f"- size {args.size}; {args.rounds} round{'' if args.rounds == 1 else 's'}, each export in a fresh process, the"
        " order rotated every round; medians [ranges]",
        f"- before: commit {args.before}'s python/; after: this checkout ({commit}); optimum-intel: "
        "`optimum-cli export openvino` of the same weights",
        "",
        *reports.table_head(["format", "optimum-intel s", "ours before s", "ours after s", "after / before",
                             "after / optimum-intel", "target ≤ 1.5× optimum-intel", "peak RSS MB: before / after"]),
    ]
    for fmt, sides in results.items():
        optimum = _optimum_seconds(sides)
        before = [r["seconds"] for r in sides["before"]]
        after = [r["seconds"] for r in sides["after"]]
        ratio = statistics.median([a / o for a, o in zip(after, optimum)]) if optimum else None
        lines.append(reports.row(fmt, _median_range(optimum), _median_range(before), _median_range(after),
                                 f"{statistics.median([a / b for a, b in zip(after, before)]):.2f}",
                                 "n/a" if ratio is None else f"{ratio:.2f}",
                                 "n/a (optimum-intel not installed)" if ratio is None
                                 else "met" if ratio <= 1.5 else "**not met**",
                                 " / ".join(_peak(sides[side]) for side in ("before", "after"))))
    lines += ["", "Where ours' time goes (seconds, medians; torch.export counts the quantization helpers' own "
              "export again; the rest is building the model, NNCF's compression and writing the file). "
              "ExecuTorch's steps: " + ", ".join(EXECUTORCH_STEPS) + ", which every program takes whatever its "
              "delegate, against optimum-intel's whole export:", "",
              *reports.table_head(["format", "side", "total", *PHASES, "ExecuTorch's steps",
                                   "ExecuTorch's steps / optimum-intel"])]
    for fmt, sides in results.items():
        optimum = _optimum_seconds(sides)
        for side in ("before", "after"):
            runs = sides[side]
            own = [sum(r["phases"].get(p, 0.0) for p in EXECUTORCH_STEPS) for r in runs]
            floor = (f"{statistics.median(own) / statistics.median(optimum):.2f}"
                     if optimum and all(p in runs[0]["phases"] for p in EXECUTORCH_STEPS) else "n/a")
            lines.append(reports.row(fmt, side, f"{statistics.median(r['seconds'] for r in runs):.1f}",
                                     *(f"{statistics.median(r['phases'].get(p, 0.0) for r in runs):.1f}"
                                       for p in PHASES), f"{statistics.median(own):.1f}", floor))
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="smollm2-360m")
    parser.add_argument("--formats", default="fp32,int8,int4")
    parser.add_argument("--before", default="4eaa8e1")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--work", type=Path, help="keep the artifacts here (default: a temporary folder)")
    reports.add_results_dir(parser)
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0

    paths.on_path(paths.PYTHON, Path(__file__).resolve().parent)
    import llm_setup

    load_before = machine.load_average()
    commit = git.short_commit()
    with tempfile.TemporaryDirectory(prefix="export-time-") as folder:
        work = args.work or Path(folder) / "work"
        work.mkdir(parents=True, exist_ok=True)
        if not (work / "weights.pt").is_file():
            say(f"preparing {args.size} (weights, the Hugging Face model)")
            llm_setup.prepare_size(llm_setup.SIZES[args.size], work)
        before = git.extract(args.before, Path(folder) / "before", ["python"]) / "python"
        sides = {"before": lambda fmt: run_ours(before, fmt, args.size, work),
                 "after": lambda fmt: run_ours(paths.PYTHON, fmt, args.size, work),
                 "optimum-intel": lambda fmt: run_optimum(fmt, args.size, work)}
        results = {fmt: {side: [] for side in sides} for fmt in args.formats.split(",")}
        for round_index in range(args.rounds):
            for fmt in results:
                for side in rotated(list(sides), round_index):
                    results[fmt][side].append(sides[side](fmt))
                    done = results[fmt][side][-1]
                    say(f"round {round_index + 1} {fmt} {side}: " + (
                        done["error"] if "error" in done else f"{done['seconds']:.1f} s"))
    reports.print_and_save(report(args, results, load_before, commit), reports.results_dir(args.results_dir),
                           f"export-time-{reports.stamp()}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
