"""round(x, decimals): the frontend has no rule for it. Spelled out as PyTorch computes it, in the
tensor's own float type: round-half-even of x * 10^d, divided by 10^d (for d < 0: of x / 10^-d,
times 10^-d), so the same float operations give the same results."""

from __future__ import annotations

import torch

from .builder import Builder, UnsupportedCase, aten, tensor_of


def _rewrite(graph_module: torch.fx.GraphModule, node: torch.fx.Node) -> torch.fx.Node:
    decimals = node.kwargs.get("decimals", node.args[1] if len(node.args) > 1 else 0)
    if not tensor_of(node).is_floating_point():
        raise UnsupportedCase("round with decimals of an integer tensor")
    build = Builder(graph_module, node)
    x = node.args[0]
    if decimals == 0:
        return build.call(aten.round.default, x)
    scale = float(torch.tensor(10.0 ** abs(decimals), dtype=tensor_of(node).dtype))
    if decimals > 0:
        return build.call(aten.div.Scalar, build.call(aten.round.default, build.call(aten.mul.Scalar, x, scale)), scale)
    return build.call(aten.mul.Scalar, build.call(aten.round.default, build.call(aten.div.Scalar, x, scale)), scale)


REWRITES = {"aten.round.decimals": _rewrite}
