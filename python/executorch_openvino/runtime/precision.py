"""What precision="fast" means on a device: the precision OpenVINO compiles it with when none is
asked for (bf16 on CPUs with AVX-512 bf16 or AMX, f16 on GPUs and on CPUs with AVX-512 fp16 / AMX
fp16 where OpenVINO picks it, f32 elsewhere). Asked of OpenVINO, never inferred from CPU flags.
"precision="exact"" is f32 on every device. docs/precision.md.
"""

from __future__ import annotations

from typing import Optional

# The one-word choice between eager's fp32 results and OpenVINO's fastest precision for the device
# (compile_specs' precision, set_options(precision=...), the command line's --precision).
PRECISIONS = ("exact", "fast")
# OpenVINO's element type names as its Python API prints them -> INFERENCE_PRECISION_HINT's spelling.
_HINT_SPELLING = {"float32": "f32", "f32": "f32", "bf16": "bf16", "bfloat16": "bf16", "f16": "f16", "float16": "f16"}


def default_precision(device: str = "CPU", core=None) -> Optional[str]:
    """"f32", "bf16" or "f16": what `device` computes in under precision=fast; None when the device
    is not available or does not say (virtual devices choose per model)."""
    import openvino as ov

    core = core or ov.Core()
    try:
        value = core.get_property(device, "INFERENCE_PRECISION_HINT")
    except RuntimeError:
        return None
    text = value.get_type_name() if hasattr(value, "get_type_name") else str(value)
    return _HINT_SPELLING.get(text, text)
