"""Symbolic scalars at partition boundaries (a dynamic sequence length, a position read with
.item()): a partition may read one as an input (the delegate takes ExecuTorch's Int value for a
rank-0 input), but never hands one back, since a delegate returns tensors only. And a partition
whose only job is to pick elements that ExecuTorch turns into scalars is not worth a delegate call.
"""

from __future__ import annotations

import logging
from typing import Dict, List

import torch

from ..fx_graph import DELEGATION_TAG, op_name
from .partitioning import Partitioning

logger = logging.getLogger(__name__)

_ITEM = "aten._local_scalar_dense.default"


def _is_tensor_value(node: torch.fx.Node) -> bool:
    value = node.meta.get("val")
    if isinstance(value, (list, tuple)):
        return all(isinstance(v, torch.Tensor) for v in value)
    return isinstance(value, torch.Tensor)


def untag_scalar_outputs(partitioning: Partitioning) -> None:
    """Leaves to ExecuTorch each tagged node that makes a non-tensor value read outside its
    partition (e.g. aten.sym_size.int); repeated until no such node is left."""
    graph = partitioning.program.graph
    untagged = []
    changed = True
    while changed:
        changed = False
        for node in graph.nodes:
            tag = node.meta.get(DELEGATION_TAG)
            if tag is None or _is_tensor_value(node):
                continue
            if any(user.meta.get(DELEGATION_TAG) != tag for user in node.users):
                del node.meta[DELEGATION_TAG]
                untagged.append(node.name)
                changed = True
    if untagged:
        logger.info("left to ExecuTorch: %d node(s) whose scalar value is read outside (%s)", len(untagged),
                    ", ".join(untagged[:5]))


# Ops that pick elements of one tensor (their first argument) without computing.
_PICKS = ("aten.select_copy.", "aten.slice_copy.", "aten.unsqueeze_copy.", "aten.squeeze_copy.", "aten.view_copy.",
          "aten.select.", "aten.slice.", "aten.unsqueeze.", "aten.squeeze.", "aten.view.")


def _untag_picks_of_inputs(partitioning: Partitioning) -> None:
    """Leaves to ExecuTorch the chains of picks from a program input that end in an .item()
    (position_ids[0][0], position_ids = cache_position.unsqueeze(0)): picked inside a partition
    whose other nodes read that scalar, the partitioner splits the partition in two around it
    (optimum-executorch's Gemma 3 with custom caches: the unsqueeze and the picks apart from the
    layers)."""
    untagged = []
    for item in partitioning.program.graph.nodes:
        if item.op != "call_function" or op_name(item.target) != _ITEM or item.meta.get(DELEGATION_TAG) is not None:
            continue
        chain, value = [], item.args[0]
        while (isinstance(value, torch.fx.Node) and value.meta.get(DELEGATION_TAG) is not None
               and value.op == "call_function" and op_name(value.target).startswith(_PICKS)):
            chain.append(value)
            value = value.args[0]
        if chain and isinstance(value, torch.fx.Node) and value.op == "placeholder":
            for node in chain:
                del node.meta[DELEGATION_TAG]
            untagged.extend(node.name for node in chain)
    remaining = {node.meta.get(DELEGATION_TAG) for node in partitioning.program.graph.nodes}
    for tag in [tag for tag in partitioning.tags if tag not in remaining]:
        partitioning.tags.pop(tag)
    if untagged:
        logger.info("left to ExecuTorch: %d pick(s) of an input that ExecuTorch turns into scalars (%s)",
                    len(untagged), ", ".join(untagged[:5]))


def untag_scalar_feeders(partitioning: Partitioning) -> None:
    """Leaves to ExecuTorch the picks of an input that end in an .item(), and the partitions whose
    every value read outside them only becomes a scalar there (each reader is an .item()); their
    tags are dropped."""
    _untag_picks_of_inputs(partitioning)
    graph = partitioning.program.graph
    members: Dict[str, List[torch.fx.Node]] = {}
    for node in graph.nodes:
        if node.meta.get(DELEGATION_TAG) is not None:
            members.setdefault(node.meta[DELEGATION_TAG], []).append(node)
    for tag, nodes in members.items():
        readers = [user for node in nodes for user in node.users if user.meta.get(DELEGATION_TAG) != tag]
        if readers and all(reader.op == "call_function" and op_name(reader.target) == _ITEM for reader in readers):
            for node in nodes:
                del node.meta[DELEGATION_TAG]
            partitioning.tags.pop(tag, None)
            logger.info("left to ExecuTorch: %d node(s) that only feed .item() (%s)", len(nodes),
                        ", ".join(node.name for node in nodes[:5]))
