"""Buffers a partition mutates (an LLM's KV caches), consumed by it so that they live in OpenVINO as
state (ir_passes/buffer_variables.py): ExecuTorch then neither passes them in nor copies them back."""

from __future__ import annotations

import logging

from ..fx_graph import DELEGATION_TAG
from .partitioning import Partitioning

logger = logging.getLogger(__name__)


def consume_mutated_buffers(partitioning: Partitioning) -> None:
    """Tags each mutated buffer whose readers and whose new value are all in one of our partitions
    with that partition's tag (partitioning.consumed_buffers: buffer name -> tag). Any other mutated
    buffer stays ExecuTorch's (copied in and out), with a log line saying why. Nothing is consumed
    when the partitioner was asked to keep them ExecuTorch's (stateful=False)."""
    if not partitioning.stateful:
        return
    program = partitioning.program
    signature = program.graph_signature
    mutation_of = {buffer: output for output, buffer in signature.buffers_to_mutate.items()}
    producers = {node.name: node for node in program.graph.nodes}
    for node in program.graph.nodes:
        buffer = signature.inputs_to_buffers.get(node.name) if node.op == "placeholder" else None
        if buffer not in mutation_of:
            continue
        new_value = producers.get(mutation_of[buffer])
        tags = {user.meta.get(DELEGATION_TAG) for user in node.users}
        tag = new_value.meta.get(DELEGATION_TAG) if new_value is not None else None
        if tag is None:
            logger.info("buffer %s stays ExecuTorch's: its new value is computed outside the delegate", buffer)
        elif tags != {tag}:
            logger.info("buffer %s stays ExecuTorch's: it is read outside the partition that updates it", buffer)
        else:
            node.meta[DELEGATION_TAG] = tag
            partitioning.consumed_buffers[buffer] = tag
