"""PT2E's quantize / dequantize ops (torch.ops.quantized_decomposed) in the form OpenVINO computes
faithfully.

OpenVINO's frontend translates quantize_per_{tensor,channel}.default into a FakeQuantize and passes
dequantize through unchanged, which is right only when the dequantize reads such a quantize with the
same parameters. Everywhere else (a dequantize of stored int8 weights, a quantize whose integers leave
the graph) the integer values are real, so those nodes are spelled out as ATen arithmetic, exactly as
torch.ao's reference implementation computes them; a dequantize of stored integers becomes
Convert -> Subtract -> Multiply, the pattern OpenVINO's plugins run with integer kernels. See
docs/quantization.md.
"""

from __future__ import annotations

from typing import Tuple

import torch

from ..fx_graph import op_name, store_constant, stored_constant
from .ops.builder import Builder, UnsupportedCase

_QUANTIZE_PER_TENSOR = "quantized_decomposed.quantize_per_tensor"
_QUANTIZE_PER_CHANNEL = "quantized_decomposed.quantize_per_channel"
_DEQUANTIZE_PER_TENSOR = "quantized_decomposed.dequantize_per_tensor"
_DEQUANTIZE_PER_CHANNEL = "quantized_decomposed.dequantize_per_channel"
_DEQUANTIZE_OF = {_QUANTIZE_PER_TENSOR: _DEQUANTIZE_PER_TENSOR, _QUANTIZE_PER_CHANNEL: _DEQUANTIZE_PER_CHANNEL}

# .default takes Python scalars (per tensor) or tensors (per channel); .tensor takes 0-d tensors.
QUANTIZATION_OP_NAMES = frozenset(
    f"{packet}.{overload}"
    for packet in (*_DEQUANTIZE_OF, *_DEQUANTIZE_OF.values())
    for overload in ("default", "tensor")
    if not (overload == "tensor" and packet.endswith("per_channel"))
)


def _packet_and_overload(node: torch.fx.Node) -> Tuple[str, str]:
    if node.op != "call_function":
        return "", ""
    name = op_name(node.target)
    if name not in QUANTIZATION_OP_NAMES:
        return "", ""
    packet, overload = name.rsplit(".", 1)
    return packet, overload


def _is_fake_quantize_pair(quantize: torch.fx.Node) -> bool:
    """A quantize.default whose every user is the matching dequantize.default with the same
    parameters: the frontend's FakeQuantize computes exactly that round trip."""
    packet, overload = _packet_and_overload(quantize)
    if packet not in _DEQUANTIZE_OF or overload != "default" or not quantize.users:
        return False
    for user in quantize.users:
        user_packet, user_overload = _packet_and_overload(user)
        if (user_packet, user_overload) != (_DEQUANTIZE_OF[packet], "default"):
            return False
        if user.args[0] is not quantize or tuple(user.args[1:]) != tuple(quantize.args[1:]):
            return False
        if user.kwargs.get("out_dtype") not in (None, torch.float32):
            return False
    return True


def _is_zero(graph_module: torch.fx.GraphModule, value) -> bool:
    if isinstance(value, (int, float)):
        return value == 0
    tensor = stored_constant(graph_module, value)
    return tensor is not None and not bool(tensor.any())


def _value(graph_module: torch.fx.GraphModule, node) -> torch.Tensor:
    """The (fake or stored) tensor a node stands for, for its rank and dtype."""
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    if not isinstance(value, torch.Tensor):
        value = stored_constant(graph_module, node)
    if not isinstance(value, torch.Tensor):
        raise UnsupportedCase(f"{getattr(node, 'name', node)}: the shape and dtype of this tensor are unknown")
    return value


def _spell_out_quantize(graph_module: torch.fx.GraphModule, node: torch.fx.Node) -> torch.fx.Node:
    """clamp(round(x * (1 / scale)) + zero_point, qmin, qmax).to(dtype)"""
    aten = torch.ops.aten
    packet, overload = _packet_and_overload(node)
    build = Builder(graph_module, node)
    x = node.args[0]
    source = _value(graph_module, x)
    if source.dtype != torch.float32:
        x = build.call(aten._to_copy.default, x, dtype=torch.float32)  # as torch.ao does for fp16 / bf16
    if packet == _QUANTIZE_PER_CHANNEL:
        _, scales, zero_points, axis, qmin, qmax, dtype = node.args
        rank = source.dim()
        inverse = build.call(aten.reciprocal.default, build.per_channel_view(scales, axis % rank, rank))
        scaled = build.call(aten.mul.Tensor, x, inverse)
        shifted = build.call(aten.add.Tensor, build.call(aten.round.default, scaled),
                             build.per_channel_view(zero_points, axis % rank, rank))
    else:
        _, scale, zero_point, qmin, qmax, dtype = node.args
        if overload == "default":
            scaled = build.call(aten.mul.Scalar, x, 1.0 / scale)
            shifted = build.call(aten.add.Scalar, build.call(aten.round.default, scaled), zero_point)
        else:
            scaled = build.call(aten.mul.Tensor, x, build.call(aten.reciprocal.default, scale))
            shifted = build.call(aten.add.Tensor, build.call(aten.round.default, scaled), zero_point)
    clamped = build.call(aten.clamp.default, shifted, qmin, qmax)
    return build.call(aten._to_copy.default, clamped, dtype=dtype)


def _spell_out_dequantize(graph_module: torch.fx.GraphModule, node: torch.fx.Node) -> torch.fx.Node:
    """(x.to(float) - zero_point) * scale: Convert -> Subtract -> Multiply in the IR, the
    decompression pattern OpenVINO recognises (the Subtract is left out for a zero point of 0)."""
    aten = torch.ops.aten
    packet, overload = _packet_and_overload(node)
    build = Builder(graph_module, node)
    x = node.args[0]
    out_dtype = node.kwargs.get("out_dtype") or torch.float32
    if packet == _DEQUANTIZE_PER_CHANNEL:
        # torch.ao computes per channel in float32 and converts the result to out_dtype.
        _, scales, zero_points, axis = node.args[:4]
        rank = _value(graph_module, x).dim()
        value = build.call(aten._to_copy.default, x, dtype=torch.float32)
        if zero_points is not None and not _is_zero(graph_module, zero_points):
            value = build.call(aten.sub.Tensor, value, build.per_channel_view(zero_points, axis % rank, rank))
        value = build.call(aten.mul.Tensor, value, build.per_channel_view(scales, axis % rank, rank))
        if out_dtype != torch.float32:
            value = build.call(aten._to_copy.default, value, dtype=out_dtype)
        return value
    # Per tensor it computes in out_dtype.
    _, scale, zero_point = node.args[:3]
    scalar = overload == "default"
    value = build.call(aten._to_copy.default, x, dtype=out_dtype)
    if not _is_zero(graph_module, zero_point):
        if scalar:  # the frontend has no rule for aten.sub.Scalar; adding the negation is exact
            value = build.call(aten.add.Scalar, value, -zero_point)
        else:
            value = build.call(aten.sub.Tensor, value, zero_point)
    return build.call(aten.mul.Scalar if scalar else aten.mul.Tensor, value, scale)


def _fold_constant_quantize(graph_module: torch.fx.GraphModule) -> None:
    """Quantizes stored float weights here, with PyTorch's own op, into integer constants.

    Left to a FakeQuantize, OpenVINO would round them at load time, and its FakeQuantize rounds a
    value exactly halfway between two steps differently from torch.round (NNCF puts the largest
    weight of a first layer there on purpose). The integers then reach OpenVINO as stored int8
    weights, 4 times smaller, and their dequantize becomes the usual decompression subgraph."""
    graph = graph_module.graph
    for node in list(graph.nodes):
        packet, _ = _packet_and_overload(node)
        if packet not in _DEQUANTIZE_OF:
            continue
        arguments = [stored_constant(graph_module, a) if isinstance(a, torch.fx.Node) else a for a in node.args]
        if any(a is None for a in arguments) or not isinstance(arguments[0], torch.Tensor):
            continue
        with torch.no_grad():
            integers = node.target(*arguments, **node.kwargs)
        store_constant(graph_module, f"_executorch_openvino_quantized_{node.name}", integers, replacing=node)


def spell_out_unpaired_quantization(graph_module: torch.fx.GraphModule) -> None:
    """Rewrites, in place, the quantize / dequantize nodes the frontend would not translate
    faithfully (see above): quantize of stored weights into integer constants, the others into
    ATen arithmetic; quantize -> dequantize pairs of activations are kept for the frontend's
    FakeQuantize."""
    _fold_constant_quantize(graph_module)
    graph = graph_module.graph
    paired = {node for node in graph.nodes if _is_fake_quantize_pair(node)}
    paired |= {user for node in paired for user in node.users}
    for node in list(graph.nodes):
        packet, _ = _packet_and_overload(node)
        if not packet or node in paired:
            continue
        spell_out = _spell_out_quantize if packet in _DEQUANTIZE_OF else _spell_out_dequantize
        replacement = spell_out(graph_module, node)
        replacement.meta.update(node.meta)
        node.replace_all_uses_with(replacement)
        graph.erase_node(node)
    graph.eliminate_dead_code()  # the float weights a folded quantize read
    graph_module.recompile()
