"""Smoke test of the benchmark zoo (bench/zoo/zoo.py): one quick run of the tiny model in a subprocess,
writing into a temporary results folder, with the C++ side (bench_zoo_cpp) of the build that made
the library under test."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def _rows(text: str, model: str, columns: int):
    """{first column after the model: cells} of the table rows for `model` with `columns` cells."""
    rows = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] == model and len(cells) == columns:
            rows[cells[1]] = cells
    return rows


def test_zoo_quick_tiny(tmp_path, library_path):
    build = library_path.parents[3]  # <build>/site/executorch_openvino/lib/<library>
    tool = build / "bench" / "bench_zoo_cpp"
    if not tool.is_file():
        pytest.fail(f"{tool} does not exist: build it (cmake --build {build} --target bench_zoo_cpp)")
    env = dict(os.environ)
    env["EXECUTORCH_OPENVINO_BUILD"] = str(build)
    env["EXECUTORCH_OPENVINO_LIBRARY"] = str(library_path)
    env.pop("EXECUTORCH_OPENVINO_CACHE_DIR", None)
    results = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "zoo" / "zoo.py"), "--quick", "--models", "tiny", "--results-dir", str(results)],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    stamp = datetime.date.today().isoformat()
    markdown, picture = results / f"zoo-{stamp}.md", results / f"zoo-{stamp}.png"
    if not markdown.is_file():  # the run may have crossed midnight
        markdown, picture = next(results.glob("zoo-*.md")), next(results.glob("zoo-*.png"))
    text = markdown.read_text()
    assert text in done.stdout  # the table printed is the one saved

    # Every variant: the C++ and Python sides of native and ours were timed.
    variants = _rows(text, "tiny", 13)
    for variant in ("native-cpp", "ours-cpp", "native-py", "ours-py"):
        assert variant in variants, text
        assert float(variants[variant][2]) > 0, variants[variant]
    assert "et-openvino-cpp" in variants and "et-openvino-py" in variants  # measured, or n/a with the reason
    # Allocations per call were counted for the C++ variants (a number, not a dash).
    assert float(variants["ours-cpp"][11].split()[0]) >= 0, variants["ours-cpp"]

    # The headline row: ours over native from C++, with a ratio and the load and memory ratios.
    headline = [line for line in text.split("## Headline", 1)[1].split("##", 1)[0].splitlines()
                if line.startswith("| tiny |")]
    assert len(headline) == 1, text
    cells = [cell.strip() for cell in headline[0].strip("|").split("|")]
    assert cells[3].endswith("×") and float(cells[3][:-1]) > 0, headline
    assert "## Targets (issue 6)" in text
    assert picture.stat().st_size > 1000
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
