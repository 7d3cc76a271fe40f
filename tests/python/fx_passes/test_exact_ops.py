"""Operators OpenVINO's frontend or CPU plugin got wrong, or had no rule for, pinned against eager
PyTorch with the values that expose the difference (issue 16). Each case is lowered with
OpenvinoPartitioner, run through executorch.runtime, must be delegated whole, and must equal eager:
integers exactly, floats within 1e-5 of the output scale.

  integer division   floor / trunc division, remainder, fmod: the plugin divides integers in f32
                     and truncates (fx_passes/ops/integer_division.py)
  average pooling    ceil_mode with count_include_pad, divisor_override (fx_passes/ops/avg_pooling.py)
  padding modes      reflect padding's indices abs(arange(...)), which the plugin miscompiled
                     (fx_passes/constant_folding.py); circular padding's empty tensor
  pass-through       an output that is an input (identity transpose, clone) was never written
  median, round(decimals), trunc   no frontend rule (fx_passes/ops/; embedding_bag in test_embedding_bag.py)
"""

from __future__ import annotations


import pytest
import torch
import torch.nn.functional as F
from torch import nn

import executorch_openvino
from executorch.exir import EdgeCompileConfig
from lowering import assert_matches, eager, lower_and_load

# The same float operations as eager, possibly summed in another order: each element within 1e-5 of
# its own value, plus 1e-6 absolute (a sum of O(1) terms that cancels to near 0).
EXACT, EXACT_ABS = 1e-5, 1e-6
# median, round(decimals) and embedding_bag without gradients are outside the core ATen set: lowered as ExecuTorch's backend test
# suite lowers them (to_edge's IR check off), which is how a program holding them reaches a partitioner.
NON_CORE = EdgeCompileConfig(_check_ir_validity=False)


class Fn(nn.Module):
    def __init__(self, fn, *parameters: torch.Tensor):
        super().__init__()
        self.fn = fn
        self.weights = nn.ParameterList([nn.Parameter(p, requires_grad=False) for p in parameters])

    def forward(self, *inputs):
        return self.fn(*self.weights, *inputs)


def expect_exact(model: nn.Module, inputs: tuple, tmp_path, compile_config=None):
    lowered = lower_and_load(model.eval(), inputs, tmp_path, compile_config=compile_config)
    assert lowered.backend_ids == [executorch_openvino.BACKEND_ID], lowered.refusals
    assert lowered.outside_ops == [], f"left outside: {lowered.outside_ops}; refusals: {lowered.refusals}"
    assert_matches(lowered.run(inputs), eager(model, inputs), rel_tol=EXACT, abs_tol=EXACT_ABS)


# ---------------------------------------------------------------------------------------------
# Integer division: every sign combination, exact and inexact quotients, and operands near 2^30
# (an f32 quotient alone loses their last digits).

_DIVIDENDS = [-7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 99, -100, 2**30 + 1, -(2**30) - 3, 2**31 - 1, -(2**31) + 1]
_DIVISORS = [2, -2, 3, -3, 2, -2, 3, 5, -5, 3, -3, 2, -2, 7, -7, -10, 7, 3, 7, -1, 2**30 + 7]


def _pairs(dtype):
    a, b = torch.tensor(_DIVIDENDS), torch.tensor(_DIVISORS)
    if dtype in (torch.int8, torch.int16):
        info = torch.iinfo(dtype)
        a, b = a.clamp(info.min + 1, info.max), b.clamp(info.min + 1, info.max)
        b[b == 0] = 1
    return a.to(dtype), b.to(dtype)


_INTEGER_OPS = {
    "floor_divide": torch.floor_divide,
    "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "remainder": torch.remainder,
    "fmod": torch.fmod,
}


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.int8], ids=str)
@pytest.mark.parametrize("name", list(_INTEGER_OPS))
def test_integer_division_by_tensor(name, dtype, tmp_path):
    expect_exact(Fn(_INTEGER_OPS[name]), _pairs(dtype), tmp_path)


@pytest.mark.parametrize("divisor", [3, -2, 100])
@pytest.mark.parametrize("name", list(_INTEGER_OPS))
def test_integer_division_by_scalar(name, divisor, tmp_path):
    op = _INTEGER_OPS[name]
    expect_exact(Fn(lambda a: op(a, divisor)), (torch.arange(-1000, 1000, 7),), tmp_path)


def test_integer_division_broadcasts_and_mixes_widths(tmp_path):
    # int32 dividends by an int64 row: the result is int64, as in PyTorch.
    a, b = torch.arange(-12, 12, dtype=torch.int32).reshape(4, 6), torch.tensor([[2, -3, 5, -7, 1, -1]])
    expect_exact(Fn(lambda a, b: (a // b, a % b, torch.fmod(b, a.clamp(min=1)))), (a, b), tmp_path)


@pytest.mark.parametrize("name", list(_INTEGER_OPS))
def test_float_division_family_still_matches(name, tmp_path):
    a = torch.tensor([-3.8, -3.5, -3.2, -0.8, -0.5, -0.2, 0.0, 0.2, 0.5, 0.8, 3.2, 3.5, 3.8, 7.5, -7.5])
    b = torch.tensor([2.0, -2.0, 2.5, -2.5, 0.5, -0.5, 2.0, 2.0, -2.0, 0.3, -0.3, 1.75, -1.75, 2.5, 2.5])
    expect_exact(Fn(_INTEGER_OPS[name]), (a, b), tmp_path)


# ---------------------------------------------------------------------------------------------
# Average pooling: input sizes where ceil_mode adds a window that runs past the padding.

_POOLS = {1: (nn.AvgPool1d, (1, 4, 10)), 2: (nn.AvgPool2d, (1, 3, 10, 11)), 3: (nn.AvgPool3d, (1, 2, 10, 6, 7))}


@pytest.mark.parametrize("divisor_override", [None, 2], ids=["divisor", "divisor_override"])
@pytest.mark.parametrize("count_include_pad", [True, False], ids=["include_pad", "exclude_pad"])
@pytest.mark.parametrize("ceil_mode", [True, False], ids=["ceil", "floor"])
@pytest.mark.parametrize("spatial", [1, 2, 3], ids=["1d", "2d", "3d"])
def test_avg_pool_parameters(spatial, ceil_mode, count_include_pad, divisor_override, tmp_path):
    pool, shape = _POOLS[spatial]
    options = {} if spatial == 1 or divisor_override is None else {"divisor_override": divisor_override}
    if spatial == 1 and divisor_override is not None:
        pytest.skip("AvgPool1d has no divisor_override")
    model = pool(3, stride=2, padding=1, ceil_mode=ceil_mode, count_include_pad=count_include_pad, **options)
    expect_exact(model, (torch.randn(*shape),), tmp_path)


def test_avg_pool_with_uneven_kernel_and_stride(tmp_path):
    model = nn.AvgPool2d((3, 2), stride=(2, 1), padding=(1, 0), ceil_mode=True, divisor_override=3)
    expect_exact(model, (torch.randn(2, 3, 9, 8),), tmp_path)


# ---------------------------------------------------------------------------------------------
# Padding modes, through convolutions and F.pad


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("spatial", [1, 2, 3], ids=["conv1d", "conv2d", "conv3d"])
def test_conv_padding_modes(spatial, mode, tmp_path):
    torch.manual_seed(0)
    conv = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}[spatial](3, 4, 3, padding=(1, 2, 1)[:spatial], padding_mode=mode)
    expect_exact(conv, (torch.randn(2, 3, *[9, 8, 7][:spatial]),), tmp_path)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
@pytest.mark.parametrize("pads, shape", [((2, 1), (2, 3, 8)), ((2, 1, 1, 3), (2, 3, 8, 9)), ((1, 1, 2, 1, 1, 2), (1, 2, 5, 6, 7))],
                         ids=["1d", "2d", "3d"])
def test_pad_modes(pads, shape, mode, tmp_path):
    expect_exact(Fn(lambda x: F.pad(x, pads, mode=mode)), (torch.randn(*shape),), tmp_path)


def test_abs_of_a_constant_range_is_computed(tmp_path):
    """The pattern behind reflection padding: OpenVINO's CPU plugin drops this Abs."""
    expect_exact(Fn(lambda x: x + torch.abs(torch.arange(-3, 2, dtype=torch.float32))), (torch.zeros(5),), tmp_path)


# ---------------------------------------------------------------------------------------------
# Outputs that are an input


@pytest.mark.parametrize("fn", [
    pytest.param(lambda x: x.transpose(0, 0), id="transpose_0_0"),
    pytest.param(lambda x: x.transpose(-1, -1), id="transpose_last_last"),
    pytest.param(lambda x: x.clone(), id="clone"),
    pytest.param(lambda x: x[:, :], id="full_slice"),
    pytest.param(lambda x: (x.transpose(1, 1), x * 2.0), id="identity_beside_another_output"),
])
def test_output_that_is_an_input(fn, tmp_path):
    expect_exact(Fn(fn), (torch.randn(8, 10, 12),), tmp_path)


# ---------------------------------------------------------------------------------------------
# median, round(decimals) (embedding_bag: test_embedding_bag.py)


@pytest.mark.parametrize("fn, shape", [
    pytest.param(lambda x: torch.median(x), (4, 6, 5), id="all_odd"),
    pytest.param(lambda x: torch.median(x), (4, 6), id="all_even"),
    pytest.param(lambda x: tuple(torch.median(x, 0)), (4, 6, 5), id="dim0"),
    pytest.param(lambda x: tuple(torch.median(x, -1, keepdim=True)), (4, 6, 5), id="last_dim_keepdim"),
    pytest.param(lambda x: tuple(torch.median(x, 1)), (3, 8), id="even_dim"),
])
def test_median(fn, shape, tmp_path):
    expect_exact(Fn(fn), (torch.randn(*shape),), tmp_path, NON_CORE)


def test_median_of_a_row_with_nan_is_nan(tmp_path):
    x = torch.randn(4, 7)
    x[1, 3] = float("nan")
    model = Fn(lambda x: tuple(torch.median(x, 1)))
    lowered = lower_and_load(model, (x,), tmp_path, compile_config=NON_CORE)
    assert lowered.outside_ops == [], lowered.refusals
    (values, indices), (expected_values, expected_indices) = lowered.run((x,)), eager(model, (x,))
    assert torch.equal(values.isnan(), expected_values.isnan()) and values.isnan().sum() == 1
    assert torch.equal(values[~values.isnan()], expected_values[~expected_values.isnan()])
    assert torch.equal(indices, expected_indices), "the NaN's index, and the others' medians'"


def test_median_of_integers(tmp_path):
    # Values only: among equal values PyTorch's index is one of theirs, and so is ours.
    expect_exact(Fn(lambda x: torch.median(x, 1).values), (torch.randint(-5, 5, (6, 9)),), tmp_path, NON_CORE)


@pytest.mark.parametrize("decimals", [-2, -1, 0, 1, 3])
def test_round_decimals(decimals, tmp_path):
    torch.manual_seed(0)
    x = torch.cat([torch.randn(64) * 300, torch.tensor([0.05, 0.15, 0.25, 0.35, 1.25, -0.25, 2.5, 15.0, 25.0, -150.0])])
    expect_exact(Fn(lambda x: torch.round(x, decimals=decimals)), (x,), tmp_path, NON_CORE)


_TRUNC_EDGES = [-0.0, 0.0, -0.5, 0.5, -0.999, 0.999, -1.0, 1.0, -1.5, 1.5, -2.5, 2.5, 2.0**23 + 1, -(2.0**23) - 1,
                1e30, -1e30, 1e-30, -1e-30, float("inf"), float("-inf"), float("nan")]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.int64])
def test_trunc_is_eagers_bit_for_bit(dtype, tmp_path):
    """Rounding toward zero has one answer: every element equal to eager's, the sign of a zero
    (trunc(-0.5) is -0.0) and NaN included."""
    torch.manual_seed(0)
    if dtype.is_floating_point:
        x = torch.cat([torch.randn(64) * 300, torch.tensor(_TRUNC_EDGES)]).to(dtype)
    else:
        x = torch.randint(-1000, 1000, (70,), dtype=dtype)
    model = Fn(lambda x: torch.trunc(x))
    lowered = lower_and_load(model, (x,), tmp_path)
    assert lowered.outside_ops == [], lowered.refusals
    (got,), (expected,) = lowered.run((x,)), eager(model, (x,))
    assert got.dtype == expected.dtype
    same = (got == expected) | (got.isnan() & expected.isnan()) if dtype.is_floating_point else got == expected
    assert bool(same.all()), (x[~same], got[~same], expected[~same])
    if dtype.is_floating_point:
        assert torch.equal(got.signbit(), expected.signbit()), "a zero's sign differs from eager's"


def test_the_exact_tolerance_rejects_an_identity_round_and_a_small_element_off():
    """A rewrite that did not round, or got one small element wrong beside large ones, fails."""
    torch.manual_seed(0)
    x = torch.cat([torch.randn(64) * 300, torch.tensor([0.05, 0.15, 0.25, 1.25, -0.25, 2.5])])
    with pytest.raises(AssertionError, match="elements off"):
        assert_matches([x], [torch.round(x, decimals=3)], rel_tol=EXACT, abs_tol=EXACT_ABS)
    off = x.clone()
    off[-1] += 1e-3  # 2.5 -> 2.501, next to values of several hundred
    with pytest.raises(AssertionError, match="element 69"):
        assert_matches([off], [x], rel_tol=EXACT, abs_tol=EXACT_ABS)
    assert_matches([x], [x.clone()], rel_tol=EXACT, abs_tol=EXACT_ABS)
