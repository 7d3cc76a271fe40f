"""The zoo benchmark (bench/zoo/zoo.py) end to end on its tiny model, as a subprocess (tests/ never
imports bench/): its C++ side of this build, the engine's rounds and its report, in about half a minute."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def test_the_zoo_times_every_variant_of_the_tiny_model_and_reports_them(tmp_path, library_path):
    """Guards against a suite that no longer runs against the build (the C++ side's folder format, the
    engine's API), and against rows silently missing: ours, native and the delegate alone from C++, with
    equal outputs and (within OpenVINO's own noise) the same allocations per call."""
    build = library_path.parents[3]  # <build>/site/executorch_openvino/lib/<library>
    env = dict(os.environ, EXECUTORCH_OPENVINO_BUILD=str(build), EXECUTORCH_OPENVINO_LIBRARY=str(library_path))
    done = subprocess.run([sys.executable, str(REPO / "bench" / "zoo" / "zoo.py"), "--quick", "--models", "tiny",
                           "--budget", "0.15", "--results-dir", str(tmp_path)], capture_output=True, text=True,
                          env=env, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    run = json.loads(next(tmp_path.glob("zoo-*.json")).read_text())
    rows = {row["variant"]: row for row in run["rows"]}
    for variant in ("native-cpp", "ours-cpp", "delegate-cpp", "ours-py", "native-py"):
        assert rows[variant]["calls"] > 0 and len(rows[variant]["latency_ms"]) == 3, rows[variant]
        assert rows[variant]["check"].startswith("max abs(out − eager) 0.0e+00"), rows[variant]
    # OpenVINO allocates now and then inside its own inference, so the mean per call wanders a little.
    assert rows["ours-cpp"]["allocs_per_call"] == pytest.approx(rows["native-cpp"]["allocs_per_call"], abs=0.5)
    assert run["machine"]["cpu"] and run["commit"]
    markdown = next(tmp_path.glob("zoo-*.md")).read_text()
    assert "| tiny |" in markdown and "## Targets" in markdown
