"""Integer floor / trunc division, remainder and fmod, computed exactly.

OpenVINO's CPU plugin divides integers in f32 and truncates, whatever the Divide's python-division
flag says: floor division of negative operands rounds the wrong way (-7 // 2 gives -3), and
operands beyond 2^24 lose digits; its FloorMod and Mod of integers go through the same path.
Here the quotient is estimated in f32, then corrected with integer multiply and subtract, which
the plugin computes exactly:

  q = floor(a / b) in f32;  r = a - q b                  (|q - a/b| <= 1 + |a/b| 2^-22)
  q += floor(r / b) in f32; r = a - q b                  (now q is within 1 of the floor)
  one step down when r is non-zero and its sign is not b's, one up when |r| >= |b|.

That is floor(a / b) and Python's remainder exactly for every pair of 32-bit operands (b != 0);
trunc and fmod follow from them. Float operands keep the frontend's translation (the plugin
computes those right).
"""

from __future__ import annotations

from typing import Optional

import torch

from .builder import Builder, aten, tensor_of


def _is_integer(dtype: torch.dtype) -> bool:
    return not dtype.is_floating_point and not dtype.is_complex and dtype is not torch.bool


def _operand(build: Builder, value, dtype: torch.dtype) -> torch.fx.Node:
    if not isinstance(value, torch.fx.Node):  # a Python scalar divisor
        return build.constant(torch.tensor(value, dtype=dtype), "divisor")
    if tensor_of(value).dtype != dtype:
        return build.cast(value, dtype)
    return value


def _floor_quotient_step(build: Builder, dividend, divisor_f32, dtype) -> torch.fx.Node:
    ratio = build.call(aten.div.Tensor, build.cast(dividend, torch.float32), divisor_f32)
    return build.cast(build.call(aten.floor.default, ratio), dtype)


def _floor_division(build: Builder, a, b, dtype):
    """(floor(a / b), a - floor(a / b) * b) of integer nodes of `dtype`."""
    b_f32 = build.cast(b, torch.float32)

    def remainder_of(q):
        return build.call(aten.sub.Tensor, a, build.call(aten.mul.Tensor, q, b))

    q = _floor_quotient_step(build, a, b_f32, dtype)
    q = build.call(aten.add.Tensor, q, _floor_quotient_step(build, remainder_of(q), b_f32, dtype))
    r = remainder_of(q)
    # r's sign must be b's (or r zero): otherwise q is one too large.
    opposite = build.call(aten.logical_and.default, build.call(aten.ne.Scalar, r, 0),
                          build.call(aten.logical_xor.default, build.call(aten.lt.Scalar, r, 0),
                                     build.call(aten.lt.Scalar, b, 0)))
    q = build.call(aten.sub.Tensor, q, build.cast(opposite, dtype))
    r = remainder_of(q)
    # |r| must be below |b|: otherwise q is one too small.
    too_far = build.call(aten.ge.Tensor, build.call(aten.abs.default, r), build.call(aten.abs.default, b))
    q = build.call(aten.add.Tensor, q, build.cast(too_far, dtype))
    return q, remainder_of(q)


def _rewrite(kind: str):
    def rewrite(graph_module: torch.fx.GraphModule, node: torch.fx.Node) -> Optional[torch.fx.Node]:
        result = tensor_of(node).dtype
        if not _is_integer(result):
            return None
        if kind == "div":
            mode = node.kwargs.get("rounding_mode", node.args[2] if len(node.args) > 2 else None)
            if mode is None:  # true division: a float result, never here
                return None
            wanted = "floor_quotient" if mode == "floor" else "trunc_quotient"
        else:
            wanted = kind
        build = Builder(graph_module, node)
        # 32-bit arithmetic for the narrower types too (their products must not wrap).
        dtype = torch.int64 if result == torch.int64 else torch.int32
        a, b = _operand(build, node.args[0], dtype), _operand(build, node.args[1], dtype)
        q, r = _floor_division(build, a, b, dtype)
        if wanted.startswith("trunc") or wanted == "fmod":
            # trunc = floor + 1 where the division was inexact and the operands' signs differ.
            inexact = build.call(aten.logical_and.default, build.call(aten.ne.Scalar, r, 0),
                                 build.call(aten.logical_xor.default, build.call(aten.lt.Scalar, a, 0),
                                            build.call(aten.lt.Scalar, b, 0)))
            step = build.cast(inexact, dtype)
            q = build.call(aten.add.Tensor, q, step)
            r = build.call(aten.sub.Tensor, r, build.call(aten.mul.Tensor, step, b))
        value = q if wanted.endswith("quotient") else r
        return build.cast(value, result) if result != dtype else value

    return rewrite


REWRITES = {
    "aten.div.Tensor_mode": _rewrite("div"),
    "aten.div.Scalar_mode": _rewrite("div"),
    "aten.floor_divide.default": _rewrite("floor_quotient"),
    "aten.floor_divide.Scalar": _rewrite("floor_quotient"),
    "aten.remainder.Tensor": _rewrite("remainder"),
    "aten.remainder.Scalar": _rewrite("remainder"),
    "aten.fmod.Tensor": _rewrite("fmod"),
    "aten.fmod.Scalar": _rewrite("fmod"),
}
