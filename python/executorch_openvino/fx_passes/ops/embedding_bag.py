"""embedding_bag (aten._embedding_bag and its forward-only twin) spelled out with gathers, masks
and an accumulating scatter. The frontend translates only the sum and mean modes, into OpenVINO's
EmbeddingBagOffsets, whose CPU kernel fails at run time on an empty last bag; max it refuses.

Bag b holds indices[offsets[b] : offsets[b + 1]], the last bag running to the end; padding_idx
entries count for nothing. sum adds the rows (times per_sample_weights), mean divides by the bag's
size, max takes the largest; an empty bag is zeros, as in PyTorch. Only the first output (the bags)
is computed: programs that read offset2bag, bag_size or max_indices are refused.

With include_last_offset the last offset closes the last bag, but PyTorch's CPU kernel (which eager
runs, and which is the reference) lets the indices after it into that bag where its fast path is
not taken: for max, for mean's divisor (its sum stops at the last offset), and for every mode when
padding_idx is set. Those quirks are reproduced here, so that the delegate computes what eager
computes for every input eager accepts (tests/python/fx_passes/test_embedding_bag.py pins them).
"""

from __future__ import annotations

import torch

from .builder import Builder, UnsupportedCase, aten, tensor_of

# Bag membership is an [indices, bags] mask (and for max an [indices, bags, dim] one): bounded so
# that the IR does not hold enormous intermediate tensors.
_MAX_MASK_ELEMENTS = 1 << 24
_MODES = {0: "sum", 1: "mean", 2: "max"}


def _argument(node: torch.fx.Node, index: int, name: str, default):
    return node.args[index] if len(node.args) > index else node.kwargs.get(name, default)


def _rewrite(graph_module: torch.fx.GraphModule, node: torch.fx.Node):
    weight, indices, offsets = node.args[:3]
    mode = _MODES.get(_argument(node, 4, "mode", 0))
    per_sample_weights = _argument(node, 6, "per_sample_weights", None)
    include_last_offset = _argument(node, 7, "include_last_offset", False)
    padding_idx = _argument(node, 8, "padding_idx", -1)
    n, count = tensor_of(indices).numel(), tensor_of(offsets).numel()
    table = tensor_of(weight)
    if mode is None:
        raise UnsupportedCase("embedding_bag with an unknown mode")
    if not all(isinstance(v, int) for v in (n, count, *table.shape)):
        raise UnsupportedCase("embedding_bag needs static sizes")
    if tensor_of(indices).dim() != 1:
        raise UnsupportedCase("embedding_bag of indices that are not 1-d")
    bags = count - 1 if include_last_offset else count
    dim = table.shape[1]
    if n * bags > _MAX_MASK_ELEMENTS or (mode == "max" and n * bags * dim > _MAX_MASK_ELEMENTS):
        raise UnsupportedCase(f"embedding_bag of {n} indices in {bags} bags is too large to spell out")

    build = Builder(graph_module, node)
    positions = build.constant(torch.arange(n), "positions")
    starts = build.call(aten.slice.Tensor, offsets, 0, 0, bags)
    # bag_of[j]: how many bags start at or before j, minus one.
    started = build.call(aten.le.Tensor, build.call(aten.unsqueeze.default, starts, 0),
                         build.call(aten.unsqueeze.default, positions, 1))
    bag_of = build.call(aten.add.Scalar, build.call(aten.sum.dim_IntList, build.cast(started, torch.int64), [1]), -1)
    member = build.call(aten.eq.Tensor, build.call(aten.unsqueeze.default, bag_of, 1),
                        build.constant(torch.arange(bags).unsqueeze(0), "bag_ids"))  # [n, bags]
    valid = build.call(aten.ge.Scalar, bag_of, 0)
    padded = padding_idx is not None and padding_idx >= 0
    if padded:
        valid = build.call(aten.logical_and.default, valid, build.call(aten.ne.Scalar, indices, padding_idx))
    summed = valid  # what sum and mean add; max and mean's divisor take every valid index
    if include_last_offset and not padded:
        # Only sum and mean's sum stop at the last offset (see the module's docstring).
        end = build.call(aten.select.int, offsets, 0, bags)
        summed = build.call(aten.logical_and.default, valid, build.call(aten.lt.Tensor, positions, end))
    member = build.call(aten.logical_and.default, member, build.call(aten.unsqueeze.default, valid, 1))

    rows = build.call(aten.embedding.default, weight, indices)  # [n, dim]
    if per_sample_weights is not None:
        rows = build.call(aten.mul.Tensor, rows, build.call(aten.unsqueeze.default, per_sample_weights, 1))
    sizes = build.call(aten.sum.dim_IntList, build.cast(member, table.dtype), [0])  # [bags]
    if mode == "max":
        candidates = build.call(aten.where.self, build.call(aten.unsqueeze.default, member, 2),
                                build.call(aten.unsqueeze.default, rows, 1),
                                build.constant(torch.tensor(float("-inf"), dtype=table.dtype), "minus_infinity"))
        largest = build.call(aten.amax.default, candidates, [0])  # [bags, dim]
        empty = build.call(aten.unsqueeze.default, build.call(aten.eq.Scalar, sizes, 0), 1)
        output = build.call(aten.where.self, empty, build.constant(torch.zeros((), dtype=table.dtype), "zero"), largest)
    else:
        # where, not a product with the mask: a row left out may hold inf or NaN.
        kept = build.call(aten.where.self, build.call(aten.unsqueeze.default, summed, 1), rows,
                          build.constant(torch.zeros((), dtype=table.dtype), "zero"))
        zeros = build.call(aten.full.default, [bags, dim], 0.0, dtype=table.dtype)
        safe_bag = build.call(aten.clamp.default, bag_of, 0, bags - 1)
        output = build.call(aten.index_put.default, zeros, [safe_bag], kept, True)
        if mode == "mean":
            divisor = build.call(aten.clamp.default, sizes, 1.0)
            output = build.call(aten.div.Tensor, output, build.call(aten.unsqueeze.default, divisor, 1))
    return (output, None, None, None)


REWRITES = {
    "aten._embedding_bag.default": _rewrite,
    "aten._embedding_bag_forward_only.default": _rewrite,
}
