"""Hugging Face architectures at their real widths and input lengths, cut to one block: OpenVINO's
CPU plugin picks its kernels by shape, so the small configs of test_hf_zoo.py do not run the
kernels a real model runs (a T5-small encoder was once 7.6e-3 from eager on one CPU while its small
config was 2e-7). Each must equal eager within 1e-5 of max(1, max |eager|), and native OpenVINO's
conversion of the same model within the same bound; every compute node runs in f32."""

from __future__ import annotations

import numpy as np
import openvino as ov
import pytest
import torch

import executorch_openvino
from hf_zoo_models import make
from lowering import eager, lower_and_load

REL_TOL = 1e-5
WIDE = ("bert", "gpt2", "t5_encoder", "vit", "whisper_encoder", "clip_text", "whisper_decoder")


@pytest.mark.parametrize("name", WIDE)
def test_one_block_at_real_width_matches_eager_and_native(name, tmp_path):
    model, inputs = make(name, "realistic", layers=1)
    (expected,) = eager(model, inputs)
    lowered = lower_and_load(model, inputs, tmp_path, name)
    assert lowered.backend_ids == [executorch_openvino.BACKEND_ID] and lowered.outside_ops == []
    (ours,) = lowered.run(inputs)
    scale = max(1.0, expected.abs().max().item())
    error = (ours - expected).abs().max().item() / scale
    assert error <= REL_TOL, f"{name}: {error:.1e} of the output scale from eager"

    core = ov.Core()
    compiled = core.compile_model(ov.convert_model(torch.export.export(model, inputs)), "CPU",
                                  {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY"})
    native = compiled([x.numpy() for x in inputs])[0]
    assert np.abs(native - expected.numpy()).max() / scale <= REL_TOL, f"{name}: native OpenVINO is off too"
    precisions = {str(node.get_rt_info()["runtimePrecision"]) for node in compiled.get_runtime_model().get_ops()
                  if "runtimePrecision" in node.get_rt_info()}
    assert not precisions & {"bf16", "f16"}, precisions
