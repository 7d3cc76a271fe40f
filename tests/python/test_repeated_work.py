"""Partition inputs that are one value read once (python/executorch_openvino/repeated_work.py):
ExecuTorch's Llama slices a mask of its own per layer with a position of its own per layer, outside
the delegate; the IR reads the first of each and leaves the repeats unread. That the Llama's greedy
ids still equal eager over 64 steps with this in place is test_llm_state's."""

from __future__ import annotations

import openvino as ov
import torch
from executorch.exir import to_edge_transform_and_lower

import executorch_openvino
from executorch_openvino import repeated_work
from lowering import blob_ir, delegate_calls, load_forward
from test_llm_state import lowered


def read_inputs(ir: ov.Model) -> dict:
    """Each input of the IR -> whether anything reads it."""
    return {p.get_friendly_name(): bool(p.output(0).get_target_inputs()) for p in ir.get_parameters()}


def test_each_layers_mask_and_position_are_read_once():
    case = lowered("dynamic_prompt")  # two layers
    masks = [p for p in case.ir.get_parameters() if p.get_element_type() == ov.Type.boolean]
    positions = [p for p in case.ir.get_parameters() if p.get_friendly_name().startswith("scalar_tensor")]
    assert len(masks) == 2 and len(positions) == 2, [p.get_friendly_name() for p in case.ir.get_parameters()]
    for inputs in (masks, positions):
        assert [bool(p.output(0).get_target_inputs()) for p in inputs] == [True, False]
    # The prompt length (sym_size of the tokens, computed outside) is read from the tokens' shape.
    read = read_inputs(case.ir)
    sizes = [name for name in read if name.startswith("sym_size")]
    assert sizes and not any(read[name] for name in sizes), read
    tokens = case.ir.input(0).get_node()
    assert any(t.get_node().get_type_name() == "ShapeOf" for t in tokens.output(0).get_target_inputs())
    # Every other input is read: nothing of another value was taken for a repeat.
    assert sum(not r for r in read.values()) == 2 + len(sizes), read


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
    edge = to_edge_transform_and_lower(torch.export.export(model, (x, y, torch.tensor([3]))),
                                       partitioner=[executorch_openvino.OpenvinoPartitioner()])
    graph_module = edge.exported_program().graph_module
    (call,) = delegate_calls(graph_module.graph)
    read = read_inputs(blob_ir(getattr(graph_module, call.args[0].target).processed_bytes))
    # x, y, and the slices of a, b and c: b's is a's, c's and the user inputs stay their own.
    assert len(read) == 5 and sum(read.values()) == 4, read
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
    assert repeated_work.equal_buffers(program) == {"also_zeros": "zeros"}
