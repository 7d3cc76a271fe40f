"""What every ahead-of-time stage reads off an FX graph: an operator's name, the tensors a node stands
for, a stored constant, and the node meta keys one stage leaves for the next."""

from __future__ import annotations

from typing import List, Optional

import torch

# ExecuTorch's: the partition a node belongs to (set by the partitioner, read by to_backend).
DELEGATION_TAG = "delegation_tag"
# Ours, on each node a partition reads from outside it: the name of the first node of the same value
# (partition/equal_values.py writes it, ir_passes/equal_inputs.py reads it).
VALUE_KEY = "executorch_openvino_value"


def op_name(target) -> str:
    """A node target's name, e.g. "aten.convolution.default" (edge and ATen ops alike)."""
    # An edge-dialect op wraps its ATen OpOverload in `_op` (an ATen OpOverload's own `_op` is its
    # C++ function, so it is taken as is).
    overload = aten_overload(target)
    if isinstance(overload, torch._ops.OpOverload):
        name = overload.name().replace("::", ".")  # "aten.add.Tensor", or "aten.relu" for .default
        return name if name.count(".") >= 2 else f"{name}.default"
    if isinstance(target, torch._ops.OpOverloadPacket):
        return target._qualified_op_name.replace("::", ".")
    return getattr(target, "__name__", str(target))


def aten_overload(target):
    """The OpOverload behind a node target: itself, or the one an edge-dialect op wraps."""
    return target if isinstance(target, torch._ops.OpOverload) else getattr(target, "_op", target)


def tensors(value) -> List[torch.Tensor]:
    """The tensors in a node's value (a tensor, or nested lists and tuples of them)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors(v)]
    return []


def stored_constant(graph_module: torch.fx.GraphModule, node) -> Optional[torch.Tensor]:
    """The tensor behind a get_attr node, or None when `node` is not a stored constant."""
    if not isinstance(node, torch.fx.Node) or node.op != "get_attr":
        return None
    owner = graph_module
    for part in node.target.split("."):
        owner = getattr(owner, part, None)
    return owner if isinstance(owner, torch.Tensor) else None


def store_constant(graph_module: torch.fx.GraphModule, name: str, value: torch.Tensor,
                   replacing: torch.fx.Node) -> torch.fx.Node:
    """Registers `value` on the graph module under `name` and puts a get_attr of it in the place of
    the node `replacing` (which is erased); returns the get_attr node."""
    graph = graph_module.graph
    graph_module.register_buffer(name, value)
    with graph.inserting_before(replacing):
        stored = graph.get_attr(name)
    stored.meta.update(replacing.meta)
    replacing.replace_all_uses_with(stored)
    graph.erase_node(replacing)
    return stored
