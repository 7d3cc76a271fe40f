"""Stage 2 of lowering: the FX graph rewritten, before conversion, into ATen calls whose OpenVINO
translation computes what eager PyTorch computes. The partitioner's node-by-node probe and
preprocess's whole partition run the same passes, so both convert the same graph."""

from __future__ import annotations

import torch
from torch.export import ExportedProgram

from . import constant_folding, dim_order, llm_custom_ops, quantize_ops
from .ops import UnsupportedCase, rewrite_operators
from .partition_graph import ConsumedBuffer, PartitionGraph, partition_graph

# In order: each pass rewrites the graph in place.
PASSES = (
    dim_order.revert_dim_order_ops,  # the frontend knows the ATen copies, not ExecuTorch's dim-order ones
    llm_custom_ops.spell_out,  # ExecuTorch's LLM custom ops as ATen
    constant_folding.fold_integer_weights,  # before the op rewrites: PyTorch computes stored integers exactly
    rewrite_operators,  # ops/: one family of operators a module
    constant_folding.fold_constants,  # what depends on no input, computed by PyTorch
    quantize_ops.spell_out_unpaired_quantization,
)

__all__ = ["PASSES", "ConsumedBuffer", "PartitionGraph", "UnsupportedCase", "prepare", "rewrite"]


def rewrite(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Runs every pass, in order, on `graph_module` (in place); returns it."""
    for run in PASSES:
        run(graph_module)
    return graph_module


def prepare(edge_program: ExportedProgram) -> PartitionGraph:
    """The partition's graph for the frontend (partition_graph.py), rewritten."""
    graph = partition_graph(edge_program)
    rewrite(graph.module)
    return graph
