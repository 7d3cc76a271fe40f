"""The names a lowered model's IR and the runtime library agree on (the grown caches' variables, the
position input, a paged model's inputs) are spelled in one place, container/ir_names.py: the exporter
imports them, and the build makes the C header of them (cmake/IrNames.cmake). Guards against a copy by
hand in C++ or Python (state_abi.h and ir_passes/grown_cache.py each spelled them once), which drifts
when one side is renamed: adding such a copy anywhere in the code fails the second test."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from executorch_openvino.container import ir_names

REPO = Path(__file__).resolve().parents[3]
SOURCE = REPO / "python" / "executorch_openvino" / "container" / "ir_names.py"
# What cmake/IrNames.cmake reads: one `NAME = "value"` a line.
LINE = re.compile(r'^([A-Z_]+) = "([^"]*)"$')
CODE = {".py", ".cpp", ".h", ".c", ".cc", ".cmake", ".sh", ".in", ".map", ".toml", ".dict"}


def _names() -> dict:
    return {key: value for key, value in vars(ir_names).items() if key.isupper() and isinstance(value, str)}


def test_every_name_is_on_a_line_the_build_reads():
    """A name written in another form would be missing from the C header (the build fails on it there)."""
    read = dict(m.groups() for line in SOURCE.read_text().splitlines() if (m := LINE.match(line)))
    assert read == _names() and len(read) == 10


def test_nothing_else_in_the_code_spells_them():
    listed = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    stems = {value.strip("!/") for value in _names().values()}
    spelled = []
    for name in listed.stdout.split():
        path = REPO / name
        if path == SOURCE or not (path.suffix in CODE or path.name == "CMakeLists.txt") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        spelled += [f"{name}: {stem}" for stem in sorted(stems) if stem in text]
    assert spelled == []
