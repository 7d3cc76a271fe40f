"""Small readers of an OpenVINO graph that the IR passes share (grown_cache, index_bounds, rotary,
stored_weights, encoder_caches)."""

from __future__ import annotations

from typing import List, Optional

import numpy as np


def source(node, index: int = 0):
    """The output feeding input `index` of `node`."""
    return node.input(index).get_source_output()


def constant_values(output) -> Optional[np.ndarray]:
    """The values of a constant output (seen through an Abs of one, as the frontend writes some
    sizes); None for anything computed."""
    node = output.get_node()
    if node.get_type_name() == "Abs":
        values = constant_values(source(node))
        return None if values is None else np.abs(values)
    if node.get_type_name() != "Constant":
        return None
    return np.array(node.get_vector())


def permutation(transpose) -> Optional[List[int]]:
    """A Transpose's order, when it is constant."""
    values = constant_values(source(transpose, 1))
    return None if values is None else [int(v) for v in values]


def variable(variable_id: str, shape, element_type):
    """An OpenVINO variable (state) of that id, shape and element type."""
    import openvino as ov

    info = ov.op.util.VariableInfo()
    info.variable_id = variable_id
    info.data_shape = shape
    info.data_type = element_type
    return ov.op.util.Variable(info)


# Nodes that keep their input's values (Tile and Broadcast repeat them: Whisper's decoder indexes its
# positions table by cache_position.unsqueeze(0).repeat(batch, 1)).
SAME_VALUES = {"Convert", "Reshape", "Unsqueeze", "Squeeze", "Tile", "Broadcast"}


def through_same_values(output):
    """The first output at or before `output` that is not made by a node keeping its input's values."""
    while output.get_node().get_type_name() in SAME_VALUES:
        output = source(output.get_node())
    return output


def before_index_put_wrap(indices):
    """The rows an index_put writes, as the model computed them: the frontend writes at
    (rows + n) mod n, n the written axis's size (a negative row counts from the end), which also folds
    a row past the end onto one (eager raises for it) and hides a ring buffer's own wrap. `indices`
    itself when there is no such wrap; a model's own (i + k) mod n is not the frontend's (its name
    says which operator it translates)."""
    wrap = through_same_values(indices).get_node()
    if wrap.get_type_name() not in ("Mod", "FloorMod") or "aten.index_put" not in wrap.get_friendly_name():
        return indices
    total = source(wrap).get_node()
    if total.get_type_name() != "Add" or source(total, 1) != source(wrap, 1):
        return indices
    return source(total)
