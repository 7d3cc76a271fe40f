"""Rewrites of single operators that OpenVINO's frontend has no rule for, or translates into something
its CPU plugin computes differently from PyTorch. Each module handles one family of operators and
replaces a node with ATen calls whose OpenVINO translation is exact, or raises UnsupportedCase, which
the partitioner reports as the reason it refuses the node."""

from __future__ import annotations

import torch

from ...fx_graph import op_name
from . import (avg_pooling, bit_shifts, embedding_bag, index_origin, integer_division, median, multi_index,
               recurrent, round_decimals, trunc, whole_ops)
from .builder import UnsupportedCase, replace_node

__all__ = ["UnsupportedCase", "rewrite_operators"]

# op name -> (graph_module, node) -> replacement value (a node, or a tuple of nodes for an op
# with several outputs), or None when the node is fine as it is.
_REWRITES = {
    **integer_division.REWRITES,
    **avg_pooling.REWRITES,
    **median.REWRITES,
    **embedding_bag.REWRITES,
    **round_decimals.REWRITES,
    **trunc.REWRITES,
    **multi_index.REWRITES,
    **recurrent.REWRITES,
    **whole_ops.REWRITES,
    **bit_shifts.REWRITES,
    **index_origin.REWRITES,
}


def rewrite_operators(graph_module: torch.fx.GraphModule) -> None:
    """Rewrites, in place, every node one of the modules handles."""
    changed = False
    for node in list(graph_module.graph.nodes):
        rewrite = _REWRITES.get(op_name(node.target)) if node.op == "call_function" else None
        if rewrite is None:
            continue
        name = node.name
        replacement = rewrite(graph_module, node)
        if replacement is not None:
            replace_node(graph_module.graph, node, replacement)
            changed = True
        elif node.name != name:  # renamed in place (index_origin.py): the code is made once, below
            changed = True
    if changed:
        graph_module.graph.eliminate_dead_code()
        graph_module.recompile()
