"""The partitions themselves: the largest groups of nodes the node support takes, and the constants
they read."""

from __future__ import annotations

import operator

from executorch.exir.backend.utils import tag_constant_data
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner

from ..fx_graph import DELEGATION_TAG
from .partitioning import Partitioning

TAG_PREFIX = "executorch_openvino_"


def tag_partitions(partitioning: Partitioning) -> None:
    """Tags each group of nodes the node support takes with a partition tag of its own."""
    proposed = CapabilityBasedPartitioner(partitioning.program.graph_module, partitioning.support,
                                          allows_single_node_partition=True).propose_partitions()
    for partition in proposed:
        # A partition of nothing but getitem nodes has no work to delegate.
        if all(node.target is operator.getitem for node in partition.nodes):
            continue
        tag = f"{TAG_PREFIX}{partition.id}"
        for node in partition.nodes:
            node.meta[DELEGATION_TAG] = tag
        partitioning.tags[tag] = partitioning.delegation_spec


def tag_constants(partitioning: Partitioning) -> None:
    """ExecuTorch's own step: the weights and buffers only our partitions read go with them."""
    tag_constant_data(partitioning.program)
