"""Partition inputs that are one value read once (partition/equal_values.py, ir_passes/equal_inputs.py):
ExecuTorch's Llama slices a mask of its own per layer with a position of its own per layer, outside
the delegate, with the prompt length; the IR reads the first of each, the length from the tokens'
shape, and the blob says which of the call's inputs the IR takes. That the Llama's greedy ids still
equal eager over 64 steps with this in place is ir_passes/test_buffer_variables.py's."""

from __future__ import annotations

import openvino as ov
import torch
from executorch.exir import to_edge_transform_and_lower

import executorch_openvino
from executorch_openvino.partition import equal_values
from executorch_openvino.container.blob import parse_blob
from llm_models import et_llama, export_et_llama
from lowering import blob_ir, delegate_calls, load_forward


def read_inputs(ir: ov.Model) -> dict:
    """Each input of the IR -> whether anything reads it."""
    return {p.get_friendly_name(): bool(p.output(0).get_target_inputs()) for p in ir.get_parameters()}


def lowered_call(exported):
    """The one delegate call of program `exported` lowered to us: its input arguments (nodes), its
    blob (parsed), its IR, and the edge program."""
    edge = to_edge_transform_and_lower(exported, partitioner=[executorch_openvino.OpenvinoPartitioner()])
    graph_module = edge.exported_program().graph_module
    (call,) = delegate_calls(graph_module.graph)
    processed = getattr(graph_module, call.args[0].target).processed_bytes
    return list(call.args[1:]), parse_blob(processed), blob_ir(processed), edge


def test_each_layers_mask_and_position_and_the_prompt_length_enter_the_ir_once():
    arguments, blob, ir, _ = lowered_call(export_et_llama(et_llama(True)))  # two layers, any prompt length
    # The call is unchanged: each layer's mask slice and position, and the prompt length, still cross.
    masks = [i for i, a in enumerate(arguments) if getattr(a.meta["val"], "dtype", None) == torch.bool]
    # Each layer's position crosses as the int ExecuTorch read with .item() (the delegate computes with it).
    positions = [i for i, a in enumerate(arguments) if a.name.startswith("_local_scalar_dense")]
    sizes = [i for i, a in enumerate(arguments) if a.name.startswith("sym_size")]
    assert len(masks) == 2 and len(positions) == 2 and sizes, [a.name for a in arguments]
    # The IR reads the first layer's mask and position only, and the length from the tokens' shape.
    assert blob.input_arguments.call_inputs == len(arguments)
    taken = set(blob.input_arguments.of_ir_input)
    assert [i in taken for i in masks] == [True, False] and [i in taken for i in positions] == [True, False]
    assert not taken & set(sizes)
    assert len(taken) == len(arguments) - 2 - len(sizes)
    # Everything left in the IR is read, and the tokens' shape gives the length.
    assert all(read_inputs(ir).values()) and len(ir.inputs) == len(taken), read_inputs(ir)
    tokens_input = ir.input(blob.input_arguments.of_ir_input.index(0)).get_node()
    assert any(t.get_node().get_type_name() == "ShapeOf" for t in tokens_input.output(0).get_target_inputs())


class Twins(torch.nn.Module):
    """Three tables sliced at a position read with .item() (outside the delegate): a and b equal, c not."""

    def __init__(self) -> None:
        super().__init__()
        table = torch.randn(16, 4)
        self.register_buffer("a", table.clone(), persistent=False)
        self.register_buffer("b", table.clone(), persistent=False)
        self.register_buffer("c", table + 1, persistent=False)

    def forward(self, x, y, pos):
        p = pos.item()
        torch._check(p >= 0)
        torch._check(p <= 12)
        return x * self.a.narrow(0, p, 4) + y * self.b.narrow(0, p, 4) + self.c.narrow(0, p, 4)


def test_slices_of_equal_tables_are_one_input_and_results_stay_eagers():
    torch.manual_seed(0)
    model = Twins().eval()
    x, y = torch.randn(4, 4), torch.randn(4, 4)
    arguments, blob, ir, edge = lowered_call(torch.export.export(model, (x, y, torch.tensor([3]))))
    # x, y, and the slices of a, b and c cross; b's is a's, so the IR reads the four others.
    assert len(arguments) == 5 and blob.input_arguments.call_inputs == 5
    assert len(blob.input_arguments.of_ir_input) == 4 and all(read_inputs(ir).values())
    method = load_forward(edge.to_executorch().buffer)
    for position in (0, 5, 12):
        x, y = torch.randn(4, 4), torch.randn(4, 4)
        (got,) = method.execute([x, y, torch.tensor([position])])
        torch.testing.assert_close(got, model(x, y, torch.tensor([position])), rtol=1e-6, atol=1e-6)


class TwoZeroBuffers(torch.nn.Module):
    """Two buffers of zeros, one of them written: a KV cache begins like its unwritten neighbour."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("cache", torch.zeros(4))
        self.register_buffer("zeros", torch.zeros(4))
        self.register_buffer("also_zeros", torch.zeros(4))

    def forward(self, x):
        self.cache.add_(x)
        return self.cache + self.zeros + self.also_zeros


def test_a_written_buffer_is_nobodys_twin():
    # Decomposed, as the partitioner sees it: the write is then an output of the graph.
    program = torch.export.export(TwoZeroBuffers(), (torch.ones(4),)).run_decompositions({})
    assert equal_values.equal_buffers(program) == {"also_zeros": "zeros"}
