"""`make bench`: writes the benchmark models, then runs bench_delegate_overhead on them and saves
the report under bench/results/ (named by date).

Environment: EXECUTORCH_OPENVINO_BUILD (the CMake build folder; default build/),
BENCH_SECONDS (time budget, default 20), BENCH_RESULTS (the report's folder, default bench/results).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common
from common import paths, processes, reports  # noqa: E402


def main() -> int:
    models = paths.BUILD / "bench_models"
    processes.run_python(Path(__file__).with_name("make_bench_models.py"), models, check=True, capture=False)
    results = Path(os.environ.get("BENCH_RESULTS", paths.RESULTS))
    report = results / f"overhead-{reports.stamp()}.md"
    command = [
        str(paths.bench_binary("bench_delegate_overhead")),
        "--cases", str(models),
        "--seconds", os.environ.get("BENCH_SECONDS", "20"),
        "--output", str(report),
    ]
    result = subprocess.run(command)
    if result.returncode == 0:
        print(f"\nreport saved to {report}")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
