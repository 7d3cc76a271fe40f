"""OpenvinoPartitioner: tags the nodes the delegate takes, for `to_edge_transform_and_lower`."""

from __future__ import annotations

import logging
from typing import Any, Iterable, Mapping, Optional

import torch

from executorch.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult
from torch.export import ExportedProgram

from . import lowering_progress, partition
from .backend_id import BACKEND_ID
from .container import compile_specs
from .partition import NodeSupport, OpSpec, Partitioning
from .partition.equal_values import fingerprints
from .partition.kept_whole import stored_weight_reader
from .preprocess import ExecutorchOpenvinoBackend  # noqa: F401  (ExecuTorch finds preprocess by id)

logger = logging.getLogger(__name__)


class OpenvinoPartitioner(Partitioner):
    """Delegates every node OpenVINO's PyTorch frontend supports to executorch_openvino.

    device:          the default OpenVINO device the program is compiled for at load time ("CPU",
                     "GPU", "NPU", "AUTO", ...); the device can be changed when the program loads
                     (executorch_openvino.set_options, load-time options, EXECUTORCH_OPENVINO_DEVICE).
    compile_options: OpenVINO properties for compile_model (e.g. {"NUM_STREAMS": "1"}); at load
                     time PERFORMANCE_HINT defaults to LATENCY and, on CPU and AUTO,
                     INFERENCE_PRECISION_HINT to f32 so results match eager fp32.
                     compress_to_fp16=True stores the weights as fp16 (off by default).
    precision:       "exact" (INFERENCE_PRECISION_HINT=f32 on every device: eager fp32's results) or
                     "fast" (the device's own default: bf16 on CPUs with bf16 or AMX, f16 on GPUs,
                     f32 elsewhere). Unset: exact on CPU and AUTO, the device's own on GPU / NPU.
                     A load may choose again (the precision run-time option). docs/precision.md.
    precompile:      devices (e.g. ["CPU"]) to embed a compiled model for, made on this machine
                     with the installed OpenVINO; used at load time when the device, options and
                     OpenVINO version match, else the IR is compiled (and a log line says why).
    skip_ops:        operators never delegated: "aten.add.Tensor", "aten.add" (every overload), or
                     torch.ops.aten.add.Tensor.
    skip_nodes:      names of graph nodes never delegated.
    stateful:        buffers the program mutates inside a partition (an LLM's KV caches) live in
                     OpenVINO as state: ExecuTorch neither passes them in nor copies them back
                     (ir_passes/buffer_variables.py). False keeps them ExecuTorch's.
    grow_caches:     such caches written by index are rewritten to grow with the conversation, the
                     form OpenVINO's CPU plugin runs as one fused attention kernel (ir_passes/grown_cache.py);
                     a call continues the conversation, goes back to an earlier position (with the
                     state helper, or paged) or starts at 0 (docs/conversation-state.md). False keeps
                     them static (any position without the helper; slower).
    weights:         "int8" (asymmetric, per output channel), "int8_sym", "int4" (symmetric, in groups of
                     `group_size` input values) or "int4_asym": the delegated linear layers' weights
                     compressed with NNCF's weight-only compression of the OpenVINO model, as
                     optimum-intel compresses it (the embedding and the last layer stay int8 unless
                     int8 is asked for); activations stay float. Needs NNCF (the quantization extra).
    group_size:      int4's group size (default 128; it must divide the compressed layers' input widths,
                     -1: one group per output channel).
    external_weights: a file name tag (e.g. "model"): the delegated weights go to ExecuTorch's named
                     data for that file instead of the .pte; `program.write_tensor_data_to_file(folder)`
                     writes `<tag>.ptd`, which the program then loads with (container/named_weights.py). Constants
                     already tagged by ExecuTorch's external_constants_pass keep their tag.
    """

    def __init__(
        self,
        device: str = "CPU",
        *,
        compile_options: Optional[Mapping[str, Any]] = None,
        skip_ops: Iterable[OpSpec] = (),
        skip_nodes: Iterable[str] = (),
        precompile: Iterable[str] = (),
        stateful: bool = True,
        grow_caches: bool = True,
        external_weights: Optional[str] = None,
        precision: Optional[str] = None,
        weights: Optional[str] = None,
        group_size: Optional[int] = None,
    ) -> None:
        if external_weights is not None and (not isinstance(external_weights, str) or not external_weights
                                             or any(c in external_weights for c in "/\\\0")):
            raise ValueError(f"external_weights takes a file name tag such as 'model', got {external_weights!r}")
        self.options = compile_specs.export_options(device, compile_options, precompile, grow_caches, precision,
                                                    weights, group_size)
        if weights is not None:  # preprocess compresses with NNCF: say now if it is missing
            from .quantization.graphs import nncf_module

            nncf_module()
        self.delegation_spec = DelegationSpec(BACKEND_ID, compile_specs.to_compile_specs(self.options))
        self.skip_ops = tuple(skip_ops)
        self.skip_nodes = tuple(skip_nodes)
        self.stateful = stateful
        self.external_weights = external_weights
        self.last_support: Optional[NodeSupport] = None
        self.consumed_buffers: dict = {}  # buffer name -> partition tag, of the last partition() call
        self._buffer_fingerprints: dict = {}  # buffer name -> equal_values.Fingerprint, or None

    def ops_to_not_decompose(self, exported_program: ExportedProgram):
        """Operators outside core ATen that the delegate takes and that to_edge must therefore let
        through: ATen's right shift where it reads a stored weight, as NNCF unpacks int4 weights, and is
        still under its ATen name (partition/kept_whole.py renames those the delegate takes; skip_ops
        can leave one)."""
        # A check function costs a whole retrace: ExecuTorch then decomposes the graph twice more
        # instead of once (its EDGE_DO_NOT_DECOMP path; a third of to_edge's decomposition time at
        # SmolLM2-360M), so it is handed over only when a shift is left. (A shift kept without it
        # would fail the edge verifier: only that path records it as preserved.)
        shift = torch.ops.aten.bitwise_right_shift.Tensor_Scalar
        if not any(node.op == "call_function" and node.target is shift
                   for node in exported_program.graph_module.graph.nodes):
            return [], None
        return [shift], stored_weight_reader(exported_program)

    def transform_for_pre_decomposition(self, exported_program: ExportedProgram) -> ExportedProgram:
        """Keeps whole through to_edge what this delegate takes whole: recurrent layers and attention
        (partition/kept_whole.py)."""
        # ExecuTorch calls this hook first, then decomposes the program and runs its edge passes.
        lowering_progress.started(lowering_progress.DECOMPOSITIONS)
        # Read while the buffers still hold values (see partition/equal_values.equal_buffers); a name
        # seen with other values in another method is unknown.
        for name, fingerprint in fingerprints(exported_program).items():
            earlier = self._buffer_fingerprints.setdefault(name, fingerprint)
            if earlier != fingerprint:
                self._buffer_fingerprints[name] = None
        return partition.keep_whole(exported_program, NodeSupport(self.skip_ops, self.skip_nodes))

    def partition(self, exported_program: ExportedProgram) -> PartitionResult:
        lowering_progress.started(lowering_progress.PARTITIONING)
        partitioning = partition.run(Partitioning(
            exported_program, NodeSupport(self.skip_ops, self.skip_nodes), self.delegation_spec,
            stateful=self.stateful, external_weights=self.external_weights,
            buffer_fingerprints=self._buffer_fingerprints))
        self.consumed_buffers = partitioning.consumed_buffers
        self.last_support = partitioning.support
        logger.info("executorch_openvino: %d partition(s), %d node(s) refused", len(partitioning.tags),
                    len(partitioning.support.refusals))
        return PartitionResult(tagged_exported_program=exported_program, partition_tags=partitioning.tags)
