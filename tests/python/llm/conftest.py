"""The option the paged-attention tests set, for one test at a time."""

from __future__ import annotations

import pytest

import executorch_openvino


@pytest.fixture
def paged():
    with executorch_openvino.using_options(attention="paged"):
        yield

