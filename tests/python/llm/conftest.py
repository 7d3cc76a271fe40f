"""The option the paged-attention tests set, for one test at a time."""

from __future__ import annotations

import pytest

import executorch_openvino


@pytest.fixture
def paged():
    executorch_openvino.set_options(attention="paged")
    yield
    executorch_openvino.set_options(attention=None)

