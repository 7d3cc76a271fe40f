"""ExecuTorch's dim-order copies back into the ATen ops they stand for.

The edge dialect expresses copies with an explicit dim order; OpenVINO's frontend knows only the ATen
ops. With the default (contiguous) dim order they are the same; any other order is refused by the
partitioner (OpenVINO's dense tensors cannot express it).
"""

from __future__ import annotations

import torch

from ..fx_graph import op_name

_DIM_ORDER_OPS = {
    "dim_order_ops._clone_dim_order.default": torch.ops.aten.clone.default,
    "dim_order_ops._to_dim_order_copy.default": torch.ops.aten._to_copy.default,
    "dim_order_ops._empty_dim_order.default": torch.ops.aten.empty.memory_format,
}

DIM_ORDER_OP_NAMES = frozenset(_DIM_ORDER_OPS)


def dim_order_op_replacement(node: torch.fx.Node):
    """The ATen op that computes the same as this dim-order copy, or None when the node is not
    one or asks for a non-contiguous dim order."""
    replacement = _DIM_ORDER_OPS.get(op_name(node.target)) if node.op == "call_function" else None
    if replacement is None:
        return None
    dim_order = node.kwargs.get("dim_order")
    value = node.meta.get("val")
    rank = value.dim() if isinstance(value, torch.Tensor) else None
    if dim_order not in (None, []) and list(dim_order) != list(range(rank if rank is not None else -1)):
        return None
    return replacement


def revert_dim_order_ops(graph_module: torch.fx.GraphModule) -> None:
    """Rewrites contiguous dim-order copies into their ATen ops, in place."""
    for node in graph_module.graph.nodes:
        replacement = dim_order_op_replacement(node)
        if replacement is not None:
            node.target = replacement
            node.kwargs = {k: v for k, v in node.kwargs.items() if k != "dim_order"}
    graph_module.recompile()
