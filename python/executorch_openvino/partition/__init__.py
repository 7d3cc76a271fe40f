"""Stage 1 of lowering: which nodes the delegate takes, and why not the others. Each node is asked of
the stages below (would they compute it exactly?); what OpenVINO runs best whole is kept whole
through to_edge; the partitions are tagged with what preprocess needs to know of them."""

from __future__ import annotations

from . import equal_values, external_weights, mutated_buffers, scalar_boundaries, tagging
from .kept_whole import keep_whole
from .op_support import NodeSupport, OpSpec
from .partitioning import Partitioning

# In order: each step reads and tags partitioning.program.
STEPS = (
    tagging.tag_partitions,  # the groups of nodes NodeSupport takes
    scalar_boundaries.untag_scalar_outputs,  # a delegate hands back tensors only
    scalar_boundaries.untag_scalar_feeders,  # partitions that only feed .item() are not worth a call
    mutated_buffers.consume_mutated_buffers,  # KV caches into OpenVINO state
    tagging.tag_constants,  # ExecuTorch's: the weights go with the partitions reading them
    external_weights.tag_delegated_constants,  # to a .ptd, when asked
    equal_values.mark_equal_values,  # once the tags are final
)

__all__ = ["NodeSupport", "OpSpec", "Partitioning", "STEPS", "keep_whole", "run"]


def run(partitioning: Partitioning) -> Partitioning:
    """Runs every step, in order; returns `partitioning`."""
    for step in STEPS:
        step(partitioning)
    return partitioning
