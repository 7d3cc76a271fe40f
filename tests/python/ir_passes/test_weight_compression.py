"""The partitioner's `weights` argument: NNCF's weight-only compression applied to the partition's
OpenVINO model (ir_passes/weight_compression.py). The delegate's contract is native OpenVINO's
result on the same compression: optimum-intel's way (convert, then nncf.compress_weights on the IR)."""

from __future__ import annotations

import nncf
import numpy as np
import openvino as ov
import pytest
import torch
from executorch.exir import to_edge_transform_and_lower

import executorch_openvino
from executorch_openvino.container import compile_specs
from lowering import blob_ir, delegate_calls, load_forward

MODES = {"int8": "INT8_ASYM", "int8_sym": "INT8_SYM", "int4": "INT4_SYM", "int4_asym": "INT4_ASYM"}


class Tiny(torch.nn.Module):
    """An embedding, two hidden layers and an output layer: NNCF's int4 modes keep the first and last
    in 8 bits."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = torch.nn.Embedding(100, 64)
        self.up, self.down, self.out = torch.nn.Linear(64, 256), torch.nn.Linear(256, 64), torch.nn.Linear(64, 100)

    def forward(self, ids):
        return self.out(self.down(torch.nn.functional.gelu(self.up(self.embed(ids)))))


def _lowered(weights, group_size=None):
    model, ids = Tiny().eval(), torch.randint(0, 100, (1, 8), generator=torch.Generator().manual_seed(1))
    edge = to_edge_transform_and_lower(torch.export.export(model, (ids,)), partitioner=[
        executorch_openvino.OpenvinoPartitioner(weights=weights, group_size=group_size)])
    return model, ids, edge


def _native(model, ids, weights, group_size):
    converted = ov.convert_model(torch.export.export(model, (ids,)))
    extra = {"group_size": group_size} if weights.startswith("int4") else {}
    compressed = nncf.compress_weights(converted, mode=getattr(nncf.CompressWeightsMode, MODES[weights]), **extra)
    compiled = ov.Core().compile_model(compressed, "CPU", _properties(weights, group_size))
    return torch.from_numpy(compiled([ids.numpy()])[0])


def _properties(weights, group_size):
    """What the delegate compiles such a program with (f32, and int8's activation group on the CPU:
    compile_specs.load_time_properties), so native OpenVINO runs the same properties."""
    return compile_specs.load_time_properties("CPU", {}, None, f"{weights}:{group_size or 0}")


@pytest.mark.parametrize("weights,group_size", [("int8", None), ("int8_sym", None), ("int4", 32), ("int4_asym", 16)])
def test_the_delegate_computes_what_native_openvino_computes_on_the_same_compression(weights, group_size):
    model, ids, edge = _lowered(weights, group_size)
    ours = load_forward(edge.to_executorch().buffer).execute([ids])[0]
    native = _native(model, ids, weights, group_size)
    assert torch.equal(ours, native), (ours - native).abs().max()
    eager = model(ids).detach()
    assert 0 < (ours - eager).abs().max() < 0.1 * eager.abs().max()  # compressed, and close


@pytest.mark.parametrize("weights,group_size,low_bits", [("int8", None, {"u8"}), ("int4", 32, {"i4", "u8"}),
                                                         ("int4_asym", 32, {"u4", "u8"})])
def test_the_ir_holds_the_weights_in_their_compressed_types(weights, group_size, low_bits):
    _, _, edge = _lowered(weights, group_size)
    graph_module = edge.exported_program().graph_module
    (call,) = delegate_calls(graph_module.graph)
    lowered = getattr(graph_module, call.args[0].target)
    model = blob_ir(lowered.processed_bytes)
    types = {op.get_output_element_type(0).get_type_name() for op in model.get_ops() if op.get_type_name() == "Constant"
             and op.get_output_element_type(0).get_type_name() in ("u8", "i8", "u4", "i4")}
    assert low_bits <= types, types  # int4: the hidden layers 4-bit, the embedding and output layer u8
    spec = {s.key: bytes(s.value).decode() for s in lowered.compile_specs}
    assert spec[compile_specs.WEIGHTS] == f"{weights}:{group_size or 0}"


def test_uncompressed_programs_say_nothing_of_weights():
    _, _, edge = _lowered(None)
    graph_module = edge.exported_program().graph_module
    (call,) = delegate_calls(graph_module.graph)
    assert compile_specs.WEIGHTS not in {s.key for s in getattr(graph_module, call.args[0].target).compile_specs}


@pytest.mark.parametrize("arguments,message", [
    ({"weights": "int3"}, "weights takes one of int8, int8_sym, int4, int4_asym"),
    ({"weights": "int8", "group_size": 64}, "per output channel"),
    ({"group_size": 64}, "group_size is an option of weights='int4'"),
    ({"weights": "int4", "group_size": 0}, "group_size takes a positive number"),
    ({"weights": "int4", "compile_options": {"compress_to_fp16": True}}, "both choose how the weights are stored"),
])
def test_wrong_arguments_are_refused_when_the_partitioner_is_made(arguments, message):
    with pytest.raises(ValueError, match=message):
        executorch_openvino.OpenvinoPartitioner(**arguments)


def test_a_group_size_that_divides_no_layer_is_refused_naming_the_option():
    with pytest.raises(Exception, match="group_size=48"):
        _lowered("int4", 48)


class Rotary(torch.nn.Module):
    """A rotary embedding's angles (a [1, 8, 1] constant times the positions) beside a linear layer."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.register_buffer("inv_freq", torch.rand(1, 8, 1))
        self.linear = torch.nn.Linear(32, 16)

    def forward(self, x, positions):
        angles = self.inv_freq @ positions[:, None, :].float()  # [1, 8, n]
        return self.linear(x) + angles.sum(1, keepdim=True).transpose(1, 2).cos()


def test_a_product_with_a_constant_vector_is_no_layer_to_compress():
    # NNCF takes any MatMul with a constant operand for a layer; int4 in groups then fails on the
    # rotary frequencies (one channel), and int8 would move every rotation.
    model, x, positions = Rotary().eval(), torch.randn(1, 4, 32), torch.arange(4)[None]
    edge = to_edge_transform_and_lower(torch.export.export(model, (x, positions)), partitioner=[
        executorch_openvino.OpenvinoPartitioner(weights="int4", group_size=16)])
    graph_module = edge.exported_program().graph_module
    (call,) = delegate_calls(graph_module.graph)
    ir = blob_ir(getattr(graph_module, call.args[0].target).processed_bytes)
    frequencies = [op for op in ir.get_ops() if op.get_type_name() == "Constant" and list(op.get_output_shape(0)) == [1, 8, 1]]
    assert [op.get_output_element_type(0).get_type_name() for op in frequencies] == ["f32"]
    ours = load_forward(edge.to_executorch().buffer).execute([x, positions])[0]
    assert (ours - model(x, positions).detach()).abs().max() > 1e-4  # the linear layer was compressed


class Wide(torch.nn.Module):
    """Linear layers past the size fx_passes fold to constants before conversion (SmolLM2-135M's MLP
    widths): their weights reach the IR as Transpose(Constant) unless read as stored."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.up, self.down = torch.nn.Linear(576, 1536, bias=False), torch.nn.Linear(1536, 576, bias=False)

    def forward(self, x):
        return self.down(torch.nn.functional.silu(self.up(x)))


@pytest.mark.parametrize("weights,group_size", [("int8", None), ("int4", 64)])
def test_wide_layers_are_compressed_and_equal_native_openvino(weights, group_size):
    model, x = Wide().eval(), torch.randn(1, 4, 576, generator=torch.Generator().manual_seed(1))
    edge = to_edge_transform_and_lower(torch.export.export(model, (x,)), partitioner=[
        executorch_openvino.OpenvinoPartitioner(weights=weights, group_size=group_size)])
    graph_module = edge.exported_program().graph_module
    (call,) = delegate_calls(graph_module.graph)
    ir = blob_ir(getattr(graph_module, call.args[0].target).processed_bytes)
    floats = [op for op in ir.get_ops() if op.get_type_name() == "Constant" and op.get_output_element_type(0).is_real()
              and op.get_output_size() and np.prod(list(op.get_output_shape(0))) >= 576 * 576]
    assert floats == [], "a wide weight left in float"  # both layers compressed
    ours = load_forward(edge.to_executorch().buffer).execute([x])[0]
    converted = ov.convert_model(torch.export.export(model, (x,)))
    extra = {"group_size": group_size} if group_size else {}
    native_model = nncf.compress_weights(converted, mode=getattr(nncf.CompressWeightsMode, MODES[weights]), **extra)
    native = ov.Core().compile_model(native_model, "CPU", _properties(weights, group_size))([x.numpy()])[0]
    assert torch.equal(ours, torch.from_numpy(native)), (ours - torch.from_numpy(native)).abs().max()


def test_uncompressed_wide_layers_read_their_weights_as_stored_and_equal_eager():
    # MatMul(x, W, transpose_b), not MatMul(x, Transpose(W)): the CPU plugin then holds no transposed
    # copy of each weight while it compiles.
    model, x = Wide().eval(), torch.randn(1, 4, 576, generator=torch.Generator().manual_seed(1))
    edge = to_edge_transform_and_lower(torch.export.export(model, (x,)),
                                       partitioner=[executorch_openvino.OpenvinoPartitioner()])
    graph_module = edge.exported_program().graph_module
    (call,) = delegate_calls(graph_module.graph)
    ir = blob_ir(getattr(graph_module, call.args[0].target).processed_bytes)
    products = [op for op in ir.get_ops() if op.get_type_name() == "MatMul"]
    assert len(products) == 2 and all(op.get_attributes()["transpose_b"] for op in products)
    assert all(op.input_value(1).get_node().get_type_name() == "Constant" for op in products)
    ours = load_forward(edge.to_executorch().buffer).execute([x])[0]
    torch.testing.assert_close(ours, model(x).detach(), rtol=1e-5, atol=1e-5)
