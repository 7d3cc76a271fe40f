"""The delegated weights marked for a data file (.ptd) beside the program, as ExecuTorch's
external_constants_pass marks constants (container/named_weights.py stores them)."""

from __future__ import annotations

from ..container.named_weights import TAG_FIELD, tag_of
from ..fx_graph import DELEGATION_TAG
from .partitioning import Partitioning


def tag_delegated_constants(partitioning: Partitioning) -> None:
    """Marks the constants given to our partitions for the data file partitioning.external_weights,
    leaving constants the user tagged already as they are."""
    tag = partitioning.external_weights
    if tag is None:
        return
    for node in partitioning.program.graph.nodes:
        if node.op == "placeholder" and node.meta.get(DELEGATION_TAG) in partitioning.tags and tag_of(node) is None:
            node.meta.setdefault("custom", {})[TAG_FIELD] = tag
