"""At export: does a statically quantized IR hold int8 weights that OpenVINO's int8 kernels
saturate on CPUs without VNNI? (runtime/cpu_capabilities.py explains the saturation.)

Only static int8 models matter (activations quantized by a FakeQuantize, so the layer runs on u8
x s8 integer kernels); weight-only compression computes in float or quantizes activations itself.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import List

import numpy as np

from ..runtime.cpu_capabilities import SAFE_INT8_WEIGHT
from .lowering import Lowering

logger = logging.getLogger(__name__)

_WEIGHTED = {"Convolution", "GroupConvolution", "ConvolutionBackpropData", "GroupConvolutionBackpropData", "MatMul"}
# What lies between stored int8 weights and the layer: the decompression pattern and reshapes.
_PASS_THROUGH = {"Convert", "Subtract", "Multiply", "Reshape", "Transpose", "Unsqueeze", "Squeeze"}


@dataclass(frozen=True)
class FullRangeWeights:
    layers: List[str]  # the weighted layers whose int8 weights exceed +-SAFE_INT8_WEIGHT
    largest: int  # the largest magnitude found
    int8_layers: int  # weighted layers with int8 weights


def _int8_magnitude(node) -> int:
    """The largest |q - zero point| of the int8 constant behind a layer's weight input, or -1."""
    zero_point = 0
    stack = [node]
    while stack:
        current = stack.pop()
        kind = current.get_type_name()
        if kind == "Constant":
            if current.get_output_element_type(0).get_type_name() == "i8":
                return int(np.abs(current.get_data().astype(np.int32) - zero_point).max())
            continue
        if kind not in _PASS_THROUGH:
            continue
        if kind == "Subtract":  # a constant zero point, possibly converted
            source = current.input_value(1).get_node()
            while source.get_type_name() == "Convert":
                source = source.input_value(0).get_node()
            if source.get_type_name() == "Constant":
                zero_point = source.get_data().astype(np.int32)
        # Data is input 0, except that a Multiply's scale may come first.
        inputs = range(current.get_input_size()) if kind == "Multiply" else (0,)
        stack.extend(current.input_value(i).get_node() for i in inputs)
    return -1


def full_range_int8_weights(model) -> FullRangeWeights:
    """The weighted layers of a static int8 model (one with FakeQuantize) whose stored int8
    weights use more than half the int8 range; no layers for other models."""
    ops = list(model.get_ops())
    if not any(op.get_type_name() == "FakeQuantize" for op in ops):
        return FullRangeWeights([], 0, 0)
    magnitudes = {}
    for op in ops:
        if op.get_type_name() in _WEIGHTED and op.get_input_size() > 1:
            magnitude = _int8_magnitude(op.input_value(1).get_node())
            if magnitude >= 0:
                magnitudes[op.get_friendly_name()] = magnitude
    wide = sorted(name for name, magnitude in magnitudes.items() if magnitude > SAFE_INT8_WEIGHT)
    return FullRangeWeights(wide, max(magnitudes.values(), default=0), len(magnitudes))


def warn_if_full_range(lowering: Lowering) -> None:
    """Logs a warning when the model's int8 weights would saturate on CPUs without VNNI."""
    found = full_range_int8_weights(lowering.model)
    if found.layers:
        logger.warning(
            "executorch_openvino: %d of %d int8 weight tensors use the full int8 range (|q| up to %d): on CPUs "
            "without VNNI (AVX2, AVX-512 without VNNI) OpenVINO's int8 kernels saturate and this model loses "
            "accuracy there. Quantize with executorch_openvino.quantization (the overflow fix is on by default) or "
            "wrap your quantizer in executorch_openvino.quantization.OverflowSafeQuantizer; see "
            "docs/quantization.md.", len(found.layers), found.int8_layers, found.largest,
        )
