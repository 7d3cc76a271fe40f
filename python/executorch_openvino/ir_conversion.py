"""From an FX graph to OpenVINO IR with OpenVINO's PyTorch frontend.

Used twice: by the partitioner, which converts each candidate node alone to learn whether the
frontend supports it with these dtypes, and by preprocess, which converts a whole partition and
serialises it.

Quantized graphs (PT2E's quantized_decomposed ops) keep their quantization: a quantize followed by
its dequantize becomes OpenVINO's FakeQuantize (the frontend's own translation), and a dequantize
of stored integers (folded int8 weights) becomes Convert -> Subtract -> Multiply, the pattern
OpenVINO's plugins run with integer kernels. See docs/quantization.md.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Optional, Tuple

import torch

from . import low_bit_weights, rewrites, shape_bounds
from .constant_folding import fold_constants, fold_integer_weights
from .llm import custom_ops
from .rewrites.builder import Builder

# Element types of tensors the delegate exchanges with ExecuTorch. float64 is left out on purpose:
# OpenVINO's CPU plugin computes it in f32, which would silently change results.
SUPPORTED_DTYPES = frozenset(
    {torch.float32, torch.float16, torch.bfloat16, torch.int8, torch.uint8, torch.int16, torch.int32,
     torch.int64, torch.bool}
)


class ConversionError(RuntimeError):
    """OpenVINO's frontend could not convert the graph."""


@functools.lru_cache(maxsize=1)
def _frontend():
    from openvino.frontend import FrontEndManager

    return FrontEndManager().load_by_framework("pytorch")


def _ov_type(dtype: torch.dtype):
    import openvino as ov

    return {
        torch.float32: ov.Type.f32, torch.float16: ov.Type.f16, torch.bfloat16: ov.Type.bf16,
        torch.int8: ov.Type.i8, torch.uint8: ov.Type.u8, torch.int16: ov.Type.i16, torch.int32: ov.Type.i32,
        torch.int64: ov.Type.i64, torch.bool: ov.Type.boolean,
    }[dtype]


# ExecuTorch's edge dialect expresses copies with an explicit dim order; OpenVINO's frontend knows
# only the ATen ops they stand for. With the default (contiguous) dim order they are the same.
_DIM_ORDER_OPS = {
    "dim_order_ops._clone_dim_order.default": torch.ops.aten.clone.default,
    "dim_order_ops._to_dim_order_copy.default": torch.ops.aten._to_copy.default,
    "dim_order_ops._empty_dim_order.default": torch.ops.aten.empty.memory_format,
}

DIM_ORDER_OP_NAMES = frozenset(_DIM_ORDER_OPS)


def dim_order_op_replacement(node: torch.fx.Node):
    """The ATen op that computes the same as this dim-order copy, or None when the node is not
    one or asks for a non-contiguous dim order (which OpenVINO's dense tensors cannot express)."""
    from .op_support import op_name

    replacement = _DIM_ORDER_OPS.get(op_name(node.target)) if node.op == "call_function" else None
    if replacement is None:
        return None
    dim_order = node.kwargs.get("dim_order")
    value = node.meta.get("val")
    rank = value.dim() if isinstance(value, torch.Tensor) else None
    if dim_order not in (None, []) and list(dim_order) != list(range(rank if rank is not None else -1)):
        return None
    return replacement


def revert_dim_order_ops(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Rewrites contiguous dim-order copies into their ATen ops, in place."""
    for node in graph_module.graph.nodes:
        replacement = dim_order_op_replacement(node)
        if replacement is not None:
            node.target = replacement
            node.kwargs = {k: v for k, v in node.kwargs.items() if k != "dim_order"}
    graph_module.recompile()
    return graph_module


# ---------------------------------------------------------------------------------------------
# Quantize / dequantize ops of PT2E quantization (torch.ops.quantized_decomposed)
#
# OpenVINO's frontend translates quantize_per_{tensor,channel}.default into a FakeQuantize and
# passes dequantize through unchanged, which is right only when the dequantize reads such a
# quantize with the same parameters. Everywhere else (a dequantize of stored int8 weights, a
# quantize whose integers leave the graph) the integer values are real, so those nodes are spelled
# out as ATen arithmetic, exactly as torch.ao's reference implementation computes them.

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
    from .op_support import op_name

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


def _constant(graph_module: torch.fx.GraphModule, value) -> Optional[torch.Tensor]:
    """The tensor behind a get_attr node, or None when it is not a stored constant."""
    if not isinstance(value, torch.fx.Node) or value.op != "get_attr":
        return None
    owner = graph_module
    for part in value.target.split("."):
        owner = getattr(owner, part, None)
    return owner if isinstance(owner, torch.Tensor) else None


def _is_zero(graph_module: torch.fx.GraphModule, value) -> bool:
    if isinstance(value, (int, float)):
        return value == 0
    tensor = _constant(graph_module, value)
    return tensor is not None and not bool(tensor.any())


def _value(graph_module: torch.fx.GraphModule, node) -> torch.Tensor:
    """The (fake or stored) tensor a node stands for, for its rank and dtype."""
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    if not isinstance(value, torch.Tensor):
        value = _constant(graph_module, node)
    if not isinstance(value, torch.Tensor):
        raise ConversionError(f"{getattr(node, 'name', node)}: the shape and dtype of this tensor are unknown")
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
        arguments = [_constant(graph_module, a) if isinstance(a, torch.fx.Node) else a for a in node.args]
        if any(a is None for a in arguments) or not isinstance(arguments[0], torch.Tensor):
            continue
        with torch.no_grad():
            integers = node.target(*arguments, **node.kwargs)
        name = f"_executorch_openvino_quantized_{node.name}"
        graph_module.register_buffer(name, integers)
        with graph.inserting_before(node):
            stored = graph.get_attr(name)
        stored.meta.update(node.meta)
        node.replace_all_uses_with(stored)
        graph.erase_node(node)


def spell_out_unpaired_quantization(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
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
    return graph_module


def _summary(text: str) -> str:
    """The informative part of a frontend error (its first lines are a source location)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if "Summary:" in lines:
        details = [line[3:] for line in lines[lines.index("Summary:") + 1 :] if line.startswith("-- ")]
        if details:
            return "; ".join(details)[:300]
    for line in lines:
        if not line.startswith(("Check '", "FrontEnd API failed")):
            return line[:300]
    return lines[0][:300] if lines else ""


def convert(graph_module: torch.fx.GraphModule, ranges=None):
    """Converts a functional FX graph (placeholders carrying meta["val"] fake tensors) to an
    ov.Model whose parameters have the placeholders' dtypes and shapes, dynamic sizes bounded by
    `ranges` (an ExportedProgram's range_constraints, the ranges the user declared) or else by what
    tracing proved. Contiguous dim-order copies in the graph are first rewritten into their ATen
    ops, the operators of rewrites/ into ATen calls OpenVINO computes exactly (rewrites.UnsupportedCase
    when they cannot), what depends on no input is computed by PyTorch (constant_folding), and
    quantize / dequantize nodes the frontend would not translate faithfully into ATen arithmetic."""
    from openvino.frontend.pytorch.fx_decoder import TorchFXPythonDecoder

    revert_dim_order_ops(graph_module)
    custom_ops.spell_out(graph_module)
    fold_integer_weights(graph_module)  # before rewrites: PyTorch computes stored integers exactly
    rewrites.apply(graph_module)
    fold_constants(graph_module)
    spell_out_unpaired_quantization(graph_module)
    placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
    _scalar_placeholders_as_tensors(placeholders)
    try:
        decoder = TorchFXPythonDecoder(graph_module)
        model = _frontend().convert(_frontend().load(decoder))
    except Exception as error:  # the frontend raises several types, all meaning "cannot convert"
        raise ConversionError(_summary(str(error)) or repr(error)) from error

    unconverted = sorted({op.get_type_name() for op in model.get_ops() if "FrameworkNode" in op.get_type_name()})
    if unconverted:
        raise ConversionError(f"the frontend left operations unconverted: {', '.join(unconverted)}")
    if len(model.inputs) != len(placeholders):
        raise ConversionError(f"expected {len(placeholders)} model inputs, the frontend made {len(model.inputs)}")
    for port, node in zip(model.inputs, placeholders):
        value = node.meta.get("val")
        if not isinstance(value, torch.Tensor):
            raise ConversionError(f"input {node.name} is not a tensor")
        parameter = port.get_node()
        parameter.set_element_type(_ov_type(value.dtype))
        parameter.set_partial_shape(shape_bounds.partial_shape(value.shape, ranges))  # bounds of dynamic sizes kept
    _copy_passed_through_inputs(model)
    low_bit_weights.narrow_group_wise_weights(model)
    model.validate_nodes_and_infer_types()
    return model


def _scalar_placeholders_as_tensors(placeholders) -> None:
    """Symbolic ints a partition reads (a dynamic size computed outside it) become rank-0 int64
    inputs: the frontend then reads them like any tensor, and the delegate writes ExecuTorch's Int
    value into that input at run time."""
    for node in placeholders:
        if isinstance(node.meta.get("val"), (torch.SymInt, int)) and not isinstance(node.meta.get("val"), bool):
            node.meta["val"] = torch.empty((), dtype=torch.int64)


def _copy_passed_through_inputs(model) -> None:
    """Puts a Convert (to the same type) between a parameter and a result it feeds directly (a
    clone, an identity transpose): OpenVINO's CPU plugin then aliases the output to the input and
    never writes the output tensor the caller set, and other outputs computed from that input read
    the caller's output buffer instead."""
    from openvino import opset13

    for result in model.get_results():
        source = result.input(0).get_source_output()
        if source.get_node().get_type_name() == "Parameter":
            copy = opset13.convert(source, source.get_node().get_element_type())
            result.input(0).replace_source_output(copy.output(0))


def stable_names(model) -> None:
    """Names the model and its unnamed operations by their place in the graph. OpenVINO names them
    from process-wide counters (Model280, Constant_21532), so the same graph converted twice
    would give two different IRs: no compiled model shared between methods or programs lowered from
    the same export, and no hit in the model cache."""
    model.set_friendly_name("executorch_openvino")
    for index, op in enumerate(model.get_ordered_ops()):
        if op.get_friendly_name() == op.get_name():  # the counter's name: nobody chose it
            op.set_friendly_name(f"{op.get_type_name()}_{index}")


def serialize(model, compress_to_fp16: bool = False) -> Tuple[bytes, bytes]:
    """The IR's XML and weights. OpenVINO's save_model stores fp32 weights as fp16 by default; here
    that happens only when asked for."""
    import openvino as ov

    stable_names(model)
    with tempfile.TemporaryDirectory(prefix="executorch_openvino_") as folder:
        xml = Path(folder) / "model.xml"
        ov.save_model(model, str(xml), compress_to_fp16=compress_to_fp16)
        return xml.read_bytes(), xml.with_suffix(".bin").read_bytes()
