"""Start-up (`make bench-startup`): how long a fresh process takes to import the package, to print
the command line's --help and to start the runner, against `import torch` alone (what any PyTorch
program pays) and an empty interpreter, and what importing ExecuTorch's Python runtime adds.

Each case is a fresh process timed from outside (its whole wall time), in interleaved rounds: every
round runs every case once, the order rotating, so the machine's load reaches all alike.

    python bench/startup/startup.py [--rounds 7] [--results-dir DIR]   # report: bench/results/startup-<date>.md
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/
from common import paths, processes  # noqa: E402

from executorch_openvino import benchmark  # noqa: E402

RUNNER_SHIM = "import sys; sys.argv[0] = 'executorch-openvino-run'; from executorch_openvino.cli.runner import main; main()"
BASELINE = "import torch"
REPORT = {
    "description": ["Each case a fresh process, timed from outside, in interleaved rounds (one run of every case a "
                    "round, the order rotating); ratios to `import torch` per round, median [lowest–highest]."],
    "tables": [{"title": "Fresh processes", "columns": [
        {"title": "process", "field": "variant"}, {"title": "median s", "field": "seconds", "format": ".3f"},
        {"title": "min s", "field": "seconds", "stat": "min", "format": ".3f"},
        {"title": "/ import torch", "field": "seconds", "vs": BASELINE, "format": ".3f", "unit": "×"}]}],
}


def cases() -> dict:
    python = sys.executable
    return {
        "empty interpreter (python -c pass)": [python, "-c", "pass"],
        BASELINE: [python, "-c", "import torch"],
        "import executorch_openvino": [python, "-c", "import executorch_openvino"],
        "python -m executorch_openvino --help": [python, "-m", "executorch_openvino", "--help"],
        "python -m executorch_openvino bench (an argument error)": [python, "-m", "executorch_openvino", "bench"],
        "executorch-openvino-run --help (the console script, which execs the C++ runner)": [python, "-c", RUNNER_SHIM,
                                                                                              "--help"],
        "the C++ runner's --help, started directly": [str(paths.built_runner()), "--help"],
        "import executorch.runtime (ExecuTorch's own start-up)": [python, "-c", "import executorch.runtime"],
        "import executorch_openvino, executorch.runtime": [python, "-c", "import executorch_openvino, executorch.runtime"],
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--results-dir", type=Path, default=paths.RESULTS)
    args = parser.parse_args(argv)
    env = processes.child_env(PYTHONPATH=paths.PYTHON)

    def launch(argv_: list) -> None:
        done = subprocess.run(argv_, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600)
        if done.returncode not in (0, 2):  # 2: the argument error case
            raise SystemExit(f"startup: {' '.join(argv_)} failed ({done.returncode}):\n{done.stderr[-2000:]}")

    run = benchmark.new_run("startup", "Start-up times", checkout=paths.REPO, report=REPORT,
                            versions=["torch", "executorch", "openvino"],
                            settings={"rounds": args.rounds, "python": sys.version.split()[0]})
    # One untimed run each first: the files are then in the page cache for every round.
    runners = {name: benchmark.SequentialRunner(lambda a=argv_: launch(a)) for name, argv_ in cases().items()}
    timed = benchmark.interleaved(runners, args.rounds, calls=args.rounds, warmup=1, settle_calls=0)
    for name, slices in timed.slices.items():
        benchmark.add_row(run, "start-up", name, seconds=[ms / 1e3 for s in slices for ms in s.latencies_ms])
    markdown = benchmark.save(benchmark.finish(run), args.results_dir)
    print(markdown.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
