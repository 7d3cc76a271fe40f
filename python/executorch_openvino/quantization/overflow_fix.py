"""The overflow fix: int8 weights in half the range, so that OpenVINO's int8 kernels compute them
exactly on CPUs without VNNI too (AVX2, AVX-512 without VNNI), where u8 x s8 products are summed in
pairs into 16 bits (runtime/cpu_capabilities.py). NNCF applies it in its own recipes; here it wraps
any torchao PT2E quantizer.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import List, Optional

import torch
from torchao.quantization.pt2e.quantizer.quantizer import Quantizer, QuantizationSpec, QuantizationSpecBase

logger = logging.getLogger(__name__)

# NNCF's OverflowFix values: int8 weights of every convolution and linear layer in half the range;
# of the first convolutions after each input only (NNCF's own default); none.
OVERFLOW_FIX_CHOICES = ("enable", "first_layer_only", "disable")
# Half the int8 range, symmetric: |q| * 255 * 2 stays within 16 bits (see cpu_capabilities).
_HALF_RANGE = (-63, 63)


def overflow_fix_choice(value) -> str:
    text = str(getattr(value, "value", value))
    if text not in OVERFLOW_FIX_CHOICES:
        raise ValueError(f"overflow_fix must be one of {', '.join(OVERFLOW_FIX_CHOICES)}, not {value!r}")
    return text


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
        self.quantizer, self.overflow_fix = quantizer, overflow_fix_choice(overflow_fix)

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
