"""int4 weights stored as OpenVINO's own 4-bit constants.

NNCF compresses a weight to 4 bits in groups (nncf.compress_weights with INT4_SYM / INT4_ASYM, or
ExecuTorch's OpenVINOQuantizer in INT4WO modes): two values a byte, unpacked in the graph by bit
arithmetic, then converted to float and scaled per group. fx_passes fold the unpacking
(fx_passes/constant_folding.py, fold_integer_weights), which leaves an 8-bit constant of shape [out, groups,
group size] holding 4-bit values; here that constant becomes a u4 / i4 constant of the same values,
half its size, which OpenVINO's CPU plugin runs with its compressed-weight kernels. Exact: every
value is kept.
"""

from __future__ import annotations

import numpy as np

from .lowering import Lowering

_FLOAT_TYPES = ("f16", "bf16", "f32")


def _feeds_only_float_conversions(constant) -> bool:
    targets = constant.output(0).get_target_inputs()
    return bool(targets) and all(
        t.get_node().get_type_name() == "Convert" and t.get_node().get_output_element_type(0).get_type_name() in _FLOAT_TYPES
        for t in targets
    )


def _four_bit_constant(values: np.ndarray, signed: bool):
    import openvino as ov

    nibbles = (values.astype(np.int16) & 0xF).astype(np.uint8).ravel()
    if nibbles.size % 2:
        nibbles = np.append(nibbles, np.uint8(0))
    packed = nibbles[0::2] | (nibbles[1::2] << 4)  # OpenVINO's order: the first value in the low nibble
    tensor = ov.Tensor(ov.Type.i4 if signed else ov.Type.u4, ov.Shape(list(values.shape)))
    np.copyto(tensor.data, packed.reshape(tensor.data.shape))
    return ov.op.Constant(tensor)


def narrow_group_wise_weights(lowering: Lowering) -> None:
    """Replaces, in place, 8-bit constants of rank 3 (group-wise weights) whose values fit in 4 bits
    and which only feed conversions to floating point by u4 / i4 constants."""
    for op in lowering.model.get_ops():
        if op.get_type_name() != "Constant" or len(op.get_output_shape(0)) != 3:
            continue
        kind = op.get_output_element_type(0).get_type_name()
        if kind not in ("u8", "i8") or not _feeds_only_float_conversions(op):
            continue
        values = op.get_data()
        low, high = (0, 15) if kind == "u8" else (-8, 7)
        if values.size == 0 or values.min() < low or values.max() > high:
            continue
        replacement = _four_bit_constant(values, signed=kind == "i8")
        replacement.set_friendly_name(op.get_friendly_name())
        for target in list(op.output(0).get_target_inputs()):
            target.replace_source_output(replacement.output(0))
