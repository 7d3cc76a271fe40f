"""Smoke test of the benchmark zoo (bench/zoo.py): one quick run of the tiny model in a subprocess,
writing into a temporary results folder."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_zoo_quick_tiny(tmp_path, library_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "python"), env.get("PYTHONPATH")]))
    env.pop("EXECUTORCH_OPENVINO_CACHE_DIR", None)
    results = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "zoo.py"), "--quick", "--models", "tiny", "--results-dir", str(results)],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    stamp = datetime.date.today().isoformat()
    markdown, picture = results / f"zoo-{stamp}.md", results / f"zoo-{stamp}.png"
    if not markdown.is_file():  # the run may have crossed midnight
        markdown, picture = next(results.glob("zoo-*.md")), next(results.glob("zoo-*.png"))
    text = markdown.read_text()
    assert text in done.stdout  # the table printed is the one saved
    rows = [line for line in text.splitlines() if line.startswith("| tiny |")]
    variants = {row.split("|")[2].strip(): row for row in rows}
    for variant in ("native", "ours-py", "ours-cpp"):
        assert variant in variants, text
        p50 = variants[variant].split("|")[3].strip()
        assert float(p50) > 0, variants[variant]
    assert "et-openvino" in variants  # measured, or n/a with the reason
    assert picture.stat().st_size > 1000
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
