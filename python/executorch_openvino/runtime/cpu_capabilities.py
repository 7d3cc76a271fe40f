"""What this CPU does with OpenVINO's CPU plugin where results depend on it: int8 arithmetic and
on-the-fly activation quantization, found by asking OpenVINO to compute, not by assuming.

OpenVINO picks its CPU kernels by instruction set. Two choices change results, not only speed:

- **int8 saturation.** Without VNNI (AVX2, AVX-512 without VNNI: AMD Zen 2/3, Intel before Ice
  Lake), a u8 x s8 product is summed in pairs into 16 bits (vpmaddubsw), which saturates when
  the weights use the whole int8 range: 2 * 255 * 127 > 32767. Weights within +-64 never
  saturate; that is NNCF's "overflow fix" (executorch_openvino.quantization applies it by
  default). With VNNI or AMX the sums are exact.
- **dynamic quantization.** For layers with int8 / int4 weights and float activations, the CPU
  plugin quantizes the activations on the fly (DYNAMIC_QUANTIZATION_GROUP_SIZE) where it has
  fast integer instructions, and computes in float elsewhere.

Both are measured by compiling and running a tiny model on the CPU plugin (about 50 ms), so they
also hold under a restricted instruction set (oneDNN's ONEDNN_MAX_CPU_ISA, an emulator). The
class reported is read from the kernels OpenVINO chose for that model, and what the CPU's flags
claim is reported beside it.
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import FrozenSet, Optional, Tuple

import numpy as np

# The largest int8 weight magnitude whose products with u8 activations, summed in pairs, fit in 16
# bits: 2 * 255 * 64 = 32640 <= 32767.
SAFE_INT8_WEIGHT = 64

# Instruction-set classes by CPU flags (Linux names), best first: (class, flags that define it).
_FLAG_CLASSES = (
    ("AMX", ("amx_int8",)),
    ("AVX-512 VNNI", ("avx512_vnni",)),
    ("AVX-VNNI", ("avx_vnni",)),
    ("AVX-512", ("avx512f", "avx512bw", "avx512vl")),
    ("AVX2", ("avx2", "fma")),
    ("SSE4.2", ("sse4_2",)),
)
# The instruction set named in the CPU plugin's int8 kernel names (runtime model's primitiveType,
# e.g. "brgconv_avx512_amx_I8", "jit_avx2_I8"), best first.
_KERNEL_ISAS = (("amx", "AMX"), ("avx512", "AVX-512"), ("avx2", "AVX2"), ("sse42", "SSE4.2"))


@dataclass(frozen=True)
class CpuReport:
    """What OpenVINO's CPU plugin does on this CPU, as measured in this process."""

    device_name: str  # OpenVINO's FULL_DEVICE_NAME
    # From the int8 kernels OpenVINO chose and whether their sums are exact: "AMX", "AVX-512 VNNI",
    # "AVX-512", "AVX-VNNI", "AVX2", "SSE4.2", or "unknown".
    instruction_set_class: str
    flags_class: str  # the class the CPU's flags claim (hardware; "unknown" off Linux)
    optimization_capabilities: Tuple[str, ...]  # OpenVINO's OPTIMIZATION_CAPABILITIES (FP32, INT8, BF16, ...)
    int8_kernels: Tuple[str, ...]  # the probe's convolution / fully connected kernels
    int8_integer: bool  # both ran in u8
    int8_saturates: bool  # full-range int8 weights lose precision (no VNNI / AMX in the kernels used)
    dynamic_quantization: bool  # layers with int8 weights quantize their activations on the fly
    onednn_max_cpu_isa: Optional[str]  # ONEDNN_MAX_CPU_ISA when set (it lowers what oneDNN uses)

    @property
    def needs_overflow_fix(self) -> bool:
        """Static int8 models need weights within +-64 (the overflow fix) to be accurate here."""
        return self.int8_integer and self.int8_saturates

    def as_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        int8 = ("int8 sums saturate (no VNNI): static int8 models need the overflow fix"
                if self.needs_overflow_fix else "int8 sums exact" if self.int8_integer else "no int8 kernels")
        dynamic = "on" if self.dynamic_quantization else "off"
        notes = []
        if self.flags_class not in ("unknown", self.instruction_set_class):
            notes.append(f"the CPU's flags say {self.flags_class}")
        if self.onednn_max_cpu_isa:
            notes.append(f"ONEDNN_MAX_CPU_ISA={self.onednn_max_cpu_isa}")
        restricted = f" ({'; '.join(notes)})" if notes else ""
        return f"{self.instruction_set_class}{restricted}: {int8}; dynamic quantization {dynamic}"


def cpu_flags() -> Optional[FrozenSet[str]]:
    """The CPU's feature flags as Linux names them, or None where they cannot be read. Under an
    emulator (qemu-user) these are the host's, not the emulated CPU's."""
    cpuinfo = Path("/proc/cpuinfo")
    if not sys.platform.startswith("linux") or not cpuinfo.is_file():
        return None
    for line in cpuinfo.read_text(errors="replace").splitlines():
        if line.startswith("flags"):
            return frozenset(line.partition(":")[2].split())
    return None


def flags_class(flags: Optional[FrozenSet[str]] = None) -> str:
    """The best class whose flags the CPU has ("unknown" when the flags cannot be read)."""
    flags = cpu_flags() if flags is None else flags
    if flags is None:
        return "unknown"
    for name, required in _FLAG_CLASSES:
        if all(flag in flags for flag in required):
            return name
    return "older than SSE4.2"


def kernel_class(kernels, saturates: bool) -> str:
    """The class the CPU plugin's int8 kernels belong to: their instruction set, with VNNI when
    the sums are exact on an AVX-512 or AVX2 kernel."""
    names = " ".join(kernels).lower()
    for token, name in _KERNEL_ISAS:
        if token in names:
            if name in ("AVX-512", "AVX2") and not saturates:
                return "AVX-512 VNNI" if name == "AVX-512" else "AVX-VNNI"
            return name
    return "unknown"


def _u8_activations(ops, value):
    """A FakeQuantize to 256 levels over [0, 2.55]: OpenVINO runs what follows it on u8."""
    low, high = ops.constant(np.float32(0.0)), ops.constant(np.float32(2.55))
    return ops.fake_quantize(value, low, high, low, high, 256)


def _int8_weights(ops, shape, value: int, scale: float = 0.01):
    """Stored int8 weights behind OpenVINO's decompression pattern (Convert -> Multiply)."""
    import openvino as ov

    stored = ops.constant(np.full(shape, value, np.int8))
    return ops.multiply(ops.convert(stored, ov.Type.f32), ops.constant(np.float32(scale)))


@dataclass(frozen=True)
class Int8Probe:
    kernels: Tuple[str, ...]  # primitiveType of the convolution and the fully connected layer
    integer: bool  # both ran in u8
    ratio: float  # the smaller ratio of a result to its exact value: 1.0 exact, about 0.5 saturated


def int8_probe(core=None, weight: int = 127) -> Int8Probe:
    """Runs a 3x3 convolution and a fully connected layer whose u8 activations are all 255 and
    whose int8 weights are all `weight` on the CPU plugin."""
    import openvino as ov
    import openvino.opset13 as ops

    core = core or ov.Core()
    channels, features = 32, 64
    image = ops.parameter([1, channels, 4, 4], ov.Type.f32)
    conv = ops.convolution(_u8_activations(ops, image), _int8_weights(ops, [4, channels, 3, 3], weight),
                           [1, 1], [1, 1], [1, 1], [1, 1])
    rows = ops.parameter([2, features], ov.Type.f32)
    fully_connected = ops.matmul(_u8_activations(ops, rows), _int8_weights(ops, [8, features], weight),
                                 False, True)
    compiled = core.compile_model(ov.Model([conv, fully_connected], [image, rows]), "CPU",
                                  {"INFERENCE_PRECISION_HINT": "f32"})
    layers = {
        info["layerType"].astype(str): (info["runtimePrecision"].astype(str), info["primitiveType"].astype(str))
        for info in (op.get_rt_info() for op in compiled.get_runtime_model().get_ops())
    }
    weighted = [layers.get(kind, ("", "")) for kind in ("Convolution", "FullyConnected")]
    results = compiled.create_infer_request().infer(
        [np.full([1, channels, 4, 4], 2.55, np.float32), np.full([2, features], 2.55, np.float32)]
    )
    per_product = 2.55 * weight * 0.01
    conv_ratio = float(results[compiled.outputs[0]][0, 0, 1, 1]) / (channels * 9 * per_product)  # a full 3x3 window
    fc_ratio = float(results[compiled.outputs[1]][0, 0]) / (features * per_product)
    return Int8Probe(tuple(kernel for _, kernel in weighted), all(precision == "u8" for precision, _ in weighted),
                     min(conv_ratio, fc_ratio))


def dynamic_quantization_probe(core=None) -> bool:
    """Whether a fully connected layer with int8 weights computes differently with the CPU
    plugin's default DYNAMIC_QUANTIZATION_GROUP_SIZE than with it off."""
    import openvino as ov
    import openvino.opset13 as ops

    core = core or ov.Core()
    rng = np.random.default_rng(0)
    inputs, outputs = 256, 64
    x = ops.parameter([4, inputs], ov.Type.f32)
    stored = ops.constant(rng.integers(-127, 128, (outputs, inputs)).astype(np.int8))
    weights = ops.multiply(ops.convert(stored, ov.Type.f32), ops.constant(np.full([outputs, 1], 0.01, np.float32)))
    model = ov.Model([ops.matmul(x, weights, False, True)], [x])
    sample = rng.standard_normal((4, inputs)).astype(np.float32)
    results = []
    for extra in ({}, {"DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}):
        compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32", **extra})
        results.append(compiled.create_infer_request().infer([sample])[0])
    return bool(np.abs(results[0] - results[1]).max() > 0)


@functools.lru_cache(maxsize=1)
def describe() -> CpuReport:
    """Measures this process's CPU once (needs the openvino Python package)."""
    import openvino as ov

    core = ov.Core()
    probe = int8_probe(core)
    saturates = probe.ratio < 0.99
    return CpuReport(
        device_name=str(core.get_property("CPU", "FULL_DEVICE_NAME")),
        instruction_set_class=kernel_class(probe.kernels, saturates),
        flags_class=flags_class(),
        optimization_capabilities=tuple(core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")),
        int8_kernels=probe.kernels,
        int8_integer=probe.integer,
        int8_saturates=saturates,
        dynamic_quantization=dynamic_quantization_probe(core),
        onednn_max_cpu_isa=os.environ.get("ONEDNN_MAX_CPU_ISA") or None,
    )
