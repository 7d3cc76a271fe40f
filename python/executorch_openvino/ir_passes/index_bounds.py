"""The values the IR's inputs may take, for the runtime to check before every inference (blob
section 8, `container.blob.InputBound`).

Eager PyTorch raises IndexError for an index past a dimension (a token id past the vocabulary, a
position past a KV cache's context); OpenVINO computes with it: its Gather gives zeros for such an
index, a scatter writes nowhere, a cache that grows with the conversation grows past its context,
and the outputs are wrong or NaN. So an input whose values are used as indices, unchanged, by a
Gather, GatherElements or scatter into a dimension of static size is bounded by that dimension
(from 0 where eager takes no negative index: embedding, index_select, gather, scatter, index_add,
index_copy; from minus its size where PyTorch counts from the end: indexing, index_put), and a rewrite
may bound an input it knows more of (grown_cache.py: the KV cache position, by the context) with
`bound_input`. Indices computed from inputs (a position plus a range) are not followed.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

from ..container.blob import InputBound
from ..fx_passes.ops.index_origin import FROM_ZERO_PREFIX
from .ir_reading import before_index_put_wrap, through_same_values
from .lowering import Lowering

# rt_info of a Parameter: "low,high", set by bound_input.
_RT_KEY = "executorch_openvino_value_bounds"
# OpenVINO's PyTorch frontend names the operations it makes for a node after the node's operator.
# These take no negative index in eager (it raises), though the Gather they become would count one
# from the end.
_FROM_ZERO = ("aten.embedding.default/", "aten.index_select.default/")


def bound_input(parameter, low: int, high: int) -> None:
    """Says every value of `parameter` (an IR input) lies in [low, high)."""
    parameter.get_rt_info()[_RT_KEY] = f"{low},{high}"


def bound_inputs(lowering: Lowering) -> None:
    """Records the bounds of the IR's inputs that have any (lowering.bounds), by the final inputs:
    the last pass."""
    lowering.bounds = input_bounds(lowering.model)


def input_bounds(model) -> Tuple[InputBound, ...]:
    """The bounds of the IR inputs of `model` (in its final input order) that have any."""
    parameters = list(model.get_parameters())
    position = {parameter.get_friendly_name(): i for i, parameter in enumerate(parameters)}
    bounds: Dict[int, Tuple[int, int]] = {}

    def narrow(index: int, low: int, high: int) -> None:
        old_low, old_high = bounds.get(index, (low, high))
        bounds[index] = (max(low, old_low), min(high, old_high))

    for index, parameter in enumerate(parameters):
        info = parameter.get_rt_info()
        if _RT_KEY in info:
            low, high = (int(v) for v in str(info[_RT_KEY].astype(str)).split(","))
            narrow(index, low, high)
    for node in model.get_ordered_ops():
        indexed = _indexed_dimension(node)
        if indexed is None:
            continue
        indices, low, high = indexed
        parameter = _input_behind(indices)
        if parameter is not None and parameter.get_friendly_name() in position:
            narrow(position[parameter.get_friendly_name()], low, high)
    return tuple(InputBound(index, low, high) for index, (low, high) in sorted(bounds.items()) if low < high)


def _constant_int(output) -> Optional[int]:
    node = output.get_node()
    if node.get_type_name() != "Constant":
        return None
    values = node.get_vector()
    return int(values[0]) if len(values) == 1 else None


def _static_size(output, axis: Optional[int]) -> Optional[int]:
    shape = output.get_partial_shape()
    if axis is None or shape.rank.is_dynamic:
        return None
    rank = shape.rank.get_length()
    if not -rank <= axis < rank or shape[axis].is_dynamic:
        return None
    return shape[axis].get_length()


def _indexed_dimension(node):
    """(the indices' output, low, high) when `node` indexes a dimension of static size with the
    values of one of its inputs; None otherwise."""
    kind = node.get_type_name()
    if kind == "Gather":
        # Gather counts negative indices from the end, as PyTorch's indexing does; an embedding
        # lookup does not (eager's raises for any negative id).
        size = _static_size(node.input(0).get_source_output(), _constant_int(node.input(2).get_source_output()))
        if size is None:
            return None
        from_zero = any(name in node.get_friendly_name() for name in _FROM_ZERO)
        return node.input(1).get_source_output(), 0 if from_zero else -size, size
    if kind in ("GatherElements", "ScatterElementsUpdate"):
        # gather, scatter, scatter_add, scatter_reduce: eager raises for a negative index; OpenVINO
        # would count it from the end (and an index past the end corrupted the CPU plugin's heap).
        if kind == "GatherElements":
            axis = node.get_attributes().get("axis")
        else:
            axis = _constant_int(node.input(3).get_source_output())
        size = _static_size(node.input(0).get_source_output(), axis)
        return None if size is None else (node.input(1).get_source_output(), 0, size)
    if kind == "ScatterUpdate":  # no negative index (OpenVINO's CPU plugin refuses one)
        size = _static_size(node.input(0).get_source_output(), _constant_int(node.input(3).get_source_output()))
        return None if size is None else (node.input(1).get_source_output(), 0, size)
    if kind == "ScatterNDUpdate":
        indices = node.input(1).get_source_output()
        shape = indices.get_partial_shape()
        if shape.rank.is_dynamic or shape[shape.rank.get_length() - 1].is_dynamic or \
                shape[shape.rank.get_length() - 1].get_length() != 1:
            return None  # only rows of the first dimension: each index is one coordinate
        # Negative rows count from the end, as index_put's do; not an index_put made of index_add or
        # index_copy, whose eager raises for them (fx_passes/ops/index_origin.py marks those).
        size = _static_size(node.input(0).get_source_output(), 0)
        low = 0 if node.get_friendly_name().startswith(FROM_ZERO_PREFIX) else -size
        return None if size is None else (before_index_put_wrap(indices), low, size)
    return None


def _input_behind(output):
    """The Parameter whose values `output` holds unchanged, or None."""
    node = through_same_values(output).get_node()
    return node if node.get_type_name() == "Parameter" else None
