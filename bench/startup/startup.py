"""Start-up: how long a fresh process takes to import the package, to print the command line's
--help, and to start the runner, against `import torch` alone (what any PyTorch program pays) and
an empty interpreter, and what importing ExecuTorch's Python runtime adds.

Each case is its own fresh process, timed from outside (wall time of the whole process), in
interleaved rounds: every round runs every case once, the order rotating, so the machine's load
reaches all alike. Reported: median and minimum per case, the ratio of medians to `import torch`
and the range of that ratio within the rounds. With --before REV, the package as it was at REV
(its python/ folder from git) is timed beside the current one.

    python bench/startup/startup.py [--rounds 7] [--before REV]   # report: bench/results/startup-<date>.md
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common
from common import git, machine, paths, processes, reports  # noqa: E402
from common.rounds import rotated  # noqa: E402
from common.stats import ratios  # noqa: E402

RUNNER_SHIM = "import sys; sys.argv[0] = 'executorch-openvino-run'; from executorch_openvino.cli.runner import main; main()"
BASELINE = "import torch"


def cases(package: Path, before: Optional[Path]) -> Dict[str, dict]:
    """name -> (argv, PYTHONPATH) of each process to time."""
    python = sys.executable
    binary = paths.built_runner()
    made = {
        "empty interpreter (python -c pass)": ([python, "-c", "pass"], package),
        BASELINE: ([python, "-c", "import torch"], package),
        "import executorch_openvino": ([python, "-c", "import executorch_openvino"], package),
        "python -m executorch_openvino --help": ([python, "-m", "executorch_openvino", "--help"], package),
        "python -m executorch_openvino bench (argument error)": ([python, "-m", "executorch_openvino", "bench"], package),
        "executorch-openvino-run --help (console script, execs the C++ runner)": (
            [python, "-c", RUNNER_SHIM, "--help"], package),
        "C++ runner --help, started directly": ([str(binary), "--help"], package),
        "import executorch.runtime (ExecuTorch alone)": ([python, "-c", "import executorch.runtime"], package),
        "import executorch_openvino, executorch.runtime": (
            [python, "-c", "import executorch_openvino, executorch.runtime"], package),
    }
    if before is not None:
        made["import executorch_openvino (--before)"] = ([python, "-c", "import executorch_openvino"], before)
        made["python -m executorch_openvino --help (--before)"] = (
            [python, "-m", "executorch_openvino", "--help"], before)
    return {name: {"argv": argv, "pythonpath": path} for name, (argv, path) in made.items()}


def time_once(case: dict) -> float:
    env = processes.child_env(PYTHONPATH=case["pythonpath"])
    start = time.perf_counter()
    done = subprocess.run(case["argv"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          timeout=600)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 2):  # 2: the argument error case
        raise SystemExit(f"startup: {' '.join(case['argv'])} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return elapsed


def package_at(revision: str, folder: Path) -> Path:
    """The python/ folder of `revision`, extracted into `folder`."""
    return git.extract(revision, folder, ["python"]) / "python"


def report(times: Dict[str, List[float]], rounds: int, before: Optional[str]) -> str:
    """One row per case; `times[name][r]` is round r's wall time."""
    base = times[BASELINE]
    lines = [
        f"# Start-up times, {reports.stamp()}",
        "",
        f"{machine.machine()}; Python {sys.version.split()[0]}, {machine.versions('torch', 'executorch', 'openvino')}, "
        f"executorch_openvino {machine.our_version()}; {rounds} interleaved rounds, each case a fresh process timed from "
        "outside." + (f" `--before`: the package at {before}." if before else ""),
        "",
        *reports.table_head(["process", "median s", "min s", "/ import torch (medians)", "per round"], "lrrrr"),
    ]
    for name, values in times.items():
        per_round = ratios(values, base)
        lines.append(reports.row(name, f"{statistics.median(values):.3f}", f"{min(values):.3f}",
                                 f"{statistics.median(values) / statistics.median(base):.3f}x",
                                 f"{min(per_round):.3f}-{max(per_round):.3f}"))
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--before", metavar="REV", help="also time the package as it was at this git revision")
    reports.add_results_dir(parser)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        before = package_at(args.before, Path(scratch)) if args.before else None
        timed = cases(paths.PYTHON, before)
        names = list(timed)
        for name in names:  # once untimed: the files are then in the page cache for every round
            time_once(timed[name])
        times: Dict[str, List[float]] = {name: [] for name in names}
        for r in range(args.rounds):
            for name in rotated(names, r):
                times[name].append(time_once(timed[name]))
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    text = report(times, args.rounds, args.before)
    path = reports.print_and_save(text, reports.results_dir(args.results_dir), f"startup-{reports.stamp()}.md")
    print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
