"""ExecuTorch's backend operator suite (shipped in the executorch wheel) run with our partitioner's
flow (flow_plugin.py): pass / fail / skip counts, the failures, and the lowering time per case.

  .venv/bin/python bench/peer_suite/run.py [-k EXPRESSION] [--results-dir DIR]   (the whole suite: ~25 min on 2 cores)

Report: bench/results/peer-suite-<date>.md. Not part of make test (too slow); the cases it found
wrong are pinned by tests/python/test_exact_ops.py and test_recurrent.py.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # bench/, for common
from common import machine, paths, processes, reports  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", dest="expression", help="pytest -k expression selecting cases")
    reports.add_results_dir(parser)
    args = parser.parse_args()
    import executorch.backends.test.suite as suite

    operators = Path(suite.__file__).parent / "operators"
    with tempfile.TemporaryDirectory() as folder:
        record = Path(folder) / "record.jsonl"
        environment = processes.child_env(PYTHONPATH=processes.path_list(paths.PYTHON, HERE), PEER_SUITE_RECORD=record)
        command = [sys.executable, "-m", "pytest", "-p", "flow_plugin", "-p", "no:cacheprovider", "-p", "no:logging",
                   str(operators), "-q", "--show-capture=no", "-rf"]
        if args.expression:
            command += ["-k", args.expression]
        run = subprocess.run(command, capture_output=True, text=True, env=environment, cwd=paths.REPO)
        rows = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    summary = re.findall(r"(\d+) (passed|failed|skipped|error)", run.stdout.strip().splitlines()[-1] if run.stdout.strip() else "")
    failures = [line for line in run.stdout.splitlines() if line.startswith("FAILED")]
    lowering = [r["lower_seconds"] for r in rows if r["lower_seconds"] is not None]
    per_test = collections.defaultdict(float)
    for r in rows:
        per_test[r["test"]] += r["lower_seconds"] or 0.0
    slowest = sorted(per_test.items(), key=lambda item: -item[1])[:8]
    lines = [
        f"# ExecuTorch's backend operator suite with our flow, {datetime.datetime.now():%Y-%m-%d %H:%M}",
        "",
        f"- tests: {', '.join(f'{n} {what}' for n, what in summary) or 'no summary line'}; subtests recorded: {len(rows)}",
        f"- lowering time per subtest: median {statistics.median(lowering):.2f} s, max {max(lowering):.1f} s" if lowering else "- no lowering recorded",
        f"- {machine.machine()}",
        "",
        "Failures:" if failures else "No failures.",
        *[f"- {line.split('::')[-1]}" for line in failures],
        "",
        "Slowest tests (sum of their subtests' lowering time, s):",
        *[f"- {name}: {seconds:.1f}" for name, seconds in slowest],
    ]
    reports.print_and_save("\n".join(lines) + "\n", reports.results_dir(args.results_dir),
                           f"peer-suite-{reports.stamp()}.md")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
