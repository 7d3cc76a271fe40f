"""OpenVINO's PyTorch frontend on one FX graph: the call, its errors, and the inputs' types and shapes.

Used twice: by the partitioner, which converts each candidate node alone to learn whether the frontend
supports it with these dtypes (partition/op_support.py), and by preprocess, which converts a whole
partition. Both hand it a graph fx_passes already rewrote.
"""

from __future__ import annotations

import functools

import torch

from . import shapes
from .dtypes import ov_type


class ConversionError(RuntimeError):
    """OpenVINO's frontend could not convert the graph."""


@functools.lru_cache(maxsize=1)
def _frontend():
    from openvino.frontend import FrontEndManager

    return FrontEndManager().load_by_framework("pytorch")


class IndexedNodes(list):
    """The graph's nodes, whose index() is a dict lookup. The frontend's decoder finds every argument
    of every node with list.index over the whole graph (quadratic: 3 s of a 360M LLM's conversion) and
    hands the decoders of the nodes the list it holds, so giving it this one makes the lookups cheap.
    Results are list.index's: FX nodes compare by identity."""

    def __init__(self, nodes):
        super().__init__(nodes)
        self._where = {}
        for place, node in enumerate(self):
            self._where.setdefault(node, place)  # list.index: the first place

    def index(self, value, *bounds):
        if bounds:
            return super().index(value, *bounds)
        try:
            return self._where[value]
        except (KeyError, TypeError):
            return super().index(value)  # unhashable, or absent: list.index's answer or ValueError


def to_openvino(graph_module: torch.fx.GraphModule, ranges=None):
    """Converts a functional FX graph (placeholders carrying meta["val"] fake tensors) to an ov.Model
    whose parameters have the placeholders' dtypes and shapes, dynamic sizes bounded by `ranges` (an
    ExportedProgram's range_constraints, the ranges the user declared) or else by what tracing proved."""
    from openvino.frontend.pytorch.fx_decoder import TorchFXPythonDecoder

    placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
    _scalar_placeholders_as_tensors(placeholders)
    try:
        decoder = TorchFXPythonDecoder(graph_module)
        if type(getattr(decoder, "_nodes", None)) is list:
            decoder._nodes = IndexedNodes(decoder._nodes)
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
        parameter.set_element_type(ov_type(value.dtype))
        parameter.set_partial_shape(shapes.partial_shape(value.shape, ranges))  # bounds of dynamic sizes kept
    model.validate_nodes_and_infer_types()
    return model


def _scalar_placeholders_as_tensors(placeholders) -> None:
    """Symbolic ints a partition reads (a dynamic size computed outside it) become rank-0 int64
    inputs: the frontend then reads them like any tensor, and the delegate writes ExecuTorch's Int
    value into that input at run time."""
    for node in placeholders:
        if isinstance(node.meta.get("val"), (torch.SymInt, int)) and not isinstance(node.meta.get("val"), bool):
            node.meta["val"] = torch.empty((), dtype=torch.int64)


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
