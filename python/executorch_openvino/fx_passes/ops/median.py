"""median and median.dim: the frontend has no rule for them. PyTorch's median is the lower of the
two middle values, the k-th smallest with k = (n - 1) // 2 + 1, which OpenVINO's TopK (smallest
k, sorted) gives as its last element, with its index. A NaN in the reduced values makes the median
NaN (as PyTorch's does), with the index of the first NaN. Among equal values the index is one of
theirs, as PyTorch promises no more."""

from __future__ import annotations

import operator

import torch

from .builder import Builder, UnsupportedCase, aten, tensor_of


def _median_along(build: Builder, x: torch.fx.Node, dim: int, size: int, keepdim: bool, floating: bool):
    k = (size - 1) // 2 + 1
    smallest = build.call(aten.topk.default, x, k, dim, False, True)
    value = build.call(aten.select.int, build.call(operator.getitem, smallest, 0), dim, k - 1)
    index = build.call(aten.select.int, build.call(operator.getitem, smallest, 1), dim, k - 1)
    if not floating:
        return _keep(build, value, index, dim, keepdim)
    nan = build.call(aten.isnan.default, x)
    any_nan = build.call(aten.any.dim, nan, dim)
    value = build.call(aten.where.self, any_nan, build.call(aten.full_like.default, value, float("nan")), value)
    first_nan = build.call(aten.argmax.default, build.call(aten._to_copy.default, nan, dtype=torch.int32), dim)
    index = build.call(aten.where.self, any_nan, first_nan, index)
    return _keep(build, value, index, dim, keepdim)


def _keep(build: Builder, value, index, dim: int, keepdim: bool):
    if keepdim:
        value, index = build.call(aten.unsqueeze.default, value, dim), build.call(aten.unsqueeze.default, index, dim)
    return value, index


def _size(x: torch.Tensor, dim: int) -> int:
    size = x.shape[dim] if x.dim() else 1
    if not isinstance(size, int):
        raise UnsupportedCase("median needs a static size along the reduced dimension")
    if size == 0:
        raise UnsupportedCase("median of an empty dimension")
    return size


def _median_dim(graph_module: torch.fx.GraphModule, node: torch.fx.Node):
    x = tensor_of(node.args[0])
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", -1)
    keepdim = node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)
    if x.dim() == 0:
        raise UnsupportedCase("median.dim of a 0-d tensor")
    dim = dim % x.dim()
    build = Builder(graph_module, node)
    return _median_along(build, node.args[0], dim, _size(x, dim), keepdim, x.is_floating_point())


def _median(graph_module: torch.fx.GraphModule, node: torch.fx.Node) -> torch.fx.Node:
    x = tensor_of(node.args[0])
    numel = x.numel()
    if not isinstance(numel, int) or numel == 0:
        raise UnsupportedCase("median needs a static, non-zero number of elements")
    build = Builder(graph_module, node)
    flat = build.call(aten.view.default, node.args[0], [-1])
    value, _ = _median_along(build, flat, 0, numel, False, x.is_floating_point())
    return value


REWRITES = {"aten.median.dim": _median_dim, "aten.median.default": _median}
