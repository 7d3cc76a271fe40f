"""Hugging Face architectures at their real widths and input lengths, cut to one block: OpenVINO's
CPU plugin picks its kernels by shape, so the small configs of test_hf_zoo.py do not run the
kernels a real model runs (a T5-small encoder was once 7.6e-3 from eager on one CPU while its small
config was 2e-7). Each output element must equal eager's within REL_TOL of its own size plus
REL_TOL of the output's mean |eager| (lowering.assert_matches), and so must native OpenVINO's
conversion of the same model; every layer our delegate's compiled model runs computes in f32 (read
from the library's per-layer profiling: the kernel OpenVINO ran for each layer, ending in its
precision), and so does every node of native's."""

from __future__ import annotations

from typing import List, Tuple

import openvino as ov
import pytest
import torch

import executorch_openvino
from workloads.hf_zoo import make
from lowering import assert_matches, eager, lower_and_load

REL_TOL = 1e-5
WIDE = ("bert", "gpt2", "t5_encoder", "vit", "whisper_encoder", "clip_text", "whisper_decoder")
LOW_PRECISIONS = {"bf16", "f16"}
# The layers that carry a block's arithmetic: each must be there and run in f32.
WEIGHTED = {"FullyConnected", "MatMul"}


def our_layers(pte_path, inputs) -> List[Tuple[str, str]]:
    """(OpenVINO layer type, the precision its kernel ran in) of every layer our delegate's compiled
    model executed for `inputs`, from the per-layer profiling events the library writes to ETDump
    when enable_profiling is set (metadata "<layer type>:<kernel>_<precision>")."""
    import tempfile
    from pathlib import Path

    from executorch.devtools import Inspector
    from executorch.extension.pybindings import portable_lib

    executorch_openvino.set_options(enable_profiling=True)
    try:
        module = portable_lib._load_for_executorch(str(pte_path), enable_etdump=True, debug_buffer_size=0)
        module.forward(list(inputs))
        with tempfile.TemporaryDirectory() as folder:
            etdump = Path(folder) / "run.etdp"
            module.write_etdump_result_to_file(str(etdump), str(Path(folder) / "run.debug"))
            events = [event for block in Inspector(etdump_path=str(etdump)).event_blocks if block.name == "Execute"
                      for event in block.events if event.is_delegated_op and event.delegate_debug_metadatas]
    finally:
        executorch_openvino.set_options(enable_profiling=None)
    layers = []
    for event in events:
        layer_type, kernel = bytes(event.delegate_debug_metadatas[0]).decode().split(":", 1)
        layers.append((layer_type, kernel.rsplit("_", 1)[-1].lower()))
    return layers


def assert_computes_in_f32(layers: List[Tuple[str, str]], who: str) -> None:
    low = sorted({f"{kind}:{precision}" for kind, precision in layers if precision in LOW_PRECISIONS})
    assert not low, f"{who}: layers in a low precision: {low}"
    weighted = {(kind, precision) for kind, precision in layers if kind in WEIGHTED}
    assert weighted, f"{who}: no {sorted(WEIGHTED)} layer among {sorted(set(layers))}"
    assert {precision for _, precision in weighted} == {"f32"}, f"{who}: {sorted(weighted)}"


@pytest.mark.usefixtures("clean_options")
@pytest.mark.filterwarnings("ignore:Output Buffer not found")  # ETDump without intermediate outputs
@pytest.mark.parametrize("name", WIDE)
def test_one_block_at_real_width_matches_eager_and_native(name, tmp_path):
    model, inputs = make(name, "realistic", layers=1)
    expected = eager(model, inputs)
    lowered = lower_and_load(model, inputs, tmp_path, name)
    assert lowered.backend_ids == [executorch_openvino.BACKEND_ID] and lowered.outside_ops == []
    assert_matches(lowered.run(inputs), expected, rel_tol=REL_TOL)
    assert_computes_in_f32(our_layers(lowered.pte, inputs), f"{name}, our delegate")

    core = ov.Core()
    compiled = core.compile_model(ov.convert_model(torch.export.export(model, inputs)), "CPU",
                                  {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY"})
    native = torch.from_numpy(compiled([x.numpy() for x in inputs])[0])
    assert_matches([native], expected, rel_tol=REL_TOL)
    runtime_info = [node.get_rt_info() for node in compiled.get_runtime_model().get_ops()]
    # (str() of an OVAny is "<OVAny class>": its value is read with astype.)
    assert_computes_in_f32([(info["layerType"].astype(str), info["runtimePrecision"].astype(str).lower())
                            for info in runtime_info if "runtimePrecision" in info], f"{name}, native OpenVINO")
