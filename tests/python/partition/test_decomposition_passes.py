"""How many times ExecuTorch decomposes the graph for our partitioner, and what it keeps whole.

A partitioner that hands ExecuTorch a check function makes to_edge decompose the whole graph twice
more instead of once (its EDGE_DO_NOT_DECOMP path): a third of the decomposition time of an LLM's
export. The partitioner asks for that path only for a bit shift of something other than a stored
weight: NNCF's int4 weights, whose unpacking shift is renamed before decomposition
(partition/kept_whole.py), and float programs take the short one, and compute as eager does."""

from __future__ import annotations

from unittest import mock

import torch
from torch import nn
from torch.export import ExportedProgram, export

import executorch_openvino
from executorch.exir import to_edge_transform_and_lower
from executorch_openvino.quantization import compress_weights_int4
import quantized_cases
from lowering import delegate_calls, load_forward, outside_ops

SHIFT = torch.ops.aten.bitwise_right_shift.Tensor_Scalar


class Float(nn.Module):
    def __init__(self):
        super().__init__()
        self.first, self.second = nn.Linear(64, 64), nn.Linear(64, 32)

    def forward(self, x):
        return self.second(torch.relu(self.first(x)))


def _lower(program: ExportedProgram):
    """The lowered program, ops_to_not_decompose's answer and how many times the graph was decomposed."""
    partitioner = executorch_openvino.OpenvinoPartitioner()
    answers, real = [], ExportedProgram.run_decompositions
    calls = []

    def counted(self, *args, **kwargs):
        calls.append(1)
        return real(self, *args, **kwargs)

    asked = partitioner.ops_to_not_decompose

    def recorded(program):
        answers.append(asked(program))
        return answers[-1]

    with mock.patch.object(ExportedProgram, "run_decompositions", counted), \
            mock.patch.object(partitioner, "ops_to_not_decompose", recorded):
        edge = to_edge_transform_and_lower(program, partitioner=[partitioner])
    return edge, answers[0], len(calls)


def test_a_float_program_is_decomposed_once_after_functionalization():
    model, x = Float().eval(), torch.randn(3, 64)
    edge, (ops, check), decompositions = _lower(export(model, (x,)))
    assert (ops, check) == ([], None)
    assert decompositions == 2  # functionalization, then the core ATen table
    graph = edge.exported_program().graph_module.graph
    assert len(delegate_calls(graph)) == 1 and outside_ops(graph) == []
    (out,) = load_forward(edge.to_executorch().buffer).execute((x,))
    torch.testing.assert_close(out, model(x), rtol=1e-5, atol=1e-5)


def test_int4_weights_are_decomposed_once_after_functionalization():
    model, x = Float().eval(), torch.randn(3, 64)
    program = compress_weights_int4(model, (x,), group_size=32)
    shifts = [n for n in program.graph_module.graph.nodes if n.target is SHIFT]
    assert shifts, "NNCF no longer unpacks int4 with a shift: this test no longer sees the path it is about"
    edge, (ops, check), decompositions = _lower(program)
    assert (ops, check) == ([], None)  # the shifts were renamed before decomposition (kept_whole.py)
    assert decompositions == 2
    graph = edge.exported_program().graph_module.graph
    assert len(delegate_calls(graph)) == 1 and outside_ops(graph) == []
    (out,) = load_forward(edge.to_executorch().buffer).execute((x,))
    # OpenVINO may quantize the activations on the fly: the bound docs/quantization.md gives for that.
    (error,) = quantized_cases.relative_errors([out.detach().numpy()], [program.module()(x).detach().numpy()])
    assert error <= quantized_cases.WEIGHTS_DYNAMIC_WORST

