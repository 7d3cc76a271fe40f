"""The user's path, model by model: torch.export -> to_edge_transform_and_lower with
OpenvinoPartitioner -> .pte -> executorch.runtime, compared with eager PyTorch.

For every model of the zoo (tests/python/zoo_models.py):
  test_zoo_matches_eager   every output equals eager PyTorch: fp32 within rel_tol (1e-4 unless the
                           entry says why not) of max(1, max |eager|), integer / bool exactly; twice,
                           with different input values the second time.
  test_zoo_delegation      the program calls our delegate, and leaves exactly the entry's number of
                           operators on ExecuTorch's own kernels (one partition when that is 0).
Then partial delegation (skip_ops / skip_nodes), the Python int input, and compress_to_fp16.
"""

from __future__ import annotations


import pytest
import torch
from torch import nn

import executorch_openvino
from executorch.exir import to_edge
from executorch_openvino.fx_graph import op_name
from lowering import assert_matches, eager, lower_and_load, other_values
from zoo_models import GLOBAL_REL_TOL, ZOO, ZOO_BY_NAME, ZooEntry

# nn.LSTM / nn.GRU keep their weights in a plain list that torch.export warns about; not ours.
pytestmark = pytest.mark.filterwarnings("ignore:The tensor attributes .* were assigned during export")


# ---------------------------------------------------------------------------------------------
# The zoo


@pytest.fixture(scope="module")
def lowered_zoo(tmp_path_factory):
    """Lowers each zoo model once for the tests of this module: name -> (model, inputs, Lowered)."""
    folder = tmp_path_factory.mktemp("zoo")
    cache = {}

    def get(entry: ZooEntry):
        if entry.name not in cache:
            model, inputs = entry.make_model().eval(), entry.make_inputs()
            cache[entry.name] = (model, inputs, lower_and_load(model, inputs, folder, entry.name))
        return cache[entry.name]

    return get


@pytest.mark.parametrize("entry", [pytest.param(e, id=e.name) for e in ZOO])
def test_zoo_matches_eager(entry: ZooEntry, lowered_zoo):
    model, inputs, lowered = lowered_zoo(entry)
    assert executorch_openvino.BACKEND_ID in lowered.backend_ids, "nothing was delegated to executorch_openvino"
    assert_matches(lowered.run(inputs), eager(model, inputs), entry.rel_tol)
    # Again with new values in the same input buffers' shapes: nothing stale from the first call.
    second = other_values(inputs)
    assert_matches(lowered.run(second), eager(model, second), entry.rel_tol)


@pytest.mark.parametrize("entry", [pytest.param(e, id=e.name) for e in ZOO])
def test_zoo_delegation(entry: ZooEntry, lowered_zoo):
    _, _, lowered = lowered_zoo(entry)
    ids = lowered.backend_ids
    assert ids and set(ids) == {executorch_openvino.BACKEND_ID}, f"delegate calls: {ids}"
    outside = lowered.outside_ops
    assert len(outside) == entry.outside_ops, (
        f"{len(outside)} operator(s) left outside the delegate, expected {entry.outside_ops}: {outside}; "
        f"partitioner refusals: {lowered.refusals}"
    )
    if entry.outside_ops == 0:
        assert len(ids) == 1, f"a fully delegated model should be one partition, got {len(ids)}"


def test_zoo_has_the_required_models():
    required = {
        "mlp", "cnn", "depthwise_separable", "residual_block", "transformer_encoder_layer", "embedding_linear",
        "lstm", "interpolate", "shape_ops", "reductions", "broadcasting", "multi_output", "int_argument",
    }
    assert required <= set(ZOO_BY_NAME)
    assert len(ZOO_BY_NAME) == len(ZOO), "zoo names must be unique (they are the test ids)"
    for entry in ZOO:
        assert entry.rel_tol == GLOBAL_REL_TOL or entry.note, f"{entry.name}: a looser bound needs its reason"


def test_int_argument_must_be_the_exported_value(lowered_zoo):
    """torch.export specialises a plain int: the program still takes it as an input, and
    ExecuTorch refuses any other value than the one exported with."""
    model, (x, n), lowered = lowered_zoo(ZOO_BY_NAME["int_argument"])
    assert_matches(lowered.run([x, n]), eager(model, (x, n)))
    # ExecuTorch refuses them when the inputs are set (0x12: InvalidArgument), before any delegate runs.
    with pytest.raises(RuntimeError, match=r"set_inputs\(\) for method 'forward' failed with error 0x12"):
        lowered.run([x, n + 1])
    with pytest.raises(RuntimeError, match=r"set_inputs\(\) for method 'forward' failed with error 0x12"):
        lowered.run([x])
    assert_matches(lowered.run([x, n]), eager(model, (x, n)))  # and the method keeps working


# ---------------------------------------------------------------------------------------------
# Partial delegation


class _TwoLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 16)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class _ThreeLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 64)
        self.fc3 = nn.Linear(64, 16)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def _seeded_model(cls) -> nn.Module:
    torch.manual_seed(0)
    return cls().eval()


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param("aten.relu.default", id="overload"),
        pytest.param("aten.relu", id="every_overload"),
        pytest.param("aten::relu", id="double_colon"),
        pytest.param("torch.ops.aten.relu.default", id="torch_ops_string"),
        pytest.param(torch.ops.aten.relu, id="packet"),
        pytest.param(torch.ops.aten.relu.default, id="opoverload"),
    ],
)
def test_skip_ops_splits_the_graph_around_the_op(spec, tmp_path):
    model, inputs = _seeded_model(_TwoLinear), (torch.randn(4, 32),)
    lowered = lower_and_load(model, inputs, tmp_path, skip_ops=[spec])
    assert lowered.outside_ops == ["aten.relu.default"]
    assert lowered.backend_ids == [executorch_openvino.BACKEND_ID] * 2
    assert list(lowered.refusals.values()) == ["excluded by skip_ops"]
    # The activations cross from our delegate to ExecuTorch's relu kernel and back.
    assert_matches(lowered.run(inputs), eager(model, inputs))


def test_skip_nodes_keeps_only_the_named_node_out(tmp_path):
    model, inputs = _seeded_model(_ThreeLinear), (torch.randn(4, 32),)
    exported = torch.export.export(model, inputs)
    relus = [n.name for n in to_edge(exported).exported_program().graph.nodes
             if n.op == "call_function" and op_name(n.target) == "aten.relu.default"]
    assert len(relus) == 2
    lowered = lower_and_load(model, inputs, tmp_path, skip_nodes=[relus[0]])
    assert lowered.refusals == {relus[0]: "excluded by skip_nodes"}
    assert lowered.outside_ops == ["aten.relu.default"], "the other relu stays in the delegate"
    assert lowered.backend_ids == [executorch_openvino.BACKEND_ID] * 2
    assert_matches(lowered.run(inputs), eager(model, inputs))


# ---------------------------------------------------------------------------------------------
# Weights: fp32 by default, fp16 when asked


class _Wide(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(256, 256)
        self.fc2 = nn.Linear(256, 64)

    def forward(self, x):
        return self.fc2(torch.nn.functional.gelu(self.fc1(x)))


def test_compress_to_fp16_halves_the_stored_weights(tmp_path):
    model, inputs = _seeded_model(_Wide), (torch.randn(4, 256),)
    weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    default = lower_and_load(model, inputs, tmp_path, "default")
    compressed = lower_and_load(model, inputs, tmp_path, "fp16", compile_options={"compress_to_fp16": True})
    for lowered in (default, compressed):
        assert lowered.backend_ids == [executorch_openvino.BACKEND_ID] and lowered.outside_ops == []

    default_size, compressed_size = default.pte.stat().st_size, compressed.pte.stat().st_size
    assert default_size > weight_bytes, "the default program stores the fp32 weights"
    saved = default_size - compressed_size
    assert 0.45 * weight_bytes <= saved <= 0.55 * weight_bytes, (
        f"fp16 weights should save about half of {weight_bytes} bytes, saved {saved}"
    )

    # The default keeps fp32: eager's results.
    assert_matches(default.run(inputs), eager(model, inputs))
    # Compressed: eager's results with the weights rounded to fp16 (computation is still f32), and
    # visibly not the fp32 weights' results.
    rounded = _seeded_model(_Wide)
    with torch.no_grad():
        for p in rounded.parameters():
            p.copy_(p.half().float())
    out = compressed.run(inputs)
    assert_matches(out, eager(rounded, inputs))
    assert not torch.allclose(out[0], eager(model, inputs)[0], rtol=0, atol=1e-6)
