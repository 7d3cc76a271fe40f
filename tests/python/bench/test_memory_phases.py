"""Smoke test of bench/llm/memory_phases.py on the tiny Llama (int8): every subject runs in its own process
and the report has a row per subject with each phase measured. Sizes are not checked: at this size the
weights are smaller than what the runtimes allocate for themselves."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def test_memory_phases_tiny_runs_end_to_end(tmp_path, library_path):
    env = dict(os.environ, EXECUTORCH_OPENVINO_LIBRARY=str(library_path))
    results = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "llm" / "memory_phases.py"), "--size", "tiny", "--formats", "int8",
         "--work", str(tmp_path / "work"), "--results-dir", str(results)],
        capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    text = next(results.glob("memory-phases-*.md")).read_text()
    rows = {line.split("|")[1].strip(): [cell.strip() for cell in line.strip().strip("|").split("|")[1:]]
            for line in text.splitlines() if line.startswith("| `")}
    assert set(rows) == {"`delegate`", "`native-file`", "`native-memory`"}
    for subject, cells in rows.items():
        measured = cells[1:] if subject == "`delegate`" else cells  # the delegate reads as it compiles
        assert all("[" in cell for cell in measured[:-1]), (subject, cells)
        assert cells[-1].endswith("×")
