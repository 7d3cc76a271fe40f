"""Weight-only compression for linear-heavy models and LLMs: int8 or int4 weights, activations in
float, no calibration data (NNCF's compress_weights)."""

from __future__ import annotations

from typing import Optional, Tuple

from torch.export import ExportedProgram

from .graphs import export_again, graph_module_of, nncf_module


def compress_weights_int8(
    model, example_inputs: Optional[Tuple] = None, *, symmetric: bool = False, dynamic_shapes=None
) -> ExportedProgram:
    """int8 weights for the Linear / matmul (and embedding) layers, with NNCF's
    compress_weights: asymmetric (per output channel scale and zero point, NNCF's default for
    int8) unless `symmetric`. Activations stay float; no calibration data is needed.

    model:          an nn.Module (exported here with `example_inputs`) or an ExportedProgram.
    dynamic_shapes: torch.export's dynamic_shapes for the example inputs (e.g. an LLM's prompt
                    length), used for every export done here.
    """
    nncf = nncf_module()
    graph_module, example = graph_module_of(model, example_inputs, dynamic_shapes)
    mode = nncf.CompressWeightsMode.INT8_SYM if symmetric else nncf.CompressWeightsMode.INT8_ASYM
    compressed = nncf.compress_weights(graph_module, mode=mode)
    return export_again(compressed, example, dynamic_shapes)


def compress_weights_int4(
    model,
    example_inputs: Optional[Tuple] = None,
    *,
    group_size: int = 128,
    symmetric: bool = True,
    ratio: float = 1.0,
    all_layers: bool = False,
    dynamic_shapes=None,
) -> ExportedProgram:
    """int4 weights in groups of `group_size` input values for the Linear / matmul layers, with
    NNCF's compress_weights (INT4_SYM, or INT4_ASYM unless `symmetric`): `ratio` of them in int4,
    the rest, and unless `all_layers` the embedding and the last layer, in int8 (NNCF's choice).
    The delegate stores them as OpenVINO u4 / i4 constants (ir_passes/low_bit_weights.py). No calibration
    data is needed; for data-aware compression (AWQ, scale estimation) call NNCF yourself.

    model, dynamic_shapes: as for compress_weights_int8. group_size must divide each layer's
    number of inputs (-1: one group per output channel).
    """
    nncf = nncf_module()
    graph_module, example = graph_module_of(model, example_inputs, dynamic_shapes)
    mode = nncf.CompressWeightsMode.INT4_SYM if symmetric else nncf.CompressWeightsMode.INT4_ASYM
    compressed = nncf.compress_weights(graph_module, mode=mode, group_size=group_size, ratio=ratio,
                                       all_layers=all_layers)
    return export_again(compressed, example, dynamic_shapes)
