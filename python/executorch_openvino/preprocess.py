"""Preprocess: one delegated partition to OpenVINO IR in the delegate's container.

ExecuTorch finds a backend's preprocess by its backend id, so the class is named after it.
"""

from __future__ import annotations

import io
from typing import List, final

import numpy as np
from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult
from executorch.exir.backend.compile_spec_schema import CompileSpec
from torch.export import ExportedProgram

from . import compile_specs, index_bounds, int8_range_check, ir_conversion, named_weights, repeated_work
from .blob import PrecompiledModel, build_blob
from .llm import grown_cache, rotary, stateful


@final
class ExecutorchOpenvinoBackend(BackendDetails):
    @staticmethod
    def preprocess(edge_program: ExportedProgram, compile_spec: List[CompileSpec]) -> PreprocessResult:
        options = compile_specs.from_compile_specs(compile_spec)
        if edge_program.graph_signature.buffers_to_mutate:
            # Buffers this partition consumed: kept as inputs and outputs to become OpenVINO state.
            graph_module, states = stateful.inline_constants(edge_program)
            model = ir_conversion.convert(graph_module, edge_program.range_constraints)
            repeated_work.share_equal_inputs(model, edge_program)
            stateful.make_stateful(model, states)
            if options.grow_caches:
                grown_cache.grow_caches(model)
        else:
            # module() turns the partition's lifted weights back into constants of the graph, so
            # they land in the IR's weights and the delegate's inputs are the partition's user
            # inputs only.
            model = ir_conversion.convert(edge_program.module(), edge_program.range_constraints)
            repeated_work.share_equal_inputs(model, edge_program)
        # After the caches took their final form: the rewrite follows keys through them.
        rotary.fuse_rotary(model)
        int8_range_check.warn_if_full_range(model)
        arguments = repeated_work.drop_unread_inputs(model)
        bounds = index_bounds.input_bounds(model)  # by the final inputs
        xml, weights = ir_conversion.serialize(model, compress_to_fp16=options.compress_to_fp16)
        precompiled = [precompile(xml, weights, device, options.properties) for device in options.precompile]
        tag = named_weights.file_tag(edge_program)
        if tag is None or not weights:
            return PreprocessResult(processed_bytes=build_blob(xml, weights, precompiled, arguments,
                                                               input_bounds=bounds))
        where, store = named_weights.store(weights, tag)
        return PreprocessResult(processed_bytes=build_blob(xml, b"", precompiled, arguments, where, bounds),
                                data_store_output=store)


def precompile(xml: bytes, weights: bytes, device: str, properties) -> PrecompiledModel:
    """Compiles the serialised IR for `device` as the runtime library would by default, and exports
    the compiled model with what the runtime checks before importing it."""
    import openvino as ov

    core = ov.Core()
    if device not in core.available_devices and not device.startswith(device_prefixes(core)):
        raise ValueError(
            f"cannot precompile for {device!r}: it is not available on this machine "
            f"(available: {', '.join(core.available_devices)})"
        )
    used = compile_specs.load_time_properties(device, properties)
    model = core.read_model(xml, ov.Tensor(np.frombuffer(weights, dtype=np.uint8)) if weights else None)
    compiled = core.compile_model(model, device, used)
    stream = io.BytesIO()
    compiled.export_model(stream)
    return PrecompiledModel(device, ov.get_version(), used, stream.getvalue())


def device_prefixes(core) -> tuple:
    # "GPU" names "GPU.0" when there are several.
    return tuple(name.split(".")[0] for name in core.available_devices)
