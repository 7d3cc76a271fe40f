"""Preprocess: one delegated partition to OpenVINO IR in the delegate's container.

ExecuTorch finds a backend's preprocess by its backend id, so the class is named after it.
"""

from __future__ import annotations

from typing import List, final

from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult
from executorch.exir.backend.compile_spec_schema import CompileSpec
from torch.export import ExportedProgram

from . import compile_specs, ir_conversion
from .blob import build_blob


@final
class ExecutorchOpenvinoBackend(BackendDetails):
    @staticmethod
    def preprocess(edge_program: ExportedProgram, compile_spec: List[CompileSpec]) -> PreprocessResult:
        options = compile_specs.from_compile_specs(compile_spec)
        # module() turns the partition's lifted weights back into constants of the graph, so they
        # land in the IR's weights and the delegate's inputs are the partition's user inputs only.
        model = ir_conversion.convert(edge_program.module())
        xml, weights = ir_conversion.serialize(model, compress_to_fp16=options.compress_to_fp16)
        return PreprocessResult(processed_bytes=build_blob(xml, weights))
