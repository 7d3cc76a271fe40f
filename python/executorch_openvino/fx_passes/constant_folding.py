"""Folds the parts of a graph that depend on no input, computing them with PyTorch itself.

Index arithmetic built from constants (reflection padding's arange / abs / sub, relative
positions in attention) is then a stored constant in the IR. That is exact by construction, and it
avoids a miscompilation in OpenVINO's CPU plugin, which drops an Abs applied to a Range of
constant bounds (abs(arange(-3, 2)) gives -3, -2, -1, 0, 1).

A node is folded when every node it reads is a stored constant (get_attr) or folded itself, its
operator is deterministic, it is not a quantize / dequantize or a conversion of integers to floating
point (their integers stay in the IR on purpose: OpenVINO's compressed-weight kernels read them,
see fx_passes/quantize_ops.py) and its result is small: large results (a causal mask of a long sequence, a
transposed weight) are left to OpenVINO rather than stored. Integer results of integer constants
are folded whatever their size (fold_integer_weights): NNCF's int4 weights are two nibbles a byte,
unpacked by bit arithmetic that is then done here once, so the IR stores the integers themselves.
"""

from __future__ import annotations

import torch

from ..fx_graph import aten_overload, op_name, store_constant, stored_constant

MAX_FOLDED_ELEMENTS = 1 << 16

_NOT_FOLDED_NAMESPACES = ("quantized_decomposed.",)
_NOT_FOLDED_OPS = {"aten.empty.memory_format", "aten.empty_strided.default", "dim_order_ops._empty_dim_order.default"}


def _is_integer(value) -> bool:
    return isinstance(value, torch.Tensor) and not value.dtype.is_floating_point and value.dtype != torch.bool


def _dequantizes(node: torch.fx.Node) -> bool:
    """Whether the node turns integer data into floating point (a weight's decompression)."""
    value = node.meta.get("val")
    if not isinstance(value, torch.Tensor) or not value.dtype.is_floating_point:
        return False
    return any(_is_integer(source.meta.get("val")) for source in node.all_input_nodes)


def _foldable_op(node: torch.fx.Node) -> bool:
    overload = aten_overload(node.target)
    if not isinstance(overload, torch._ops.OpOverload):
        return False
    name = op_name(node.target)
    if name.startswith(_NOT_FOLDED_NAMESPACES) or name in _NOT_FOLDED_OPS or _dequantizes(node):
        return False
    if torch.Tag.nondeterministic_seeded in overload.tags or overload._schema.is_mutable:
        return False
    return True


def fold_integer_weights(graph_module: torch.fx.GraphModule) -> None:
    """Replaces, in place, every foldable node whose inputs and result are integer stored
    constants (of any size) by a get_attr of its value."""
    fold_constants(graph_module, integers_only=True)


def fold_constants(graph_module: torch.fx.GraphModule, integers_only: bool = False) -> None:
    """Replaces, in place, every foldable node by a get_attr of its value."""
    graph = graph_module.graph
    values = {}
    for node in graph.nodes:
        stored = stored_constant(graph_module, node)
        if stored is not None:
            values[node] = stored
    changed = False
    for node in list(graph.nodes):
        if node.op != "call_function" or not _foldable_op(node):
            continue
        expected = node.meta.get("val")
        if not isinstance(expected, torch.Tensor) or not isinstance(expected.numel(), int):
            continue
        if any(n not in values for n in node.all_input_nodes) or not node.all_input_nodes and integers_only:
            continue
        if integers_only:
            if not _is_integer(expected) or not all(_is_integer(values[n]) for n in node.all_input_nodes):
                continue
        elif expected.numel() > MAX_FOLDED_ELEMENTS:
            continue
        args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), lambda n: values[n])
        with torch.no_grad():
            result = node.target(*args, **kwargs)
        if not isinstance(result, torch.Tensor):
            continue
        folded = store_constant(graph_module, f"_executorch_openvino_folded_{node.name}", result.contiguous(),
                                replacing=node)
        values[folded] = result
        changed = True
    if changed:
        graph.eliminate_dead_code()
        graph_module.recompile()
