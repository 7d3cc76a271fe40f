"""From an FX graph to OpenVINO IR with OpenVINO's PyTorch frontend.

Used twice: by the partitioner, which converts each candidate node alone to learn whether the
frontend supports it with these dtypes, and by preprocess, which converts a whole partition and
serialises it.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Tuple

import torch

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


def convert(graph_module: torch.fx.GraphModule):
    """Converts a functional FX graph (placeholders carrying meta["val"] fake tensors) to an
    ov.Model whose parameters have the placeholders' dtypes and static shapes. Contiguous
    dim-order copies in the graph are first rewritten into their ATen ops."""
    import openvino as ov
    from openvino.frontend.pytorch.fx_decoder import TorchFXPythonDecoder

    revert_dim_order_ops(graph_module)
    placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
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
        parameter.set_partial_shape(ov.PartialShape([int(d) for d in value.shape]))
    model.validate_nodes_and_infer_types()
    return model


def serialize(model, compress_to_fp16: bool = False) -> Tuple[bytes, bytes]:
    """The IR's XML and weights. OpenVINO's save_model stores fp32 weights as fp16 by default; here
    that happens only when asked for."""
    import openvino as ov

    with tempfile.TemporaryDirectory(prefix="executorch_openvino_") as folder:
        xml = Path(folder) / "model.xml"
        ov.save_model(model, str(xml), compress_to_fp16=compress_to_fp16)
        return xml.read_bytes(), xml.with_suffix(".bin").read_bytes()
