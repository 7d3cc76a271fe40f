"""What ExecuTorch's backend operator suite skips for every backend, run here against eager: its
runner skips any graph holding a 3-d convolution or transposed convolution, delegated or not, and
every in-place activation (bench/results/peer-suite-*.md lists the cases). Each model is lowered
whole to our delegate and must equal eager within float rounding."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import executorch_openvino
from lowering import assert_matches, eager, lower_and_load

# Sums of up to a few hundred products, possibly in another order.
ROUNDING = 1e-4

_CONV3D = {
    "basic": dict(in_channels=3, out_channels=4, kernel_size=3),
    "stride": dict(in_channels=3, out_channels=4, kernel_size=3, stride=(2, 1, 2)),
    "padding": dict(in_channels=3, out_channels=4, kernel_size=3, padding=(1, 0, 2)),
    "dilation": dict(in_channels=3, out_channels=4, kernel_size=2, dilation=(2, 1, 3)),
    "groups": dict(in_channels=4, out_channels=6, kernel_size=3, groups=2),
    "depthwise": dict(in_channels=4, out_channels=8, kernel_size=3, groups=4),
    "no_bias": dict(in_channels=3, out_channels=4, kernel_size=(1, 3, 2), bias=False),
    "padding_modes": dict(in_channels=3, out_channels=4, kernel_size=3, padding=1, padding_mode="replicate"),
}
_CONV_TRANSPOSE3D = {
    "basic": dict(in_channels=3, out_channels=4, kernel_size=3),
    "stride": dict(in_channels=3, out_channels=4, kernel_size=3, stride=(2, 1, 2)),
    "padding": dict(in_channels=3, out_channels=4, kernel_size=3, stride=2, padding=(1, 0, 1)),
    "output_padding": dict(in_channels=3, out_channels=4, kernel_size=3, stride=(2, 3, 2), output_padding=(1, 2, 0)),
    "dilation": dict(in_channels=3, out_channels=4, kernel_size=2, dilation=(2, 1, 3)),
    "groups": dict(in_channels=4, out_channels=6, kernel_size=3, groups=2),
    "depthwise": dict(in_channels=4, out_channels=4, kernel_size=3, groups=4),
    "no_bias": dict(in_channels=3, out_channels=4, kernel_size=(1, 3, 2), bias=False),
}


def _expect_eagers(model: nn.Module, inputs: tuple, tmp_path) -> None:
    lowered = lower_and_load(model.eval(), inputs, tmp_path)
    assert lowered.backend_ids == [executorch_openvino.BACKEND_ID], lowered.refusals
    assert lowered.outside_ops == [], lowered.refusals
    assert_matches(lowered.run(inputs), eager(model, inputs), rel_tol=ROUNDING)


@pytest.mark.parametrize("case", list(_CONV3D))
def test_conv3d(case, tmp_path):
    torch.manual_seed(3)
    arguments = _CONV3D[case]
    _expect_eagers(nn.Conv3d(**arguments), (torch.randn(2, arguments["in_channels"], 6, 7, 8),), tmp_path)


@pytest.mark.parametrize("case", list(_CONV_TRANSPOSE3D))
def test_conv_transpose3d(case, tmp_path):
    torch.manual_seed(3)
    arguments = _CONV_TRANSPOSE3D[case]
    _expect_eagers(nn.ConvTranspose3d(**arguments), (torch.randn(2, arguments["in_channels"], 4, 5, 6),), tmp_path)


class _InPlace(nn.Module):
    """An activation applied in place to an intermediate value, then used again."""

    def __init__(self, activation: nn.Module) -> None:
        super().__init__()
        self.activation = activation

    def forward(self, x):
        y = x * 2.0
        self.activation(y)  # in place: y itself changes
        return y + 1.0


_IN_PLACE = {
    "relu": nn.ReLU(inplace=True), "elu": nn.ELU(inplace=True), "hardsigmoid": nn.Hardsigmoid(inplace=True),
    "hardswish": nn.Hardswish(inplace=True), "hardtanh": nn.Hardtanh(-0.5, 0.7, inplace=True),
    "leaky_relu": nn.LeakyReLU(0.1, inplace=True), "silu": nn.SiLU(inplace=True),
    "threshold": nn.Threshold(0.3, -2.0, inplace=True),
}


@pytest.mark.parametrize("name", list(_IN_PLACE))
def test_in_place_activation(name, tmp_path):
    torch.manual_seed(3)
    x = torch.randn(4, 33) * 3
    _expect_eagers(_InPlace(_IN_PLACE[name]), (x,), tmp_path)
