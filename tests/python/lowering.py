"""Small helpers the Python tests share: a small network, lowering to a .pte in memory, loading
its forward method, and what a lowered graph delegated."""

from __future__ import annotations

import operator
from typing import List

import torch
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime

import executorch_openvino
from executorch_openvino.op_support import op_name

DELEGATE_CALL = torch.ops.higher_order.executorch_call_delegate


class SmallNet(torch.nn.Module):
    """Conv, ReLU, pooling and a linear layer: fully delegated unless told otherwise."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).mean((2, 3)))


def lower(programs, inputs=None, **partitioner_options) -> bytes:
    """A .pte of `programs` (an ExportedProgram, a dict of them, or a module exported with
    `inputs`) lowered with OpenvinoPartitioner(**partitioner_options)."""
    if isinstance(programs, torch.nn.Module):
        programs = torch.export.export(programs, inputs)
    partitioner = executorch_openvino.OpenvinoPartitioner(**partitioner_options)
    return to_edge_transform_and_lower(programs, partitioner=[partitioner]).to_executorch().buffer


def small_net_program(seed: int = 0, **partitioner_options) -> tuple:
    """(a seeded SmallNet, an input for it, its .pte lowered with OpenvinoPartitioner(**partitioner_options))."""
    torch.manual_seed(seed)
    model = SmallNet().eval()
    x = torch.randn(1, 3, 12, 12)
    return model, x, lower(model, (x,), **partitioner_options)


def load_forward(pte):
    """The forward method of a program (bytes or a path) loaded through executorch.runtime."""
    return Runtime.get().load_program(pte).load_method("forward")


def delegate_calls(graph: torch.fx.Graph) -> List[torch.fx.Node]:
    return [n for n in graph.nodes if n.op == "call_function" and n.target is DELEGATE_CALL]


def outside_ops(graph: torch.fx.Graph) -> List[str]:
    """The operators left on ExecuTorch's own kernels."""
    return [
        op_name(n.target)
        for n in graph.nodes
        if n.op == "call_function" and n.target is not DELEGATE_CALL and n.target is not operator.getitem
    ]


def blob_ir(processed: bytes):
    """The OpenVINO model (ov.Model) inside one of our delegate blobs."""
    import numpy as np
    import openvino as ov

    from executorch_openvino.blob import parse_blob

    blob = parse_blob(processed)
    weights = ov.Tensor(np.frombuffer(bytes(blob.ir_weights), np.uint8).copy())
    return ov.Core().read_model(bytes(blob.ir_xml).decode(), weights)
