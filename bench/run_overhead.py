"""`make bench`: writes the benchmark models, then runs bench_delegate_overhead on them and saves
the report under bench/results/ (named by date).

Environment: EXECUTORCH_OPENVINO_BUILD (the CMake build folder; default build/),
BENCH_SECONDS (time budget, default 20), BENCH_RESULTS (the report's folder, default bench/results).
"""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    build = Path(os.environ.get("EXECUTORCH_OPENVINO_BUILD", REPO / "build"))
    models = build / "bench_models"
    subprocess.run([sys.executable, str(REPO / "bench" / "make_bench_models.py"), str(models)], check=True)
    results = Path(os.environ.get("BENCH_RESULTS", REPO / "bench" / "results"))
    report = results / f"overhead-{datetime.date.today().isoformat()}.md"
    command = [
        str(build / "bench" / "bench_delegate_overhead"),
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
