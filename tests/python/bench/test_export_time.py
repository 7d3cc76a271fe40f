"""Smoke test of bench/llm/export_time.py on the tiny Llama (fp32, one round): ours before (this
checkout's own HEAD, taken with git archive) and after each export in a process of their own, and the
report says where the time went, ExecuTorch's own steps summed. Times are not checked; optimum-intel's column is n/a where the
bench extras are not installed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def test_export_time_tiny_runs_end_to_end(tmp_path, library_path):
    env = dict(os.environ, EXECUTORCH_OPENVINO_LIBRARY=str(library_path))
    results = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "llm" / "export_time.py"), "--size", "tiny", "--formats", "fp32",
         "--rounds", "1", "--before", "HEAD", "--work", str(tmp_path / "work"), "--results-dir", str(results)],
        capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    text = next(results.glob("export-time-*.md")).read_text()
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in text.splitlines()
            if line.startswith("| fp32")]
    summary, before, after = rows
    assert float(summary[2].split()[0]) > 0 and float(summary[3].split()[0]) > 0
    assert all(float(peak) > 100 for peak in summary[7].split(" / "))  # MB: torch alone holds more
    for row, side in ((before, "before"), (after, "after")):
        assert row[1] == side
        total, phases = float(row[2]), [float(cell) for cell in row[3:9]]
        assert len(row) == 11 and all(phase > 0 for phase in phases) and sum(phases) < total
        # ExecuTorch's steps: torch.export, the decompositions, the edge passes and to_executorch
        assert abs(float(row[9]) - sum(phases[i] for i in (0, 1, 2, 5))) < 0.3
        assert row[10] == "n/a" or float(row[10]) > 0
