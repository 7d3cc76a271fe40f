"""Small readers of an OpenVINO graph that the IR passes share (grown_cache, rotary)."""

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
