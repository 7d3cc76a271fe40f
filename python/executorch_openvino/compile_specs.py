"""Compile specs: what the exporter records in the program for the runtime library.

Keys (see include/executorch_openvino/backend.h):
  device             the OpenVINO device to compile for
  compress_to_fp16   "1" when the weights were stored as fp16 (asked for by the user)
  UPPER_CASE_KEYS    OpenVINO properties, passed to compile_model (e.g. INFERENCE_PRECISION_HINT)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional

from executorch.exir.backend.compile_spec_schema import CompileSpec

DEVICE = "device"
COMPRESS_TO_FP16 = "compress_to_fp16"
_PROPERTY_KEY = re.compile(r"^[A-Z0-9_]+$")


@dataclass(frozen=True)
class ExportOptions:
    device: str = "CPU"
    properties: Dict[str, str] = field(default_factory=dict)
    compress_to_fp16: bool = False


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "YES" if value else "NO"
    return str(value)


def export_options(device: str = "CPU", compile_options: Optional[Mapping[str, Any]] = None) -> ExportOptions:
    """Validates the partitioner's arguments. `compile_options` holds OpenVINO properties
    (upper-case names) and, optionally, compress_to_fp16=True to store weights as fp16."""
    if not isinstance(device, str) or not device:
        raise ValueError(f"device must be a non-empty string such as 'CPU', got {device!r}")
    options = dict(compile_options or {})
    compress = bool(options.pop(COMPRESS_TO_FP16, False))
    for key in options:
        if not isinstance(key, str) or not _PROPERTY_KEY.match(key):
            raise ValueError(
                f"unknown compile option {key!r}: expected an OpenVINO property name such as "
                f"'PERFORMANCE_HINT' or 'INFERENCE_PRECISION_HINT', or {COMPRESS_TO_FP16!r}"
            )
    properties = {key: _text(value) for key, value in options.items()}
    # OpenVINO's CPU plugin computes in bf16 by default on CPUs that support it; the delegate's
    # promise is eager PyTorch's fp32 results unless the user asks otherwise.
    if device.upper().startswith("CPU"):
        properties.setdefault("INFERENCE_PRECISION_HINT", "f32")
    return ExportOptions(device, properties, compress)


def to_compile_specs(options: ExportOptions) -> List[CompileSpec]:
    specs = [CompileSpec(DEVICE, options.device.encode())]
    specs += [CompileSpec(key, value.encode()) for key, value in sorted(options.properties.items())]
    if options.compress_to_fp16:
        specs.append(CompileSpec(COMPRESS_TO_FP16, b"1"))
    return specs


def from_compile_specs(specs: List[CompileSpec]) -> ExportOptions:
    device, properties, compress = "CPU", {}, False
    for spec in specs:
        value = bytes(spec.value).rstrip(b"\0").decode()
        if spec.key == DEVICE:
            device = value
        elif spec.key == COMPRESS_TO_FP16:
            compress = value == "1"
        else:
            properties[spec.key] = value
    return ExportOptions(device, properties, compress)
