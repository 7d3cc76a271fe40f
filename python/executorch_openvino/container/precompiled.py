"""A compiled model embedded in the blob, made at export for a device of this machine."""

from __future__ import annotations

import io

import numpy as np

from . import compile_specs
from .blob import PrecompiledModel


def precompile(xml: bytes, weights: bytes, device: str, properties, precision=None,
               weights_spec=None) -> PrecompiledModel:
    """Compiles the serialised IR for `device` as the runtime library would by default, and exports
    the compiled model with what the runtime checks before importing it."""
    import openvino as ov

    core = ov.Core()
    if device not in core.available_devices and not device.startswith(_device_prefixes(core)):
        raise ValueError(
            f"cannot precompile for {device!r}: it is not available on this machine "
            f"(available: {', '.join(core.available_devices)})"
        )
    used = compile_specs.load_time_properties(device, properties, precision, weights_spec)
    model = core.read_model(xml, ov.Tensor(np.frombuffer(weights, dtype=np.uint8)) if weights else None)
    compiled = core.compile_model(model, device, used)
    stream = io.BytesIO()
    compiled.export_model(stream)
    return PrecompiledModel(device, ov.get_version(), used, stream.getvalue())


def _device_prefixes(core) -> tuple:
    # "GPU" names "GPU.0" when there are several.
    return tuple(name.split(".")[0] for name in core.available_devices)
