"""The partition ExecuTorch hands preprocess, as the one FX graph the frontend converts: weights as
stored constants (so they land in the IR's weights), the delegate's call inputs as placeholders.

A partition without mutated buffers is the program's module() (its lifted weights back as constants
of the graph). In one that mutates buffers (an LLM's KV caches, consumed by the partition: see
partition/mutated_buffers.py), each such buffer stays a placeholder and its new value an output, so
that ir_passes/buffer_variables.py can make it an OpenVINO variable; it is described by a ConsumedBuffer.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind

from ..fx_graph import store_constant


@dataclass(frozen=True)
class ConsumedBuffer:
    """A consumed buffer in the graph handed to the frontend."""

    name: str  # the buffer's fully qualified name: the OpenVINO variable id
    input_index: int  # its placeholder among the graph's placeholders
    output_index: int  # its new value among the graph's outputs
    initial: Optional[torch.Tensor]  # None when all zeros (OpenVINO's own initial value)


@dataclass
class PartitionGraph:
    module: torch.fx.GraphModule
    consumed_buffers: Tuple[ConsumedBuffer, ...] = ()


def partition_graph(edge_program: ExportedProgram) -> PartitionGraph:
    """The partition's graph for the frontend (see the module's docstring)."""
    if not edge_program.graph_signature.buffers_to_mutate:
        return PartitionGraph(edge_program.module())
    module, consumed = _inline_constants(edge_program)
    return PartitionGraph(module, tuple(consumed))


def _inline_constants(edge_program: ExportedProgram) -> Tuple[torch.fx.GraphModule, List[ConsumedBuffer]]:
    """The program's graph with parameters, constants and unmutated buffers turned into stored
    constants, mutated buffers kept as placeholders and their new values as outputs; and those
    buffers as ConsumedBuffers."""
    graph_module = copy.deepcopy(edge_program.graph_module)
    signature = edge_program.graph_signature
    mutated = set(signature.buffers_to_mutate.values())
    placeholders = {node.name: node for node in graph_module.graph.nodes if node.op == "placeholder"}
    kept: Dict[str, str] = {}  # placeholder name -> buffer name
    for spec in signature.input_specs:
        node = placeholders[spec.arg.name]
        if spec.kind == InputKind.USER_INPUT:
            continue
        if spec.kind == InputKind.BUFFER and spec.target in mutated:
            kept[node.name] = spec.target
            continue
        store_constant(graph_module, f"_executorch_openvino_constant_{len(placeholders)}_{node.name}",
                       _stored_value(edge_program, spec), replacing=node)
    graph_module.recompile()

    order = [node.name for node in graph_module.graph.nodes if node.op == "placeholder"]
    mutation_outputs = [spec.target for spec in signature.output_specs if spec.kind == OutputKind.BUFFER_MUTATION]
    consumed = []
    for name, buffer in kept.items():
        # Non-persistent buffers live among the program's constants.
        initial = edge_program.state_dict.get(buffer, edge_program.constants.get(buffer))
        consumed.append(ConsumedBuffer(buffer, order.index(name), mutation_outputs.index(buffer),
                            None if not bool(initial.any()) else initial.detach().clone()))
    return graph_module, consumed


def _stored_value(edge_program: ExportedProgram, spec) -> torch.Tensor:
    if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER) and spec.target in edge_program.state_dict:
        value = edge_program.state_dict[spec.target]
    else:
        value = edge_program.constants[spec.target]
    return value.detach() if isinstance(value, torch.nn.Parameter) else value
