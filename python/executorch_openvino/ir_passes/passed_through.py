"""An input that leaves the IR unchanged (a clone, an identity transpose) gets its own output buffer.

OpenVINO's CPU plugin aliases such an output to the input and never writes the output tensor the
caller set; other outputs computed from that input then read the caller's output buffer instead. A
Convert to the same type between the parameter and the result makes the plugin write the output.
"""

from __future__ import annotations

from .lowering import Lowering


def copy_passed_through_inputs(lowering: Lowering) -> None:
    from openvino import opset13

    for result in lowering.model.get_results():
        source = result.input(0).get_source_output()
        if source.get_node().get_type_name() == "Parameter":
            copy = opset13.convert(source, source.get_node().get_element_type())
            result.input(0).replace_source_output(copy.output(0))
