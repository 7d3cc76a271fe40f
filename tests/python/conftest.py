"""Shared fixtures: where the built library and the repository's Python package are, a small
lowered network, process-wide run-time options cleared around a test, and the grown form asked for."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
# The shared helpers (lowering.py, llm_models.py, ...) for tests in the folders below; the checkout's
# root for workloads/, what tests/ shares with bench/.
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.append(str(REPO))


@pytest.fixture(scope="session")
def library_path() -> Path:
    """The built libexecutorch_openvino.so (EXECUTORCH_OPENVINO_LIBRARY, or the default build folder)."""
    default = REPO / "build" / "site" / "executorch_openvino" / "lib" / "libexecutorch_openvino.so"
    path = Path(os.environ.get("EXECUTORCH_OPENVINO_LIBRARY", default))
    if not path.is_file():
        pytest.fail(f"{path} does not exist: build the library first (make build)")
    return path


@pytest.fixture(scope="module")
def small_net():
    """(SmallNet, an input, its .pte) made once per test module."""
    from lowering import small_net_program

    return small_net_program(seed=0)


@pytest.fixture
def clean_options(monkeypatch):
    """No run-time option from the environment or set_options, before and after the test."""
    import executorch_openvino

    for key in executorch_openvino.runtime.library.load().option_keys():
        monkeypatch.delenv("EXECUTORCH_OPENVINO_" + key.upper(), raising=False)
    executorch_openvino.reset_options()
    yield
    executorch_openvino.reset_options()


@pytest.fixture
def grown():
    """Language models loaded with their KV caches as exported (attention=grown), for the tests whose
    subject is that form; the default runs them paged where it can (docs/conversation-state.md)."""
    import executorch_openvino

    with executorch_openvino.using_options(attention="grown"):
        yield
