"""Quantizing a model ahead of time for the delegate: the two recipes of docs/quantization.md.

Both return an ExportedProgram ready for `to_edge_transform_and_lower(..., partitioner=[
OpenvinoPartitioner()])`; the delegate keeps the quantization (FakeQuantize and int8 weights in
the IR) and OpenVINO runs it with integer kernels.

    quantize_pt2e           static int8 post-training quantization (weights and activations),
                            calibrated on sample inputs; for convolutional networks.
    compress_weights_int8   int8 weights for Linear / matmul layers, activations left in float;
                            no calibration data; for linear-heavy models (transformers, MLPs).

NNCF (`pip install nncf`) does the work, as for ExecuTorch's own OpenVINO backend; with a torchao
quantizer of your own, quantize_pt2e uses torchao's prepare_pt2e / convert_pt2e instead and needs
no NNCF.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional, Tuple

import torch
from torch.export import ExportedProgram

_NNCF_MISSING = "NNCF is needed for this recipe: pip install nncf (tested with nncf 3.4.0)"


def _nncf():
    try:
        import nncf
    except ImportError as error:
        raise ImportError(_NNCF_MISSING) from error
    return nncf


def _as_args(sample: Any) -> Tuple:
    """A calibration sample as the model's positional arguments (a lone tensor is one argument)."""
    return tuple(sample) if isinstance(sample, (tuple, list)) else (sample,)


def _graph_module(model, example_inputs: Optional[Tuple]) -> Tuple[torch.fx.GraphModule, Tuple]:
    """The torch.fx graph the quantizers annotate, and the example inputs to re-export it with."""
    if isinstance(model, ExportedProgram):
        example = example_inputs if example_inputs is not None else model.example_inputs[0]
        return model.module(), tuple(example)
    if example_inputs is None:
        raise ValueError("example_inputs are needed to export an nn.Module")
    return torch.export.export(model.eval(), tuple(example_inputs)).module(), tuple(example_inputs)


def quantize_pt2e(
    model,
    example_inputs: Optional[Tuple],
    calibration_data: Iterable,
    *,
    quantizer=None,
    subset_size: int = 300,
) -> ExportedProgram:
    """Static int8 quantization of weights (per channel) and activations (per tensor).

    model:            an nn.Module (exported here with `example_inputs`) or an ExportedProgram.
    calibration_data: samples of the model's inputs, each a tensor or a tuple of tensors; up to
                      `subset_size` of them are run to measure activation ranges.
    quantizer:        None for ExecuTorch's OpenVINOQuantizer (symmetric int8, OpenVINO's
                      preferred scheme), calibrated by NNCF (which also corrects biases); any
                      other torchao PT2E quantizer (e.g. XNNPACKQuantizer) is applied with
                      torchao's prepare_pt2e / convert_pt2e.
    Weights are stored as int8 (quantize ops folded), so the IR and the .pte hold int8 weights.
    """
    if subset_size < 1:
        raise ValueError("subset_size must be at least 1")
    graph_module, example = _graph_module(model, example_inputs)
    samples = [_as_args(sample) for _, sample in zip(range(subset_size), calibration_data)]
    if not samples:
        raise ValueError("calibration_data is empty: static quantization needs sample inputs")

    if quantizer is None:
        nncf = _nncf()
        from nncf.experimental.torch.fx import quantize_pt2e as nncf_quantize_pt2e

        from executorch.backends.openvino.quantizer import OpenVINOQuantizer

        quantized = nncf_quantize_pt2e(
            graph_module,
            OpenVINOQuantizer(),
            calibration_dataset=nncf.Dataset(samples),
            subset_size=len(samples),
            fold_quantize=True,
        )
    else:
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

        prepared = prepare_pt2e(graph_module, quantizer)
        with torch.no_grad():
            for sample in samples:
                prepared(*sample)
        quantized = convert_pt2e(prepared, fold_quantize=True)
    return torch.export.export(quantized, example)


def compress_weights_int8(
    model, example_inputs: Optional[Tuple] = None, *, symmetric: bool = False
) -> ExportedProgram:
    """int8 weights for the Linear / matmul (and embedding) layers, with NNCF's
    compress_weights: asymmetric (per output channel scale and zero point, NNCF's default for
    int8) unless `symmetric`. Activations stay float; no calibration data is needed.

    model: an nn.Module (exported here with `example_inputs`) or an ExportedProgram.
    """
    nncf = _nncf()
    graph_module, example = _graph_module(model, example_inputs)
    mode = nncf.CompressWeightsMode.INT8_SYM if symmetric else nncf.CompressWeightsMode.INT8_ASYM
    compressed = nncf.compress_weights(graph_module, mode=mode)
    return torch.export.export(compressed, example)
