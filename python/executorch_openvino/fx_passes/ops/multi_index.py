"""x[i, j] (aten.index.Tensor with several index tensors): the frontend flattens the indexed
dimensions and gathers at i * stride + j, so a negative index borrows from the dimension before it
(x[-1, -1] of a 5 x 3 tensor read x[3, 2], eager's is x[4, 2]). Each index tensor is made
non-negative first, as eager counts it: i + size where i < 0, the size read from the tensor when
it is dynamic (transformers' attention masks index a padding mask of the sequence's length so). One
index tensor needs nothing (the Gather it becomes counts from the end itself)."""

from __future__ import annotations

import torch

from .builder import Builder, UnsupportedCase, aten, tensor_of


def _rewrite(graph_module: torch.fx.GraphModule, node: torch.fx.Node):
    source, indices = node.args[0], list(node.args[1])
    if sum(index is not None for index in indices) < 2:
        return None
    sizes = tensor_of(source).shape
    build = Builder(graph_module, node)
    wrapped = []
    for dim, index in enumerate(indices):
        if index is None:
            wrapped.append(None)
            continue
        if tensor_of(index).dtype == torch.bool:
            raise UnsupportedCase("indexing with several tensors, one of them a mask")
        below_zero = build.call(aten.lt.Scalar, index, 0)
        if isinstance(sizes[dim], int):
            counted = build.call(aten.add.Scalar, index, sizes[dim])
        else:
            counted = build.call(aten.add.Tensor, index, build.call(aten.sym_size.int, source, dim))
        wrapped.append(build.call(aten.where.self, below_zero, counted, index))
    return build.call(aten.index.Tensor, source, wrapped)


REWRITES = {"aten.index.Tensor": _rewrite}
