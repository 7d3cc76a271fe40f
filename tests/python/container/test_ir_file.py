"""The IR's bytes are the same for the same graph, whatever OpenVINO's process-wide name counters
stood at: ops named by a counter, their own or one copied from an op they replaced, are named by their
place in the graph instead (container/ir_file.py)."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset13 as ops

from executorch_openvino.container.ir_file import serialize


def _model() -> ov.Model:
    x = ops.parameter([1, 4], ov.Type.f32, name="x")
    weight = ops.constant(np.arange(16, dtype=np.float32).reshape(4, 4))
    # A pass replacing the weight keeps its name, as low_bit_weights.py's narrowed weights do.
    replaced = ops.constant(np.ones((4, 4), dtype=np.float32))
    replaced.set_friendly_name(weight.get_friendly_name())
    chosen = ops.constant(np.zeros((1, 4), dtype=np.float32))
    chosen.set_friendly_name("bias")
    out = ops.add(ops.matmul(x, replaced, False, False), chosen)
    out.output(0).get_tensor().set_names({"out"})  # as the frontend names the outputs
    return ov.Model([out], [x], "model")


def test_the_same_graph_serializes_to_the_same_bytes_whatever_the_counters():
    first = serialize(_model())
    for _ in range(3):  # move the counters on
        ops.constant(np.zeros(1, dtype=np.float32))
    second = serialize(_model())
    assert first == second
    xml = first[0].decode()
    assert 'name="bias"' in xml  # a name somebody chose stays
    assert "Constant_" in xml and all(
        name.split('"')[0] in {"0", "1", "2", "3", "4", "5", "6"} for name in xml.split('name="Constant_')[1:])


def test_the_mapped_weights_are_serialize_s_and_live_only_inside_the_block():
    """writer.py builds the blob from the weights file mapped into memory (ir_file.serialized) instead
    of from a copy of it. Guards: a mapping handed out past the block (reading it after the folder
    went would crash, not raise), and mapping the empty weights file of a model without constants
    (mmap refuses a file of length 0)."""
    import pytest

    from executorch_openvino.container.ir_file import serialized

    with serialized(_model()) as (xml, weights):
        assert (xml, bytes(weights)) == serialize(_model())
    with pytest.raises(ValueError):  # released
        bytes(weights)

    x = ops.parameter([1, 4], ov.Type.f32, name="x")
    with serialized(ov.Model([ops.relu(x)], [x], "no_weights")) as (xml, weights):
        assert b"ReLU" in xml and weights == b""
