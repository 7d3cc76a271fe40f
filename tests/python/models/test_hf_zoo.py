"""Hugging Face architectures (workloads/hf_zoo.py, small configs, random weights):
each lowers to one partition of ours with nothing left outside, and runs through executorch.runtime
equal to eager PyTorch within 1e-4 of the output scale."""

from __future__ import annotations

import pytest

import executorch_openvino
from workloads.hf_zoo import MODELS, make
from lowering import assert_matches, eager, lower_and_load

REL_TOL = 1e-4


@pytest.mark.parametrize("name", list(MODELS))
def test_hf_model_is_delegated_whole_and_matches_eager(name, tmp_path):
    model, inputs = make(name, "small")
    lowered = lower_and_load(model, inputs, tmp_path, name)
    assert lowered.backend_ids == [executorch_openvino.BACKEND_ID], f"partitions: {lowered.backend_ids}"
    assert lowered.outside_ops == [], f"left outside: {lowered.outside_ops}; refusals: {lowered.refusals}"
    assert_matches(lowered.run(inputs), eager(model, inputs), rel_tol=REL_TOL)
