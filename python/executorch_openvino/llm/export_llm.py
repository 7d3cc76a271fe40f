"""ExecuTorch's LLM export (executorch.extension.llm.export.export_llm) lowering to our delegate.

ExecuTorch's export builds its Llama-family model, quantizes it and writes the runner's metadata;
with backend.openvino.enabled=true it lowers to ExecuTorch's own OpenVINO delegate. Run through
this module instead, the same command lowers to ours: its OpenVINO lowering step (the function
export_llama_lib calls for that backend) is replaced, for this process only, by one that applies
the same NNCF weight compression when a quantization was asked for (quantization.pt2e_quantize=
openvino_4wo / openvino_8wo, optionally AWQ and scale estimation) and then lowers with
OpenvinoPartitioner, KV caches kept in OpenVINO state. export.foundation_weights_file=NAME puts the
weights in a data file beside the .pte (NAME.ptd), as ExecuTorch does for XNNPACK; load it with the
program (the runner's data path, Runtime.load_program(..., data_path=...)).

    python -m executorch_openvino.llm.export_llm base.params=params.json \
        model.use_kv_cache=true model.enable_dynamic_shape=true backend.openvino.enabled=true \
        export.output_name=llama_ov.pte

Every other option is ExecuTorch's (its export_llm documentation); the .pte runs with ExecuTorch's
LLM runner or `executorch-openvino generate`.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Iterator, Optional

logger = logging.getLogger(__name__)

# The data file the export in progress asked for (export.foundation_weights_file), read when it
# lowers: ExecuTorch hands its lowering step the model, not the configuration.
_weights_file: Optional[str] = None


def _lower_with_ours(builder_exported, modelname, quantizers, additional_passes, awq, scale_estimation,
                     openvino_device: str = "CPU", verbose: bool = False):
    """Stands in for export_llama_lib._to_edge_and_lower_llama_openvino (same parameters)."""
    from ..partitioner import OpenvinoPartitioner

    if quantizers:
        from executorch.backends.openvino.quantizer import apply_nncf_data_aware_compression

        builder_exported = apply_nncf_data_aware_compression(builder_exported, quantizers[0], awq, scale_estimation)
    partitioner = OpenvinoPartitioner(openvino_device, external_weights=_weights_file)
    builder = builder_exported.to_edge_transform_and_lower([partitioner])
    if partitioner.last_support is not None:  # the scalar work around positions stays ExecuTorch's
        logger.info("left to ExecuTorch's kernels: %s", partitioner.last_support.refusals)
    if verbose:
        from executorch.devtools.backend_debug import print_delegation_info

        print_delegation_info(builder.edge_manager.exported_program().graph_module)
    # Weights left to ExecuTorch (none in the usual Llama) go to the same file.
    tag = (lambda node: _weights_file) if _weights_file else None
    return builder.to_executorch(passes=additional_passes, external_constants_tag=tag)


@contextlib.contextmanager
def lowering_to_ours() -> Iterator[None]:
    """Inside the block, ExecuTorch's LLM export with backend.openvino.enabled lowers to our
    delegate (see the module's documentation)."""
    from executorch.examples.models.llama import export_llama_lib

    theirs, their_export = export_llama_lib._to_edge_and_lower_llama_openvino, export_llama_lib._export_llama

    def export_remembering_the_weights_file(llm_config):
        global _weights_file
        _weights_file = llm_config.export.foundation_weights_file
        try:
            return their_export(llm_config)
        finally:
            _weights_file = None

    export_llama_lib._to_edge_and_lower_llama_openvino = _lower_with_ours
    export_llama_lib._export_llama = export_remembering_the_weights_file
    try:
        yield
    finally:
        export_llama_lib._to_edge_and_lower_llama_openvino = theirs
        export_llama_lib._export_llama = their_export


def export_llm(llm_config):
    """ExecuTorch's export_llama(llm_config) (an LlmConfig), lowered to our delegate when
    llm_config.backend.openvino.enabled. Returns what export_llama returns (the .pte's path)."""
    from executorch.examples.models.llama.export_llama_lib import export_llama

    with lowering_to_ours():
        return export_llama(llm_config)


def main() -> None:
    from executorch.extension.llm.export import export_llm as theirs

    with lowering_to_ours():
        theirs.main()


if __name__ == "__main__":
    main()
