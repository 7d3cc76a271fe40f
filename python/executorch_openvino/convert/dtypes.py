"""The element types the delegate exchanges with ExecuTorch, and their OpenVINO names."""

from __future__ import annotations

import torch

# float64 is left out on purpose: OpenVINO's CPU plugin computes it in f32, which would silently change
# results.
SUPPORTED_DTYPES = frozenset(
    {torch.float32, torch.float16, torch.bfloat16, torch.int8, torch.uint8, torch.int16, torch.int32,
     torch.int64, torch.bool}
)


def ov_type(dtype: torch.dtype):
    """OpenVINO's element type for a supported torch dtype."""
    import openvino as ov

    return {
        torch.float32: ov.Type.f32, torch.float16: ov.Type.f16, torch.bfloat16: ov.Type.bf16,
        torch.int8: ov.Type.i8, torch.uint8: ov.Type.u8, torch.int16: ov.Type.i16, torch.int32: ov.Type.i32,
        torch.int64: ov.Type.i64, torch.bool: ov.Type.boolean,
    }[dtype]
