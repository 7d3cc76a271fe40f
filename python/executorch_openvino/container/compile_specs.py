"""Compile specs: what the exporter records in the program for the runtime library.

Keys (see include/executorch_openvino/backend.h):
  device             the OpenVINO device to compile for
  compress_to_fp16   "1" when the weights were stored as fp16 (asked for by the user)
  precompile         devices a compiled model was embedded for, comma-separated (informational)
  static_caches      "1" when KV caches were kept in their static form (informational)
  weights            how the IR's weights were compressed with NNCF, "<mode>:<group size>" (e.g. "int4:128",
                     "int8:0"); the IR carries them compressed, and the library chooses the CPU's
                     activation group for them (activation_group_for)
  precision          "exact" (INFERENCE_PRECISION_HINT=f32) or "fast" (the device's own default:
                     bf16 / f16 where the hardware has it); never written beside INFERENCE_PRECISION_HINT
  UPPER_CASE_KEYS    OpenVINO properties, passed to compile_model (e.g. INFERENCE_PRECISION_HINT)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from executorch.exir.backend.compile_spec_schema import CompileSpec

from ..runtime.precision import PRECISIONS

DEVICE = "device"
COMPRESS_TO_FP16 = "compress_to_fp16"
PRECOMPILE = "precompile"
STATIC_CACHES = "static_caches"
PRECISION = "precision"
WEIGHTS = "weights"
# Weight-only compression of the IR (ir_passes/weight_compression.py): the word -> NNCF's mode.
WEIGHT_MODES = {"int8": "INT8_ASYM", "int8_sym": "INT8_SYM", "int4": "INT4_SYM", "int4_asym": "INT4_ASYM"}
DEFAULT_GROUP_SIZE = 128
_HINT = "INFERENCE_PRECISION_HINT"
_DYNAMIC_QUANTIZATION = "DYNAMIC_QUANTIZATION_GROUP_SIZE"
# The activations' group for int8 weights, one scale per output channel (compute_form.h).
PER_CHANNEL_ACTIVATION_GROUP = 128
_PROPERTY_KEY = re.compile(r"^[A-Z0-9_]+$")


@dataclass(frozen=True)
class ExportOptions:
    device: str = "CPU"
    properties: Dict[str, str] = field(default_factory=dict)
    compress_to_fp16: bool = False
    precompile: Tuple[str, ...] = ()
    grow_caches: bool = True  # ir_passes/grown_cache.py
    precision: Optional[str] = None  # PRECISIONS; None: f32 on CPU (exact), the device's own elsewhere
    weights: Optional[str] = None  # WEIGHT_MODES; None: the weights as the program has them
    group_size: int = 0  # int4's group size (input values per scale); 0 for int8 (per output channel)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "YES" if value else "NO"
    return str(value)


def export_options(
    device: str = "CPU", compile_options: Optional[Mapping[str, Any]] = None, precompile: Iterable[str] = (),
    grow_caches: bool = True, precision: Optional[str] = None, weights: Optional[str] = None,
    group_size: Optional[int] = None,
) -> ExportOptions:
    """Validates the partitioner's arguments. `compile_options` holds OpenVINO properties
    (upper-case names) and, optionally, compress_to_fp16=True to store weights as fp16.
    `precompile` names devices to embed a compiled model for. `precision` is "exact" or "fast".
    `weights` one of WEIGHT_MODES, `group_size` int4's group size."""
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
        if any(word in key for word in ("DIR", "FILE", "PATH")):
            raise ValueError(
                f"compile option {key!r} names a file or folder, which a program never chooses (the runtime "
                "ignores it): set it where the program runs, e.g. executorch_openvino.set_options(cache_dir=...)"
            )
    properties = {key: _text(value) for key, value in options.items()}
    devices = (precompile,) if isinstance(precompile, str) else tuple(precompile)
    for name in devices:
        if not isinstance(name, str) or not name or "," in name:
            raise ValueError(f"precompile takes device names such as 'CPU', got {name!r}")
    precision = check_precision(precision, "precision")
    if precision is not None and _HINT in properties:
        raise ValueError(f"precision={precision!r} and compile option {_HINT} both choose the precision: pass one "
                         f"(precision='exact' is {_HINT}='f32'; 'fast' leaves the device its own default)")
    weights, group_size = check_weights(weights, group_size)
    if weights is not None and compress:
        raise ValueError("weights=... and compress_to_fp16 both choose how the weights are stored: pass one")
    return ExportOptions(device, properties, compress, devices, bool(grow_caches), precision, weights, group_size)


def check_weights(weights: Optional[str], group_size: Optional[int]) -> Tuple[Optional[str], int]:
    """(mode, group size) for the weights and group_size arguments: int8 modes are per output
    channel (group size 0), int4 ones default to DEFAULT_GROUP_SIZE."""
    if weights is None:
        if group_size is not None:
            raise ValueError("group_size is an option of weights='int4' (or 'int4_asym')")
        return None, 0
    if weights not in WEIGHT_MODES:
        raise ValueError(f"weights takes one of {', '.join(WEIGHT_MODES)} (NNCF's weight-only compression of the "
                         f"linear layers), got {weights!r}")
    if weights.startswith("int8"):
        if group_size not in (None, 0, -1):
            raise ValueError(f"weights={weights!r} is per output channel: group_size applies to int4 only")
        return weights, 0
    size = DEFAULT_GROUP_SIZE if group_size is None else group_size
    if isinstance(size, bool) or not isinstance(size, int) or (size <= 0 and size != -1):
        raise ValueError(f"group_size takes a positive number of input values per scale (or -1: one group per "
                         f"output channel), got {group_size!r}")
    return weights, size


def check_precision(precision: Optional[str], what: str) -> Optional[str]:
    """`precision` in lower case, or None; a ValueError naming `what` for anything but PRECISIONS."""
    if precision is None:
        return None
    word = precision.lower() if isinstance(precision, str) else precision
    if word not in PRECISIONS:
        raise ValueError(f"{what} takes 'exact' (f32, eager's results) or 'fast' (the device's fastest precision: "
                         f"bf16 or f16 where the hardware has it), got {precision!r}")
    return word


def _computes_on_cpu(device: str) -> bool:
    """The CPU, or a virtual device that may pick it (all but BATCH, which batches for GPUs only)."""
    virtual = ":" in device or device in ("AUTO", "HETERO", "MULTI", "BATCH")
    return device == "CPU" or device.startswith("CPU.") or (virtual and not device.startswith("BATCH"))


def weights_spec(options: ExportOptions) -> Optional[str]:
    """The "weights" spec's text ("int4:128"), or None when the exporter left the weights as they were."""
    return None if options.weights is None else f"{options.weights}:{options.group_size}"


def activation_group_for(weights: Optional[str]) -> int:
    """The CPU's activation group (DYNAMIC_QUANTIZATION_GROUP_SIZE) the library's dynamic_quantization=auto
    gives weights compressed as `weights` ("int8:0", "int4:128"), or 0 for OpenVINO's default
    (src/delegate/options/compute_form.cpp: activation_group_for): 128 for int8, whose scales are per
    output channel; int4 keeps the default."""
    return PER_CHANNEL_ACTIVATION_GROUP if (weights or "").startswith("int8") else 0


def load_time_properties(device: str, properties: Mapping[str, str], precision: Optional[str] = None,
                         weights: Optional[str] = None) -> Dict[str, str]:
    """The properties the runtime library compiles with when nothing overrides them at load time:
    the program's own plus the library's defaults (src/delegate/options/compile_options.cpp:
    apply_defaults, which resolves compute_form.h's activation group, then compilation_properties). `weights`
    is the program's weights spec (weights_spec). A precompiled model must be compiled with exactly
    these to be used. Written again here because export runs where the library may not be loaded;
    tests/python/container/test_load_time_properties.py holds the two equal."""
    result = dict(properties)
    group = activation_group_for(weights) if device == "CPU" or device.startswith("CPU.") else 0
    if group and _DYNAMIC_QUANTIZATION not in result:
        result[_DYNAMIC_QUANTIZATION] = str(group)
    result.setdefault("PERFORMANCE_HINT", "LATENCY")
    if precision == "exact":
        result[_HINT] = "f32"
    elif precision == "fast":
        result.pop(_HINT, None)  # the device's own default
    elif _computes_on_cpu(device):
        result.setdefault(_HINT, "f32")
    for loading_only in ("CACHE_DIR", "ENABLE_MMAP"):
        result.pop(loading_only, None)
    return result


def to_compile_specs(options: ExportOptions) -> List[CompileSpec]:
    specs = [CompileSpec(DEVICE, options.device.encode())]
    specs += [CompileSpec(key, value.encode()) for key, value in sorted(options.properties.items())]
    if options.compress_to_fp16:
        specs.append(CompileSpec(COMPRESS_TO_FP16, b"1"))
    if options.precompile:
        specs.append(CompileSpec(PRECOMPILE, ",".join(options.precompile).encode()))
    if not options.grow_caches:
        specs.append(CompileSpec(STATIC_CACHES, b"1"))
    if options.precision is not None:
        specs.append(CompileSpec(PRECISION, options.precision.encode()))
    if options.weights is not None:
        specs.append(CompileSpec(WEIGHTS, f"{options.weights}:{options.group_size}".encode()))
    return specs


def from_compile_specs(specs: List[CompileSpec]) -> ExportOptions:
    device, properties, compress, precompile, grow, precision = "CPU", {}, False, (), True, None
    weights, group_size = None, 0
    for spec in specs:
        value = bytes(spec.value).rstrip(b"\0").decode()
        if spec.key == DEVICE:
            device = value
        elif spec.key == COMPRESS_TO_FP16:
            compress = value == "1"
        elif spec.key == PRECOMPILE:
            precompile = tuple(name for name in value.split(",") if name)
        elif spec.key == STATIC_CACHES:
            grow = value != "1"
        elif spec.key == PRECISION:
            precision = value
        elif spec.key == WEIGHTS:
            mode, _, size = value.partition(":")
            weights, group_size = mode, int(size or 0)
        else:
            properties[spec.key] = value
    return ExportOptions(device, properties, compress, precompile, grow, precision, weights, group_size)
