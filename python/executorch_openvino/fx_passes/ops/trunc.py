"""trunc(x): the frontend has no rule for it. Rounding toward zero is ceil below zero and floor
elsewhere; both are exact in any float type, and choosing by x < 0 keeps eager's signed zeros
(trunc(-0.5) is -0.0, trunc(-0.0) is -0.0) and NaN. An integer tensor is its own trunc."""

from __future__ import annotations

import torch

from .builder import Builder, aten, tensor_of


def _rewrite(graph_module: torch.fx.GraphModule, node: torch.fx.Node) -> torch.fx.Node:
    build = Builder(graph_module, node)
    x = node.args[0]
    if not tensor_of(node).is_floating_point():
        return build.call(aten.clone.default, x)
    below_zero = build.call(aten.lt.Scalar, x, 0)
    return build.call(aten.where.self, below_zero, build.call(aten.ceil.default, x), build.call(aten.floor.default, x))


REWRITES = {"aten.trunc.default": _rewrite}
