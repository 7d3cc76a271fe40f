"""Shared fixtures: where the built library and the repository's Python package are."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))


@pytest.fixture(scope="session")
def library_path() -> Path:
    """The built libexecutorch_openvino.so (EXECUTORCH_OPENVINO_LIBRARY, or the default build folder)."""
    default = REPO / "build" / "site" / "executorch_openvino" / "lib" / "libexecutorch_openvino.so"
    path = Path(os.environ.get("EXECUTORCH_OPENVINO_LIBRARY", default))
    if not path.is_file():
        pytest.fail(f"{path} does not exist: build the library first (make build)")
    return path
