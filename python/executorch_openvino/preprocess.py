"""Preprocess: one delegated partition to OpenVINO IR in the delegate's container, in four stages
(each a folder of this package).

ExecuTorch finds a backend's preprocess by its backend id, so the class is named after it.
"""

from __future__ import annotations

from typing import List, final

from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult
from executorch.exir.backend.compile_spec_schema import CompileSpec
from torch.export import ExportedProgram

from . import convert, fx_passes, ir_passes, lowering_progress
from .container import compile_specs, writer


@final
class ExecutorchOpenvinoBackend(BackendDetails):
    @classmethod
    def copy_exported_program_for_preprocess(cls, edge_program: ExportedProgram, compile_specs) -> ExportedProgram:
        """The partition itself, not ExecuTorch's default deep copy of it: preprocess reads the program
        and never changes it (tests/python/test_preprocess.py holds it to that), and the copy held a
        second copy of every weight for the export's duration (1.6 GB at SmolLM2-360M in fp32)."""
        return edge_program

    @staticmethod
    def preprocess(edge_program: ExportedProgram, compile_spec: List[CompileSpec]) -> PreprocessResult:
        options = compile_specs.from_compile_specs(compile_spec)
        lowering_progress.started(lowering_progress.CONVERSION)
        graph = fx_passes.prepare(edge_program)
        model = convert.to_openvino(graph.module, edge_program.range_constraints)
        lowering_progress.started(lowering_progress.IR_PASSES)
        lowering = ir_passes.run(ir_passes.Lowering(model, edge_program, graph.consumed_buffers, options))
        lowering_progress.started(lowering_progress.CONTAINER)
        return writer.write(lowering, edge_program, options)
