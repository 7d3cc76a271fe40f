"""Buffers a program mutates (an LLM's KV caches) kept inside OpenVINO as variables (its "state").

ExecuTorch hands a delegate a mutated buffer as an input and takes the new value back as an output,
copying it into the buffer after every call. When the delegate computes the mutation itself, the
buffer is consumed instead (partition/mutated_buffers.py): ExecuTorch neither passes nor copies it,
and the IR keeps it as an OpenVINO variable, read by ReadValue and written by Assign, inside the
infer request of each loaded method. So every loaded method holds its own state, which starts at
the buffer's initial value, exactly as ExecuTorch's own buffers do.
"""

from __future__ import annotations

from . import ir_reading
from .lowering import Lowering


def make_stateful(lowering: Lowering) -> None:
    """Replaces, in place, each consumed buffer's parameter with a ReadValue of an OpenVINO variable named
    after the buffer, and its output with an Assign to that variable."""
    model, buffers = lowering.model, lowering.consumed_buffers
    if not buffers:
        return
    import numpy as np
    import openvino as ov
    import openvino.opset6 as opset6

    parameters = [model.inputs[b.input_index].get_node() for b in buffers]
    results = [model.outputs[b.output_index].get_node() for b in buffers]
    for buffer, parameter, result in zip(buffers, parameters, results):
        variable = ir_reading.variable(buffer.name, parameter.get_partial_shape(), parameter.get_element_type())
        new_value = result.input_value(0)
        if buffer.initial is None:
            read = opset6.read_value(variable)
        elif parameter.get_element_type() == ov.Type.i64:
            # The CPU plugin cannot initialise an i64 variable from a value (it can from zeros):
            # the variable holds the difference from the initial value, which starts at zero.
            initial = opset6.constant(buffer.initial.numpy().astype(np.int64))
            read = opset6.add(opset6.read_value(variable), initial)
            new_value = opset6.subtract(new_value, initial).output(0)
        else:
            initial = opset6.constant(buffer.initial.numpy().astype(np.dtype(parameter.get_element_type().to_dtype())))
            read = opset6.read_value(initial, variable)
        for target in list(parameter.output(0).get_target_inputs()):
            target.replace_source_output(read.output(0))
        # The binding takes a node (its first output): made on the result, then pointed at the
        # new value.
        assign = opset6.assign(result, variable)
        assign.input(0).replace_source_output(new_value)
        model.add_variables([variable])
        model.add_sinks([assign])
    for parameter in parameters:
        model.remove_parameter(parameter)
    for result in results:
        model.remove_result(result)
    model.validate_nodes_and_infer_types()
