"""Symbolic scalars at partition boundaries (a dynamic sequence length, a position read with
.item()): a partition may read one as an input (the delegate takes ExecuTorch's Int value for a
rank-0 input), but never hands one back, since a delegate returns tensors only. And a partition
whose only job is to pick elements that ExecuTorch turns into scalars is not worth a delegate call.
"""

from __future__ import annotations

import logging
from typing import Dict, List, Set

import torch

logger = logging.getLogger(__name__)

_TAG = "delegation_tag"
_ITEM = "aten._local_scalar_dense.default"


def _is_tensor_value(node: torch.fx.Node) -> bool:
    value = node.meta.get("val")
    if isinstance(value, (list, tuple)):
        return all(isinstance(v, torch.Tensor) for v in value)
    return isinstance(value, torch.Tensor)


def untag_scalar_outputs(graph: torch.fx.Graph) -> List[str]:
    """Leaves to ExecuTorch each tagged node that makes a non-tensor value read outside its
    partition (e.g. aten.sym_size.int); repeated until no such node is left. Returns their names."""
    untagged = []
    changed = True
    while changed:
        changed = False
        for node in graph.nodes:
            tag = node.meta.get(_TAG)
            if tag is None or _is_tensor_value(node):
                continue
            if any(user.meta.get(_TAG) != tag for user in node.users):
                del node.meta[_TAG]
                untagged.append(node.name)
                changed = True
    return untagged


def untag_scalar_feeders(graph: torch.fx.Graph) -> Set[str]:
    """Leaves to ExecuTorch the partitions whose every value read outside them only becomes a
    scalar there (each reader is an .item()). Returns their tags."""
    from .op_support import op_name

    members: Dict[str, List[torch.fx.Node]] = {}
    for node in graph.nodes:
        if node.meta.get(_TAG) is not None:
            members.setdefault(node.meta[_TAG], []).append(node)
    dropped = set()
    for tag, nodes in members.items():
        readers = [user for node in nodes for user in node.users if user.meta.get(_TAG) != tag]
        if readers and all(reader.op == "call_function" and op_name(reader.target) == _ITEM for reader in readers):
            for node in nodes:
                del node.meta[_TAG]
            dropped.add(tag)
            logger.info("left to ExecuTorch: %d node(s) that only feed .item() (%s)", len(nodes),
                        ", ".join(node.name for node in nodes[:5]))
    return dropped
