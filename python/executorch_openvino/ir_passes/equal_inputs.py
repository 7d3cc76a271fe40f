"""The IR's readers of a repeated input read one input, and the inputs nothing reads leave the IR.

The partitioner noted which of a partition's inputs repeat the value of an earlier one
(partition/equal_values.py, meta key fx_graph.VALUE_KEY); here their readers are pointed at the
first (`share_equal_inputs`), sizes that are a dimension of a tensor input are read from its shape,
and the inputs left unread are taken out of the IR (`drop_unread_inputs`). The call's arguments are
unchanged: the blob says which call inputs the IR reads.
"""

from __future__ import annotations

import logging
from typing import Any, List, Optional, Tuple

import numpy as np
import torch
from torch.export import ExportedProgram

from ..container.blob import InputArguments
from ..fx_graph import VALUE_KEY
from .lowering import Lowering

logger = logging.getLogger(__name__)


def _placeholders_of_parameters(model, program: ExportedProgram) -> List[Tuple[Any, Optional[torch.fx.Node]]]:
    """Each input of the converted IR `model` with the placeholder of `program` it stands for (None
    where unknown)."""
    placeholders = {node.name: node for node in program.graph.nodes if node.op == "placeholder"}
    parameters = list(model.get_parameters())
    names = [parameter.get_friendly_name() for parameter in parameters]
    if not all(name in placeholders for name in names):
        # Converted from program.module(): the IR's inputs are the user inputs, in order, renamed.
        names = list(program.graph_signature.user_inputs)
        if len(names) != len(parameters):
            return [(parameter, None) for parameter in parameters]
    return [(parameter, placeholders.get(name)) for parameter, name in zip(parameters, names)]


def share_equal_inputs(lowering: Lowering) -> None:
    """In the converted IR `model` of partition `program`: the readers of each input noted as the
    same value as an earlier input read that one instead, and the readers of each size that is a
    dimension of an input tensor read the tensor's shape (`_read_sizes_from_shapes`). The repeat
    stays an input, unread, until `drop_unread_inputs`."""
    inputs = _placeholders_of_parameters(lowering.model, lowering.program)
    first = {}
    shared = _read_sizes_from_shapes(inputs)
    for parameter, placeholder in inputs:
        value = placeholder.meta.get(VALUE_KEY) if placeholder is not None else None
        if value is None:
            continue
        twin = first.setdefault(value, parameter)
        if twin is parameter:
            continue
        if (twin.get_element_type() != parameter.get_element_type()
                or twin.get_partial_shape() != parameter.get_partial_shape()):
            continue
        parameter.output(0).replace(twin.output(0))
        shared += 1
    if shared:
        logger.info("%d partition input(s) read from an equal one", shared)


def _symbol(value: Any) -> Optional[Any]:
    """The symbolic expression of a size (a SymInt), or None for anything else."""
    return value.node.expr if isinstance(value, torch.SymInt) else None


def _read_sizes_from_shapes(inputs: List[Tuple[Any, Optional[torch.fx.Node]]]) -> int:
    """The readers of each scalar input that is a symbolic size of a tensor input (ExecuTorch's
    `sym_size` of the tokens, computed outside the delegate) read that dimension of the tensor's
    shape instead. Both always agree, and OpenVINO's CPU plugin handles sizes that follow from
    shapes better than sizes given as data: every Reshape reading such a size needs its output
    shape worked out from values each call (ExecuTorch's Llama: 126 readers; 64 int4 decode steps
    of the IR about 7 % faster). Returns how many inputs were left unread."""
    import openvino as ov
    import openvino.opset13 as ops

    dimensions = {}  # symbolic size -> (IR input, axis) of the first tensor input with that dimension
    for parameter, placeholder in inputs:
        value = placeholder.meta.get("val") if placeholder is not None else None
        if isinstance(value, torch.Tensor) and parameter.get_partial_shape().rank.is_static:
            if len(parameter.get_partial_shape()) != value.dim():
                continue
            for axis, size in enumerate(value.shape):
                if _symbol(size) is not None:
                    dimensions.setdefault(_symbol(size), (parameter, axis))
    moved = 0
    for parameter, placeholder in inputs:
        expression = _symbol(placeholder.meta.get("val")) if placeholder is not None else None
        if expression not in dimensions or parameter.get_partial_shape() != ov.PartialShape([]):
            continue
        if not parameter.get_element_type().is_integral() or not parameter.output(0).get_target_inputs():
            continue
        tensor, axis = dimensions[expression]
        size = ops.squeeze(ops.gather(ops.shape_of(tensor, ov.Type.i64), ops.constant(np.array([axis], np.int64)),
                                      ops.constant(np.int64(0))), ops.constant(np.int64(0)))
        if parameter.get_element_type() != ov.Type.i64:
            size = ops.convert(size, parameter.get_element_type())
        parameter.output(0).replace(size.output(0))
        moved += 1
    if moved:
        logger.info("%d size input(s) read from their tensors' shapes", moved)
    return moved


def drop_unread_inputs(lowering: Lowering) -> None:
    """Takes the inputs nothing reads out of the IR (repeats of another input's value, sizes read
    from shapes); records which call inputs the rest are (lowering.arguments; None when every
    input is read). An input kept in the IR costs OpenVINO's CPU plugin work every
    inference even unread (the benchmark's Llama, 11 of 16: about 5 % of a decode step)."""
    model = lowering.model
    parameters = list(model.get_parameters())
    read = [index for index, parameter in enumerate(parameters) if parameter.output(0).get_target_inputs()]
    if len(read) == len(parameters):
        return
    for index in sorted(set(range(len(parameters))) - set(read)):
        model.remove_parameter(parameters[index])
    model.validate_nodes_and_infer_types()
    lowering.arguments = InputArguments(len(parameters), tuple(read))
