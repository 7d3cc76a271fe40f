"""Static int8 post-training quantization of weights and activations, calibrated on sample inputs."""

from __future__ import annotations

from typing import Iterable, Optional, Tuple

import torch
from torch.export import ExportedProgram

from .graphs import as_args, graph_module_of, nncf_module
from .overflow_fix import OverflowSafeQuantizer, overflow_fix_choice


def quantize_pt2e(
    model,
    example_inputs: Optional[Tuple],
    calibration_data: Iterable,
    *,
    quantizer=None,
    subset_size: int = 300,
    overflow_fix: str = "enable",
) -> ExportedProgram:
    """Static int8 quantization of weights (per channel) and activations (per tensor).

    model:            an nn.Module (exported here with `example_inputs`) or an ExportedProgram.
    calibration_data: samples of the model's inputs, each a tensor or a tuple of tensors; up to
                      `subset_size` of them are run to measure activation ranges.
    quantizer:        None for NNCF's post-training quantization of the graph (nncf.quantize:
                      symmetric int8 with OpenVINO's CPU scheme, the algorithm ExecuTorch's
                      OpenVINOQuantizer drives, with bias correction); any torchao PT2E quantizer
                      (e.g. XNNPACKQuantizer) is applied with torchao's prepare_pt2e /
                      convert_pt2e.
    overflow_fix:     "enable" (default: every convolution's and linear layer's int8 weights in
                      +-64, exact on every CPU), "first_layer_only" (the first convolutions only,
                      NNCF's default), "disable" (the full int8 range: accurate only on CPUs with
                      VNNI or AMX). See overflow_fix.py.
    Weights are stored as int8 (quantize ops folded), so the IR and the .pte hold int8 weights.
    """
    if subset_size < 1:
        raise ValueError("subset_size must be at least 1")
    fix = overflow_fix_choice(overflow_fix)
    graph_module, example = graph_module_of(model, example_inputs)
    samples = [as_args(sample) for _, sample in zip(range(subset_size), calibration_data)]
    if not samples:
        raise ValueError("calibration_data is empty: static quantization needs sample inputs")

    if quantizer is None:
        nncf = nncf_module()
        from nncf.quantization.advanced_parameters import AdvancedQuantizationParameters

        # nncf.quantize rather than NNCF's quantize_pt2e with OpenVINOQuantizer: the same
        # algorithm, but the latter always applies NNCF's first-layer-only overflow fix.
        quantized = nncf.quantize(
            graph_module,
            nncf.Dataset(samples),
            subset_size=len(samples),
            advanced_parameters=AdvancedQuantizationParameters(overflow_fix=nncf.OverflowFix(fix)),
        )
    else:
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

        prepared = prepare_pt2e(graph_module, OverflowSafeQuantizer(quantizer, fix))
        with torch.no_grad():
            for sample in samples:
                prepared(*sample)
        quantized = convert_pt2e(prepared, fold_quantize=True)
    return torch.export.export(quantized, example)
