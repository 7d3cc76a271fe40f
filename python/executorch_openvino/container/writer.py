"""The blob of one lowered partition, and its weights as named data when they go to a .ptd file."""

from __future__ import annotations

from executorch.exir.backend.backend_details import PreprocessResult
from torch.export import ExportedProgram

from . import compile_specs, named_weights
from .blob import build_blob
from .compile_specs import ExportOptions
from .ir_file import serialized
from .precompiled import precompile


def write(lowering, edge_program: ExportedProgram, options: ExportOptions) -> PreprocessResult:
    """The blob of a lowered partition (an ir_passes.Lowering), and the partition's weights as named
    data when they go to a .ptd file."""
    with serialized(lowering.model, compress_to_fp16=options.compress_to_fp16) as (xml, weights):
        precompiled = [precompile(xml, weights, device, options.properties, options.precision,
                                  compile_specs.weights_spec(options))
                       for device in options.precompile]
        tag = named_weights.file_tag(edge_program)
        # The named data store keeps its bytes past this block, so they are copied out of the mapping.
        where, store = named_weights.store(bytes(weights), tag) if tag is not None and len(weights) else (None, None)
        blob = build_blob(xml, weights if where is None else b"", precompiled, lowering.arguments, where,
                          lowering.bounds, lowering.grown_caches)
    return PreprocessResult(processed_bytes=blob, data_store_output=store)
