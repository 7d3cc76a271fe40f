"""Small helpers the Python tests share: a small network, and lowering to a .pte in memory."""

from __future__ import annotations

import torch
from executorch.exir import to_edge_transform_and_lower

import executorch_openvino


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
