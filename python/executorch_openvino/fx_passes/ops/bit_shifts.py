"""Shifts by a constant number of bits, which OpenVINO's frontend has no rule for: x >> k is the
floor division of x by 2^k (arithmetic for signed integers, as in PyTorch), x << k its product
with 2^k. The division goes through integer_division (exact). NNCF unpacks int4 weights with a
right shift; on a stored weight the conversion folds it before this rewrite (fx_passes/constant_folding.py)."""

from __future__ import annotations

import torch

from .builder import Builder, UnsupportedCase, aten, tensor_of
from .integer_division import _floor_division


def _shift_amount(node) -> int:
    amount = node.args[1]
    if not isinstance(amount, int) or isinstance(amount, bool) or not 0 <= amount < 32:
        raise UnsupportedCase("a shift by an amount other than a constant 0..31")
    return amount


def _right(graph_module, node):
    dtype = tensor_of(node.args[0]).dtype
    build = Builder(graph_module, node)
    # Divided in a signed type wide enough (the division's remainder goes negative on the way).
    wide = torch.int64 if dtype == torch.int64 else torch.int32
    value = build.cast(node.args[0], wide) if dtype != wide else node.args[0]
    divisor = build.constant(torch.tensor(1 << _shift_amount(node), dtype=wide), "shift")
    quotient, _ = _floor_division(build, value, divisor, wide)
    return build.cast(quotient, dtype) if dtype != wide else quotient


def _left(graph_module, node):
    dtype = tensor_of(node.args[0]).dtype
    build = Builder(graph_module, node)
    return build.call(aten.mul.Tensor, node.args[0], build.constant(torch.tensor(1 << _shift_amount(node), dtype=dtype), "shift"))


REWRITES = {
    "aten.bitwise_right_shift.Tensor_Scalar": _right,
    "aten.bitwise_left_shift.Tensor_Scalar": _left,
}
