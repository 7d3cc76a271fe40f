"""Quantizing a model ahead of time for the delegate: the two recipes of docs/quantization.md.

Both return an ExportedProgram ready for `to_edge_transform_and_lower(..., partitioner=[
OpenvinoPartitioner()])`; the delegate keeps the quantization (FakeQuantize and int8 weights in
the IR) and OpenVINO runs it with integer kernels.

    quantize_pt2e           static int8 post-training quantization (weights and activations),
                            calibrated on sample inputs; for convolutional networks.
    compress_weights_int8   int8 weights for Linear / matmul layers, activations left in float;
                            no calibration data; for linear-heavy models (transformers, MLPs).
    compress_weights_int4   int4 weights in groups (embedding and last layer int8 unless asked),
                            no calibration data; for LLMs (OpenVINO stores them as u4 / i4).
    OverflowSafeQuantizer   wraps a torchao PT2E quantizer of your own so that its int8 weights
                            are accurate on every CPU (the overflow fix, below).

NNCF (`pip install nncf`) does the work, as for ExecuTorch's own OpenVINO backend; with a torchao
quantizer of your own, quantize_pt2e uses torchao's prepare_pt2e / convert_pt2e instead and needs
no NNCF.

The overflow fix: on CPUs without VNNI (AVX2, AVX-512 without VNNI) OpenVINO's int8 kernels sum
u8 x s8 products in pairs into 16 bits, which saturates when weights use the whole int8 range.
Static int8 recipes here therefore quantize the weights of convolutions and linear layers into
half the range (+-64, 7 bits) by default (`overflow_fix="enable"`), which computes exactly on
every CPU; `"disable"` keeps 8 bits, a little more accurate on CPUs with VNNI or AMX and much
less accurate without. NNCF's `OverflowFix` names the same choices. See docs/quantization.md.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Iterable, List, Optional, Tuple

import torch
from torch.export import ExportedProgram
from torchao.quantization.pt2e.quantizer.quantizer import Quantizer, QuantizationSpec, QuantizationSpecBase

logger = logging.getLogger(__name__)

_NNCF_MISSING = "NNCF is needed for this recipe: pip install nncf (tested with nncf 3.4.0)"

# NNCF's OverflowFix values: int8 weights of every convolution and linear layer in half the range;
# of the first convolutions after each input only (NNCF's own default); none.
OVERFLOW_FIX_CHOICES = ("enable", "first_layer_only", "disable")
# Half the int8 range, symmetric: |q| * 255 * 2 stays within 16 bits (see cpu_capabilities).
_HALF_RANGE = (-63, 63)


def _overflow_fix(value) -> str:
    text = str(getattr(value, "value", value))
    if text not in OVERFLOW_FIX_CHOICES:
        raise ValueError(f"overflow_fix must be one of {', '.join(OVERFLOW_FIX_CHOICES)}, not {value!r}")
    return text


def _nncf():
    try:
        import nncf
    except ImportError as error:
        raise ImportError(_NNCF_MISSING) from error
    return nncf


def _as_args(sample: Any) -> Tuple:
    """A calibration sample as the model's positional arguments (a lone tensor is one argument)."""
    return tuple(sample) if isinstance(sample, (tuple, list)) else (sample,)


def _graph_module(model, example_inputs: Optional[Tuple], dynamic_shapes=None) -> Tuple[torch.fx.GraphModule, Tuple]:
    """The torch.fx graph the quantizers annotate, and the example inputs to re-export it with."""
    if isinstance(model, ExportedProgram):
        example = example_inputs if example_inputs is not None else model.example_inputs[0]
        return model.module(), tuple(example)
    if example_inputs is None:
        raise ValueError("example_inputs are needed to export an nn.Module")
    with torch.no_grad():
        exported = torch.export.export(model.eval(), tuple(example_inputs), dynamic_shapes=dynamic_shapes, strict=False)
    return exported.module(), tuple(example_inputs)


def _export_again(graph_module: torch.fx.GraphModule, example: Tuple, dynamic_shapes) -> ExportedProgram:
    with torch.no_grad():
        return torch.export.export(graph_module, example, dynamic_shapes=dynamic_shapes, strict=False)


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
                      VNNI or AMX). See the module's docstring.
    Weights are stored as int8 (quantize ops folded), so the IR and the .pte hold int8 weights.
    """
    if subset_size < 1:
        raise ValueError("subset_size must be at least 1")
    fix = _overflow_fix(overflow_fix)
    graph_module, example = _graph_module(model, example_inputs)
    samples = [_as_args(sample) for _, sample in zip(range(subset_size), calibration_data)]
    if not samples:
        raise ValueError("calibration_data is empty: static quantization needs sample inputs")

    if quantizer is None:
        nncf = _nncf()
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
    nncf = _nncf()
    graph_module, example = _graph_module(model, example_inputs, dynamic_shapes)
    mode = nncf.CompressWeightsMode.INT8_SYM if symmetric else nncf.CompressWeightsMode.INT8_ASYM
    compressed = nncf.compress_weights(graph_module, mode=mode)
    return _export_again(compressed, example, dynamic_shapes)


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
    The delegate stores them as OpenVINO u4 / i4 constants (low_bit_weights.py). No calibration
    data is needed; for data-aware compression (AWQ, scale estimation) call NNCF yourself.

    model, dynamic_shapes: as for compress_weights_int8. group_size must divide each layer's
    number of inputs (-1: one group per output channel).
    """
    nncf = _nncf()
    graph_module, example = _graph_module(model, example_inputs, dynamic_shapes)
    mode = nncf.CompressWeightsMode.INT4_SYM if symmetric else nncf.CompressWeightsMode.INT4_ASYM
    compressed = nncf.compress_weights(graph_module, mode=mode, group_size=group_size, ratio=ratio,
                                       all_layers=all_layers)
    return _export_again(compressed, example, dynamic_shapes)


# ---------------------------------------------------------------------------------------------
# The overflow fix for torchao PT2E quantizers


def _weighted_ops():
    aten = torch.ops.aten
    return {
        aten.conv1d.default, aten.conv2d.default, aten.conv3d.default,
        aten.conv1d.padding, aten.conv2d.padding, aten.conv3d.padding,
        aten.conv_transpose1d.default, aten.conv_transpose2d.input, aten.conv_transpose3d.input,
        aten.linear.default,
    }


def _is_convolution(node: torch.fx.Node) -> bool:
    return node.target is not torch.ops.aten.linear.default


def _first_layers(graph: torch.fx.Graph, weighted: List[torch.fx.Node]) -> List[torch.fx.Node]:
    """The convolutions first reached from each input of the graph (NNCF's "first layer")."""
    candidates = {node for node in weighted if _is_convolution(node)}
    found, seen = [], set()
    queue = [node for node in graph.nodes if node.op == "placeholder"]
    while queue:
        node = queue.pop(0)
        for user in node.users:
            if user in seen:
                continue
            seen.add(user)
            if user in candidates:
                found.append(user)
            else:
                queue.append(user)
    return found


def _narrowed(spec: QuantizationSpecBase) -> Optional[QuantizationSpec]:
    """The spec with half the int8 range, or None when it is not a symmetric int8 spec."""
    symmetric = getattr(spec, "qscheme", None) in (torch.per_tensor_symmetric, torch.per_channel_symmetric)
    if not isinstance(spec, QuantizationSpec) or spec.dtype != torch.int8 or not symmetric:
        return None
    return dataclasses.replace(spec, quant_min=_HALF_RANGE[0], quant_max=_HALF_RANGE[1])


class OverflowSafeQuantizer(Quantizer):
    """A torchao PT2E quantizer whose int8 weights of convolutions and linear layers are annotated
    with half the int8 range (-63..63), so OpenVINO's int8 kernels compute them exactly on CPUs
    without VNNI too.

        prepared = prepare_pt2e(graph_module, OverflowSafeQuantizer(XNNPACKQuantizer().set_global(...)))

    overflow_fix: "enable" (every such layer), "first_layer_only" (the first convolutions after
    each input), "disable" (the wrapped quantizer unchanged). Only symmetric int8 weight specs are
    narrowed (what OpenVINO's integer kernels take); others are left as the quantizer made them.
    """

    def __init__(self, quantizer: Quantizer, overflow_fix: str = "enable") -> None:
        super().__init__()
        self.quantizer, self.overflow_fix = quantizer, _overflow_fix(overflow_fix)

    def transform_for_annotation(self, model: torch.fx.GraphModule) -> torch.fx.GraphModule:
        return self.quantizer.transform_for_annotation(model)

    def validate(self, model: torch.fx.GraphModule) -> None:
        self.quantizer.validate(model)

    def annotate(self, model: torch.fx.GraphModule) -> torch.fx.GraphModule:
        model = self.quantizer.annotate(model)
        if self.overflow_fix == "disable":
            return model
        weighted_ops = _weighted_ops()
        weighted = [n for n in model.graph.nodes if n.op == "call_function" and n.target in weighted_ops]
        if self.overflow_fix == "first_layer_only":
            weighted = _first_layers(model.graph, weighted)
        for node in weighted:
            annotation = node.meta.get("quantization_annotation")
            weight = node.args[1] if len(node.args) > 1 else None
            if annotation is None or weight not in annotation.input_qspec_map:
                continue
            narrowed = _narrowed(annotation.input_qspec_map[weight])
            if narrowed is None:
                logger.info("%s: weight quantization spec left as is (not symmetric int8)", node.name)
                continue
            annotation.input_qspec_map[weight] = narrowed
        return model
