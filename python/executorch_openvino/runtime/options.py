"""Run-time options: the device and OpenVINO settings chosen when a program loads, not when it was
exported.

Precedence, highest first: load-time options for our backend id (C++: runtime_specs through
`Module::load(LoadBackendOptionsMap)`), the process-wide values set here (they reach the library
through its C entry point, since ExecuTorch's Python bindings cannot pass backend options), the
environment (EXECUTORCH_OPENVINO_<KEY>, e.g. EXECUTORCH_OPENVINO_DEVICE=GPU), then the program's
compile specs.

Keys (the library's list: executorch_openvino.runtime.library.load().option_keys()):
  device               any OpenVINO device string: CPU, GPU, GPU.1, NPU, AUTO, HETERO:GPU,CPU
  performance_hint     LATENCY (default), THROUGHPUT, CUMULATIVE_THROUGHPUT
  num_threads          INFERENCE_NUM_THREADS; 0 lets OpenVINO decide
  num_streams          NUM_STREAMS: a number or AUTO
  precision            exact (INFERENCE_PRECISION_HINT=f32) or fast (the device's own default: bf16 or
                       f16 where the hardware has it); docs/precision.md
  inference_precision  INFERENCE_PRECISION_HINT: f32 (default on CPU), bf16, f16 (wins over precision
                       when both come through the same channel)
  cache_dir            the model cache folder (compiled models stored and imported; docs/options.md, Model cache)
  enable_mmap          ENABLE_MMAP
  enable_profiling     PERF_COUNT: per-layer times as ExecuTorch profiling events
  attention            auto (default: paged where it can run, else grown; grown on other devices and
                       with cache_dir), grown (a language model's KV caches as OpenVINO state, as
                       exported) or paged (OpenVINO's paged attention, the model rewritten at load; on
                       CPU with the state helper); docs/conversation-state.md
  dynamic_quantization DYNAMIC_QUANTIZATION_GROUP_SIZE, the group in which the CPU quantizes the
                       activations of layers with compressed weights: auto (default: 128 for int8
                       weights, else OpenVINO's; docs/quantization.md), on (OpenVINO's 32), off, or a number

    import executorch_openvino
    executorch_openvino.set_options(device="AUTO", num_threads=4)
    method = Runtime.get().load_program("model.pte").load_method("forward")  # compiled for AUTO

    with executorch_openvino.using_options(attention="grown"):   # for the loads inside the block only
        method = Runtime.get().load_program("llama.pte").load_method("forward")
"""

from __future__ import annotations

import contextlib
from typing import Any, Dict, Iterator, Optional

from . import library

class OptionError(ValueError):
    """An unknown option key, or a value the option does not accept."""


def _library() -> library.LoadedLibrary:
    loaded = library.load()  # imports ExecuTorch's bindings when nothing has yet
    if loaded is None:
        raise RuntimeError(f"the executorch_openvino library is not loaded: {library.load_error()}")
    return loaded


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# What this process set through set_options, to undo a partly applied call.
_set_here: Dict[str, str] = {}


def set_options(**options: Any) -> None:
    """Sets process-wide defaults for programs loaded from now on. None removes a key. Raises
    OptionError, changing nothing, for an unknown key or a bad value."""
    lib = _library()
    applied = []
    for key, value in options.items():
        if lib.set_option(key, _text(value)) != 0:  # the library refuses unknown keys and bad values
            message = lib.last_error()
            for done in applied:  # put back what this call already changed
                lib.set_option(done, _set_here.get(done, ""))
            raise OptionError(message)
        applied.append(key)
    for key, value in options.items():
        if value is None:
            _set_here.pop(key, None)
        else:
            _set_here[key] = _text(value)


@contextlib.contextmanager
def using_options(**options: Any) -> Iterator[None]:
    """set_options for the programs loaded inside the block; on leaving it (an exception included),
    each key has again what set_options had given it before (or nothing, so that the environment and
    the program decide again). A load reads the options once, so a method loaded inside keeps them.

        with executorch_openvino.using_options(attention="grown"):
            method = Runtime.get().load_program("llama.pte").load_method("forward")
    """
    before = {key: _set_here.get(key) for key in options}
    set_options(**options)  # raises OptionError, changing nothing, before the block runs
    try:
        yield
    finally:
        set_options(**before)


def get_options() -> Dict[str, Optional[str]]:
    """What a load without load-time options would use for each key from set_options or the
    environment; None where neither sets it (the program's compile spec or the default decides)."""
    lib = _library()
    return {key: (lib.get_option(key) or None) for key in lib.option_keys()}


def reset_options() -> None:
    """Removes every value set with set_options."""
    lib = _library()
    for key in lib.option_keys():
        lib.set_option(key, "")
    _set_here.clear()


def compiled_models() -> list:
    """The compiled models alive in this process: device, source ("ir": compiled from the IR;
    "precompiled": embedded in the program; "cache": imported from the model cache in cache_dir;
    "upstream": a program of ExecuTorch's own OpenVINO delegate), users (loaded methods sharing it)
    and the properties OpenVINO reports (EXECUTION_DEVICES, PERFORMANCE_HINT, INFERENCE_NUM_THREADS,
    NUM_STREAMS, INFERENCE_PRECISION_HINT, PERF_COUNT)."""
    return _library().describe_compiled_models()
