"""Smoke test of the LLM benchmark (bench/llm/llm_bench.py), so that it cannot rot: the tiny Llama, fp32,
ours, and ours through ExecuTorch's LLM runner (each variant costs a probe, a process; ours an export),
one round, in a subprocess writing into a temporary results folder.
Nothing here checks a time: only that each step ran and the report says what it measured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def _row(text: str, variant: str):
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] == variant:
            return cells
    raise AssertionError(f"no row for {variant} in\n{text}")


def test_llm_bench_tiny_runs_end_to_end(tmp_path, library_path):
    env = dict(os.environ, EXECUTORCH_OPENVINO_LIBRARY=str(library_path))
    results = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "llm" / "llm_bench.py"), "--sizes", "tiny", "--formats", "fp32",
         "--variants", "ours,ours-fast,ours-paged,ours-runner", "--rounds", "1", "--results-dir", str(results)],
        capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    markdown = next(results.glob("llm-*.md"))
    assert markdown.with_suffix(".png").is_file() and markdown.with_suffix(".json").is_file()
    text = markdown.read_text()
    assert "logical cores" in text and "load average" in text  # the machine and its load are recorded

    for variant in ("ours", "ours-paged", "ours-runner"):  # ours-paged: attention=paged at load
        cells = _row(text, variant)
        prefill, decode = float(cells[1].split()[0]), float(cells[2].split()[0])
        assert prefill > 0 and decode > 0, cells
        assert cells[-1].startswith("ids = eager (8/8)"), cells  # fp32 greedy ids equal eager PyTorch
        assert "MB" in cells[12], cells  # peak RSS against the weights plus the cache
    # precision="fast": the CPU's own precision (bf16 where it has it), so its ids need not be eager's
    cells = _row(text, "ours-fast")
    assert float(cells[1].split()[0]) > 0 and float(cells[2].split()[0]) > 0, cells
    # The variants not asked for are left out; the targets table has a row for each way ours ran.
    assert "| xnnpack |" not in text
    targets = text.split("## Targets", 1)[1]
    assert "| tiny | fp32 (ours) |" in targets and "| tiny | fp32 (ours-runner) |" in targets

    run = json.loads(markdown.with_suffix(".json").read_text())
    (record,) = run["records"]
    variants = record["formats"]["fp32"]["variants"]
    assert set(variants) == {"ours", "ours-fast", "ours-paged", "ours-runner"}
    assert all("error" not in entry for entry in variants.values()), variants
    assert len(record["formats"]["fp32"]["rounds"]["rounds"]) == 1

    # The report can be written again from the saved run, measuring nothing.
    again = subprocess.run([sys.executable, str(REPO / "bench" / "llm" / "llm_bench.py"), "--report-from",
                            str(markdown.with_suffix(".json"))], capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 0, again.stderr[-2000:]
    assert markdown.read_text() == text
