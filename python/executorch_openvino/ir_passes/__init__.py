"""Stage 4 of lowering: the OpenVINO model rewritten into the form OpenVINO's plugins run best and
the runtime library needs (weights compressed as asked, state, caches that grow, cross-attention caches computed once, fused rotary embedding, inputs read once and
bounded), and what the container records of it."""

from __future__ import annotations

from . import (buffer_variables, encoder_caches, equal_inputs, grown_cache, index_bounds, int8_range_check,
               low_bit_weights, passed_through, rotary, stored_weights, weight_compression)
from .lowering import Lowering

# In order: each pass rewrites lowering.model in place (and may note what the blob records).
PASSES = (
    low_bit_weights.narrow_group_wise_weights,  # 8-bit constants holding 4-bit values as u4 / i4
    stored_weights.read_weights_as_stored,  # MatMul(x, Transpose(W)) -> MatMul(x, W, transpose_b)
    weight_compression.compress_weights,  # the partitioner's weights=: NNCF on the IR
    passed_through.copy_passed_through_inputs,
    equal_inputs.share_equal_inputs,  # while the IR's inputs are still the partition's
    buffer_variables.make_stateful,  # consumed buffers as OpenVINO variables
    grown_cache.grow_caches,  # static KV caches into the growing form the CPU plugin fuses
    encoder_caches.reuse_encoder_caches,  # caches of an encoder's output computed when it changes
    rotary.fuse_rotary,  # after the caches took their final form: it follows keys through them
    int8_range_check.warn_if_full_range,
    equal_inputs.drop_unread_inputs,  # sets lowering.arguments
    index_bounds.bound_inputs,  # by the final inputs: sets lowering.bounds
)

__all__ = ["Lowering", "PASSES", "run"]


def run(lowering: Lowering) -> Lowering:
    """Runs every pass, in order; returns `lowering`."""
    for rewrite in PASSES:
        rewrite(lowering)
    return lowering
