"""Average pooling whose divisor OpenVINO's AvgPool cannot express.

With ceil_mode, PyTorch's count_include_pad divides a window that runs past the padded input by
the part of it inside the padding, OpenVINO's AvgPool (exclude-pad off) by the whole kernel; and
AvgPool has no divisor_override. Both are
    avg_pool(x, count_include_pad=False) * avg_pool(ones, the node's own parameters)
(the mean over the real elements times their count over PyTorch's divisor): OpenVINO's exclude-pad
pooling matches PyTorch's in every case, and the factor is computed here by PyTorch itself, as a
constant of the output's spatial shape.
"""

from __future__ import annotations

from typing import Optional

import torch

from .builder import Builder, UnsupportedCase, aten, static_sizes, tensor_of


def _parameters(node: torch.fx.Node, spatial: int):
    names = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]
    defaults = [None, [], [0] * spatial, False, True, None]
    values = dict(zip(names, defaults))
    values.update(zip(names, node.args[1:]))
    values.update({k: v for k, v in node.kwargs.items() if k in values})
    return values


def _rewrite(spatial: int):
    pool = {2: torch.nn.functional.avg_pool2d, 3: torch.nn.functional.avg_pool3d}[spatial]
    target = {2: aten.avg_pool2d.default, 3: aten.avg_pool3d.default}[spatial]

    def rewrite(graph_module: torch.fx.GraphModule, node: torch.fx.Node) -> Optional[torch.fx.Node]:
        p = _parameters(node, spatial)
        exact_in_openvino = p["divisor_override"] is None and not (p["ceil_mode"] and p["count_include_pad"])
        if exact_in_openvino:
            return None
        x = tensor_of(node.args[0])
        sizes = static_sizes(x, "average pooling with ceil_mode and count_include_pad, or divisor_override,")
        ones = torch.ones([1] * (x.dim() - spatial) + sizes[-spatial:])
        # torch's own divisor for every output position, relative to the count of real elements.
        factor = pool(ones, p["kernel_size"], p["stride"] or None, p["padding"], p["ceil_mode"],
                      p["count_include_pad"], p["divisor_override"])
        if factor.shape[-spatial:] != tensor_of(node).shape[-spatial:]:
            raise UnsupportedCase("average pooling: the output size PyTorch computes could not be reproduced")
        build = Builder(graph_module, node)
        mean = build.call(target, node.args[0], p["kernel_size"], p["stride"], p["padding"], p["ceil_mode"], False)
        return build.call(aten.mul.Tensor, mean, build.constant(factor.to(x.dtype), "pool_factor"))

    return rewrite


REWRITES = {
    "aten.avg_pool2d.default": _rewrite(2),
    "aten.avg_pool3d.default": _rewrite(3),
}
