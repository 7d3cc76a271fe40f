"""op_support: operator names, skip_ops / skip_nodes matching, and the dtype refusal."""

from __future__ import annotations

import operator

import pytest
import torch
from torch import nn

import executorch_openvino
from executorch.exir import to_edge
from executorch.exir.dialects._ops import ops as exir_ops
from executorch_openvino.fx_graph import op_name
from executorch_openvino.partition import NodeSupport
from lowering import assert_matches, eager, lower_and_load



# ---------------------------------------------------------------------------------------------
# op_name


@pytest.mark.parametrize(
    "target, name",
    [
        pytest.param(exir_ops.edge.aten.add.Tensor, "aten.add.Tensor", id="edge_overload"),
        pytest.param(exir_ops.edge.aten.relu.default, "aten.relu.default", id="edge_default"),
        pytest.param(exir_ops.edge.dim_order_ops._clone_dim_order.default, "dim_order_ops._clone_dim_order.default",
                     id="edge_other_namespace"),
        pytest.param(torch.ops.aten.relu, "aten.relu", id="aten_packet"),
        pytest.param(operator.getitem, "getitem", id="python_function"),
        pytest.param(torch.ops.aten.add.Tensor, "aten.add.Tensor", id="aten_overload"),
        pytest.param(torch.ops.aten.relu.default, "aten.relu.default", id="aten_default"),
    ],
)
def test_op_name(target, name):
    assert op_name(target) == name


# ---------------------------------------------------------------------------------------------
# skip_ops / skip_nodes matching, on an edge graph with two overloads of add and an addmm


class _Adds(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x, y):
        a = torch.ops.aten.add.Scalar(x, 2.0)
        b = torch.ops.aten.add.Tensor(a, y)
        return self.fc(b).relu()


@pytest.fixture(scope="module")
def adds_graph() -> torch.fx.Graph:
    torch.manual_seed(0)
    exported = torch.export.export(_Adds().eval(), (torch.randn(2, 8), torch.randn(2, 8)))
    return to_edge(exported).exported_program().graph


def _refused(graph: torch.fx.Graph, **skips) -> dict:
    support = NodeSupport(**skips)
    return {
        op_name(n.target): support.reason_to_refuse(n)
        for n in graph.nodes
        if n.op == "call_function" and support.reason_to_refuse(n) is not None
    }


def test_graph_has_the_ops_the_matching_tests_need(adds_graph):
    names = {op_name(n.target) for n in adds_graph.nodes if n.op == "call_function"}
    assert {"aten.add.Scalar", "aten.add.Tensor", "aten.addmm.default", "aten.relu.default"} <= names
    assert _refused(adds_graph) == {}, "every op of this graph is supported"


@pytest.mark.parametrize(
    "spec, refused",
    [
        pytest.param("aten.add", {"aten.add.Scalar", "aten.add.Tensor"}, id="packet_name_every_overload"),
        pytest.param("aten.add.Scalar", {"aten.add.Scalar"}, id="one_overload"),
        pytest.param("aten::add.Tensor", {"aten.add.Tensor"}, id="double_colon"),
        pytest.param("torch.ops.aten.add.Tensor", {"aten.add.Tensor"}, id="torch_ops_string"),
        pytest.param(torch.ops.aten.add, {"aten.add.Scalar", "aten.add.Tensor"}, id="packet_object"),
        pytest.param(exir_ops.edge.aten.add.Tensor, {"aten.add.Tensor"}, id="edge_overload_object"),
        pytest.param("aten.relu", {"aten.relu.default"}, id="default_overload_by_packet_name"),
        pytest.param("aten.ad", set(), id="no_prefix_match"),
        pytest.param("aten", set(), id="namespace_alone_matches_nothing"),
        pytest.param(torch.ops.aten.add.Tensor, {"aten.add.Tensor"}, id="aten_overload_object"),
    ],
)
def test_skip_ops_matching(adds_graph, spec, refused):
    reasons = _refused(adds_graph, skip_ops=[spec])
    assert set(reasons) == refused
    assert set(reasons.values()) <= {"excluded by skip_ops"}


def test_skip_nodes_matches_node_names_only(adds_graph):
    add_tensor = next(n for n in adds_graph.nodes if n.op == "call_function" and op_name(n.target) == "aten.add.Tensor")
    assert _refused(adds_graph, skip_nodes=[add_tensor.name]) == {"aten.add.Tensor": "excluded by skip_nodes"}
    assert _refused(adds_graph, skip_nodes=["aten.add.Tensor"]) == {}, "an op name is not a node name"


def test_skip_ops_lowered_program_runs_across_both_runtimes(tmp_path):
    torch.manual_seed(0)
    model, inputs = _Adds().eval(), (torch.randn(2, 8), torch.randn(2, 8))
    lowered = lower_and_load(model, inputs, tmp_path, skip_ops=["aten.add"])
    assert sorted(lowered.outside_ops) == ["aten.add.Scalar", "aten.add.Tensor"]
    assert lowered.backend_ids == [executorch_openvino.BACKEND_ID]
    assert_matches(lowered.run(inputs), eager(model, inputs))


# ---------------------------------------------------------------------------------------------
# float64 is never exchanged with OpenVINO (its CPU plugin would compute it in f32)


class _Float64(nn.Module):
    def forward(self, x):
        # Ops ExecuTorch's kernels compute exactly in float64 (its sum is not: see the report).
        return torch.relu(x * 2.0 + 1.0) * x


class _MixedFloat64(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        z = torch.maximum(y.double(), torch.zeros((), dtype=torch.float64)) * 3.0
        return torch.relu(z.float()) + y


def test_float64_model_is_not_delegated_and_runs_on_executorch(tmp_path):
    model, inputs = _Float64(), (torch.randn(3, 5, dtype=torch.float64),)
    lowered = lower_and_load(model, inputs, tmp_path)
    assert lowered.backend_ids == []
    assert lowered.outside_ops and lowered.refusals
    assert all("float64" in why for why in lowered.refusals.values()), lowered.refusals
    (out,) = lowered.run(inputs)
    assert out.dtype == torch.float64
    assert torch.equal(out, eager(model, inputs)[0])


def test_float64_part_stays_outside_and_the_rest_is_delegated(tmp_path):
    torch.manual_seed(0)
    model, inputs = _MixedFloat64().eval(), (torch.randn(4, 8),)
    lowered = lower_and_load(model, inputs, tmp_path)
    assert executorch_openvino.BACKEND_ID in lowered.backend_ids
    assert "aten.addmm.default" not in lowered.outside_ops, "the float32 linear is delegated"
    assert "aten.maximum.default" in lowered.outside_ops
    assert all("float64" in why for why in lowered.refusals.values()), lowered.refusals
    assert_matches(lowered.run(inputs), eager(model, inputs))


# ---------------------------------------------------------------------------------------------
# PT2E's quantize / dequantize ops where their integers are real: a program's int8 input or
# output. The delegate computes them as torch.ao does (fx_passes/quantize_ops.py spells them out as
# arithmetic), so integers match exactly and floats to float rounding. Pairs inside a quantized
# model (FakeQuantize) are tested in quantization/test_quantized.py.

import torch.ao.quantization.fx._decomposed  # noqa: E402,F401  (registers torch.ops.quantized_decomposed)

_QD = torch.ops.quantized_decomposed


class _DequantizePerTensor(nn.Module):
    def forward(self, q):
        return _QD.dequantize_per_tensor.default(q, 0.05, 3, -128, 127, torch.int8) * 2.0


class _QuantizePerTensor(nn.Module):
    def forward(self, x):
        return _QD.quantize_per_tensor.default(x * 2.0, 0.02, 128, 0, 255, torch.uint8)


class _PerChannel(nn.Module):
    """Per-channel dequantize of an int8 input along axis 1 with non-zero zero points, then
    per-channel quantize back along axis 1 (half of the values beyond the int8 range: clamped)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("scales", torch.tensor([0.01, 0.02, 0.05, 0.1]))
        self.register_buffer("zero_points", torch.tensor([0, 3, -5, 7]))

    def forward(self, q):
        x = _QD.dequantize_per_channel.default(q, self.scales, self.zero_points, 1, -128, 127, torch.int8)
        # x 2 is exact in float, so no rounding boundary depends on the order of operations.
        return _QD.quantize_per_channel.default(x * 2.0, self.scales, self.zero_points, 1, -128, 127, torch.int8)


class _TensorOverloads(nn.Module):
    """The .tensor overloads take the scale and zero point as 0-d tensors."""

    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.tensor(0.03))
        self.register_buffer("zero_point", torch.tensor(-4))

    def forward(self, x):
        q = _QD.quantize_per_tensor.tensor(x, self.scale, self.zero_point, -128, 127, torch.int8)
        return q, _QD.dequantize_per_tensor.tensor(q, self.scale, self.zero_point, -128, 127, torch.int8)


def _int8(*shape):
    return torch.randint(-128, 128, shape, dtype=torch.int8)


@pytest.mark.parametrize(
    "model, inputs",
    [
        pytest.param(_DequantizePerTensor(), lambda: (_int8(2, 3, 8),), id="dequantize_per_tensor_int8_input"),
        # Also values within float rounding of a boundary between two steps (x * 2 / 0.02 = n + 0.5).
        pytest.param(_QuantizePerTensor(), lambda: (torch.cat([torch.randn(64), torch.arange(-40, 40) * 0.01 + 0.005]),),
                     id="quantize_per_tensor_uint8_output"),
        pytest.param(_PerChannel(), lambda: (_int8(2, 4, 5),), id="per_channel_axis_1"),
        pytest.param(_TensorOverloads(), lambda: (torch.randn(3, 7) * 3,), id="tensor_overloads"),
    ],
)
def test_quantize_ops_with_real_integers_are_delegated_and_exact(model, inputs, tmp_path):
    torch.manual_seed(0)
    example = inputs()
    lowered = lower_and_load(model.eval(), example, tmp_path)
    assert lowered.backend_ids == [executorch_openvino.BACKEND_ID] and lowered.outside_ops == [], lowered.refusals
    for values in (example, inputs()):
        outputs, expected = lowered.run(values), eager(model, values)
        assert_matches(outputs, expected, rel_tol=1e-6)  # integer outputs: exactly
        assert any(not out.is_floating_point() for out in outputs) or isinstance(model, _DequantizePerTensor)


def test_quantize_op_verdicts_do_not_depend_on_the_scale(monkeypatch):
    """Every quantize / dequantize node has its own scale: the partitioner asks the frontend once
    per dtype and shape, not once per node."""
    from executorch_openvino import convert

    class _Chain(nn.Module):
        def forward(self, x):
            for i in range(6):
                scale = 0.01 * (i + 1)
                x = _QD.quantize_per_tensor.default(x, scale, 0, -128, 127, torch.int8)
                x = _QD.dequantize_per_tensor.default(x, scale, 0, -128, 127, torch.int8) + 1.0
            return x

    conversions = []
    real_convert = convert.to_openvino
    monkeypatch.setattr(convert, "to_openvino", lambda gm: conversions.append(gm) or real_convert(gm))
    graph = to_edge(torch.export.export(_Chain(), (torch.randn(4, 4),))).exported_program().graph
    support = NodeSupport()
    assert all(support.reason_to_refuse(n) is None for n in graph.nodes if n.op == "call_function")
    assert len(conversions) == 3, "one each for quantize, dequantize and add"


# ---------------------------------------------------------------------------------------------
# A dynamic size with no upper bound (Dim.AUTO where nothing limits it, as optimum-executorch
# exports ModernBERT's sequence): torch's integer infinity told sympy it was finite, and every
# node of that size was refused ("size not expressible as bounds"). ExecuTorch plans such an input's
# memory for the example's size, so that is the longest a call can be.


class _Rotated(nn.Module):
    def forward(self, x):
        angles = torch.arange(x.shape[1], dtype=torch.float32)[None, :, None]
        return x * torch.cos(angles) + torch.roll(x, 1, dims=2) * torch.sin(angles)


def test_a_dynamic_size_without_an_upper_bound_is_delegated_and_runs_at_any_length():
    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime

    from executorch_openvino.convert import shapes

    model = _Rotated().eval()
    exported = torch.export.export(model, (torch.randn(1, 8, 4),), dynamic_shapes=({1: torch.export.Dim.AUTO},))
    (size,) = [d for d in exported.graph_module.graph.find_nodes(op="placeholder")[0].meta["val"].shape
               if not isinstance(d, int)]
    assert shapes.bounds(size, exported.range_constraints)[1] == -1, "the size was expected to be unbounded"
    partitioner = executorch_openvino.OpenvinoPartitioner()
    lowered = to_edge_transform_and_lower(exported, partitioner=[partitioner])
    assert not {n: why for n, why in partitioner.last_support.refusals.items() if why != "not a call"}
    method = Runtime.get().load_program(lowered.to_executorch().buffer).load_method("forward")
    for length in (1, 5, 8):
        x = torch.randn(1, length, 4)
        assert_matches(method.execute([x]), eager(model, (x,)))
