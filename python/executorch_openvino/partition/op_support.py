"""Which graph nodes the delegate takes, decided node by node.

A node is taken when OpenVINO's PyTorch frontend converts it, alone, with its real input and output
dtypes and shapes (each distinct signature is converted once and remembered), every tensor it
reads or makes has a dtype the delegate exchanges, and the user did not exclude it. Every refusal
is logged with its reason through this module's logger.

The probe runs the same FX passes and conversion as preprocess (fx_passes, convert) on a graph of
the node alone. PT2E's quantize / dequantize nodes are probed alone too, where fx_passes spell them
out as arithmetic; in a whole partition a quantize -> dequantize pair becomes a FakeQuantize instead.
"""

from __future__ import annotations

import logging
import operator
from typing import Dict, Iterable, Optional, Set, Union

import torch
from torch.fx.passes.operator_support import OperatorSupportBase

from .. import convert, fx_passes
from ..convert import shapes
from ..fx_graph import op_name, tensors
from ..fx_passes import llm_custom_ops
from ..fx_passes.dim_order import DIM_ORDER_OP_NAMES, dim_order_op_replacement
from ..fx_passes.quantize_ops import QUANTIZATION_OP_NAMES

logger = logging.getLogger(__name__)

OpSpec = Union[str, torch._ops.OpOverload, torch._ops.OpOverloadPacket]


def _normalise(spec: OpSpec) -> str:
    if isinstance(spec, str):
        return spec.replace("::", ".").removeprefix("torch.ops.")
    return op_name(spec)


def _matches(name: str, specs: Set[str]) -> bool:
    # "aten.add" names every overload of add; "aten.add.Tensor" one of them.
    return name in specs or name.rsplit(".", 1)[0] in specs


class NodeSupport(OperatorSupportBase):
    """torch.fx operator support for CapabilityBasedPartitioner."""

    def __init__(self, skip_ops: Iterable[OpSpec] = (), skip_nodes: Iterable[str] = ()) -> None:
        self.skip_ops = {_normalise(spec) for spec in skip_ops}
        self.skip_nodes = set(skip_nodes)
        self._verdicts: Dict[tuple, Optional[str]] = {}
        self.refusals: Dict[str, str] = {}  # node name -> reason, for reports and tests

    def skips_op(self, name: str) -> bool:
        """Whether skip_ops names the operator `name` ("aten.add.Tensor")."""
        return _matches(name, self.skip_ops)

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        reason = self.reason_to_refuse(node)
        if reason is not None and node.op == "call_function" and node.name not in self.refusals:
            self.refusals[node.name] = reason
            logger.info("not delegating %s (%s): %s", node.name, op_name(node.target), reason)
        return reason is None

    def reason_to_refuse(self, node: torch.fx.Node) -> Optional[str]:
        if node.op != "call_function":
            return "not a call"
        if node.name in self.skip_nodes:
            return "excluded by skip_nodes"
        if node.target is operator.getitem:
            # Taken with the node it reads from, never on its own.
            source = node.args[0]
            return None if isinstance(source, torch.fx.Node) and self.reason_to_refuse(source) is None else "reads a node that is not delegated"
        name = op_name(node.target)
        if self.skips_op(name):
            return "excluded by skip_ops"
        if llm_custom_ops.is_llm_custom_op(node):  # spelled out by fx_passes/llm_custom_ops.py, its own checks
            return llm_custom_ops.reason_to_refuse(node)
        if _is_size_query(node):
            # The size of a dynamic dimension, read inside the delegate where reshapes use it.
            source = node.args[0].meta.get("val")
            return None if isinstance(source, torch.Tensor) and source.dtype in convert.SUPPORTED_DTYPES else "reads a value that is not a tensor"
        if name in DIM_ORDER_OP_NAMES and dim_order_op_replacement(node) is None:
            return "a copy into a non-contiguous dim order, which OpenVINO's dense tensors cannot express"
        for value in [node.meta.get("val")] + [a.meta.get("val") for a in node.all_input_nodes]:
            for tensor in tensors(value):
                if tensor.dtype not in convert.SUPPORTED_DTYPES:
                    return f"dtype {tensor.dtype} is not exchanged with OpenVINO"
                try:  # dynamic sizes are taken with the bounds torch.export proved for them
                    [shapes.bounds(d) for d in tensor.shape]
                except (ValueError, TypeError, AttributeError) as error:
                    return f"size not expressible as bounds: {error}"
        outputs = tensors(node.meta.get("val"))
        if not outputs:
            return "produces no tensor"
        scalars = [a for a in node.all_input_nodes if not isinstance(a.meta.get("val"), torch.Tensor)
                   and not _is_size_query(a)]
        if any(not _is_symbolic_int(a) for a in scalars):
            return "reads a value that is not a tensor"
        if scalars and any(a.op == "placeholder" for a in node.all_input_nodes):
            # A pick from a program input, weight or buffer at a position ExecuTorch computes: the
            # pick crosses to the delegate, not the whole table (equal_values.py merges equal picks).
            return "picks from a stored or given tensor at an int ExecuTorch computes"
        return self._frontend_verdict(node)

    def _frontend_verdict(self, node: torch.fx.Node) -> Optional[str]:
        key = self._signature(node)
        if key not in self._verdicts:
            try:
                convert.to_openvino(fx_passes.rewrite(_single_node_graph(node)))
                self._verdicts[key] = None
            except fx_passes.UnsupportedCase as error:
                self._verdicts[key] = f"not computed exactly: {error}"
            except convert.ConversionError as error:
                self._verdicts[key] = f"OpenVINO's frontend cannot convert it: {error}"
        return self._verdicts[key]

    @staticmethod
    def _signature(node: torch.fx.Node) -> tuple:
        name = op_name(node.target)
        # Every quantize / dequantize node has its own scale; the scale's value does not change
        # what the frontend can convert, so those nodes share a verdict per dtype and shape.
        any_scale = name in QUANTIZATION_OP_NAMES

        def describe(value):
            if isinstance(value, torch.fx.Node):
                tensor = value.meta.get("val")
                return ("tensor", tensor.dtype, shapes.describe(tensor.shape)) if isinstance(tensor, torch.Tensor) else ("?",)
            if isinstance(value, (list, tuple)):
                return tuple(describe(v) for v in value)
            if any_scale and isinstance(value, float):
                return "float"
            return repr(value)

        return (name, describe(node.args), describe(tuple(sorted(node.kwargs.items()))))


def _is_size_query(node) -> bool:
    return isinstance(node, torch.fx.Node) and op_name(node.target) == "aten.sym_size.int"


def _is_symbolic_int(node) -> bool:
    # An int ExecuTorch computes outside (a position read with .item()): a partition reads it as a
    # rank-0 input (convert/frontend.py), as the spelled-out LLM custom ops read start_pos; so
    # computing with it (optimum's ring caches: scalar_tensor(start), arange(n) < start) stays inside.
    return isinstance(node, torch.fx.Node) and isinstance(node.meta.get("val"), torch.SymInt)


def _size_hint(size) -> int:
    if isinstance(size, int):
        return size
    return int(size.node.hint) if size.node.hint is not None else shapes.bounds(size)[0]


def _single_node_graph(node: torch.fx.Node) -> torch.fx.GraphModule:
    """A graph holding only `node`, its tensor inputs as placeholders and the tensor outputs the
    original graph uses."""
    graph = torch.fx.Graph()
    placeholders: Dict[torch.fx.Node, torch.fx.Node] = {}

    def placeholder_for(value):
        if not isinstance(value, torch.fx.Node):
            return value
        if _is_size_query(value):
            return _size_hint(value.meta["val"])  # the probe asks about the op, not this size
        if value not in placeholders:
            placeholders[value] = graph.placeholder(f"in_{len(placeholders)}")
            placeholders[value].meta["val"] = value.meta["val"]
        return placeholders[value]

    args = torch.fx.node.map_aggregate(node.args, placeholder_for)
    kwargs = torch.fx.node.map_aggregate(node.kwargs, placeholder_for)
    copy = graph.call_function(node.target, args, kwargs)
    copy.meta["val"] = node.meta["val"]
    value = node.meta["val"]
    if isinstance(value, (list, tuple)):
        # Only the elements the graph reads: ops such as batch norm have outputs the frontend
        # does not produce (saved statistics) and that inference graphs never use.
        used = {user.args[1] for user in node.users if user.target is operator.getitem}
        if any(user.target is not operator.getitem for user in node.users):
            used = set(range(len(value)))
        outputs = []
        for i, item in enumerate(value):
            if i in used and isinstance(item, torch.Tensor):
                item_node = graph.call_function(operator.getitem, (copy, i))
                item_node.meta["val"] = item
                outputs.append(item_node)
        graph.output(tuple(outputs))
    else:
        graph.output(copy)
    return torch.fx.GraphModule(torch.nn.Module(), graph)
