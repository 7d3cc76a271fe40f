"""Buffers a program mutates (an LLM's KV caches) kept inside OpenVINO as state.

ExecuTorch hands a delegate a mutated buffer as an input and takes the new value back as an
output, copying it into the buffer after every call. When the delegate computes the mutation
itself, the buffer can be consumed instead (ExecuTorch then neither passes nor copies it): the
partitioner tags its placeholder with the partition (`consume_mutated_buffers`), and the IR keeps
it as an OpenVINO variable, read by ReadValue and written by Assign (`make_stateful`), inside the
infer request of each loaded method. So every loaded method holds its own state, which starts at
the buffer's initial value, exactly as ExecuTorch's own buffers do.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind

logger = logging.getLogger(__name__)


def consume_mutated_buffers(exported_program: ExportedProgram) -> Dict[str, str]:
    """Tags each mutated buffer whose readers and whose new value are all in one of our partitions
    with that partition's tag; returns buffer name -> tag. Any other mutated buffer stays
    ExecuTorch's (copied in and out), with a log line saying why."""
    signature = exported_program.graph_signature
    mutation_of = {buffer: output for output, buffer in signature.buffers_to_mutate.items()}
    producers = {node.name: node for node in exported_program.graph.nodes}
    consumed = {}
    for node in exported_program.graph.nodes:
        buffer = signature.inputs_to_buffers.get(node.name) if node.op == "placeholder" else None
        if buffer not in mutation_of:
            continue
        new_value = producers.get(mutation_of[buffer])
        tags = {user.meta.get("delegation_tag") for user in node.users}
        tag = new_value.meta.get("delegation_tag") if new_value is not None else None
        if tag is None:
            logger.info("buffer %s stays ExecuTorch's: its new value is computed outside the delegate", buffer)
        elif tags != {tag}:
            logger.info("buffer %s stays ExecuTorch's: it is read outside the partition that updates it", buffer)
        else:
            node.meta["delegation_tag"] = tag
            consumed[buffer] = tag
    return consumed


@dataclass(frozen=True)
class State:
    """A consumed buffer in the graph handed to the frontend."""

    name: str  # the buffer's fully qualified name: the OpenVINO variable id
    input_index: int  # its placeholder among the graph's placeholders
    output_index: int  # its new value among the graph's outputs
    initial: Optional[torch.Tensor]  # None when all zeros (OpenVINO's own initial value)


def inline_constants(edge_program: ExportedProgram) -> Tuple[torch.fx.GraphModule, List[State]]:
    """The program's graph with parameters, constants and unmutated buffers turned into stored
    constants (so they land in the IR's weights), mutated buffers kept as placeholders and their
    new values as outputs; and those buffers as States."""
    graph_module = copy.deepcopy(edge_program.graph_module)
    signature = edge_program.graph_signature
    mutated = set(signature.buffers_to_mutate.values())
    placeholders = {node.name: node for node in graph_module.graph.nodes if node.op == "placeholder"}
    kept: Dict[str, str] = {}  # placeholder name -> buffer name
    for spec in signature.input_specs:
        node = placeholders[spec.arg.name]
        if spec.kind == InputKind.USER_INPUT:
            continue
        if spec.kind == InputKind.BUFFER and spec.target in mutated:
            kept[node.name] = spec.target
            continue
        value = _stored_value(edge_program, spec)
        attribute = f"_executorch_openvino_constant_{len(placeholders)}_{node.name}"
        graph_module.register_buffer(attribute, value)
        with graph_module.graph.inserting_before(node):
            stored = graph_module.graph.get_attr(attribute)
        stored.meta.update(node.meta)
        node.replace_all_uses_with(stored)
        graph_module.graph.erase_node(node)
    graph_module.recompile()

    order = [node.name for node in graph_module.graph.nodes if node.op == "placeholder"]
    mutation_outputs = [spec.target for spec in signature.output_specs if spec.kind == OutputKind.BUFFER_MUTATION]
    states = []
    for name, buffer in kept.items():
        # Non-persistent buffers live among the program's constants.
        initial = edge_program.state_dict.get(buffer, edge_program.constants.get(buffer))
        states.append(State(buffer, order.index(name), mutation_outputs.index(buffer),
                            None if not bool(initial.any()) else initial.detach().clone()))
    return graph_module, states


def _stored_value(edge_program: ExportedProgram, spec) -> torch.Tensor:
    if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER) and spec.target in edge_program.state_dict:
        value = edge_program.state_dict[spec.target]
    else:
        value = edge_program.constants[spec.target]
    return value.detach() if isinstance(value, torch.nn.Parameter) else value


def make_stateful(model, states: List[State]) -> None:
    """Replaces, in place, each state's parameter with a ReadValue of an OpenVINO variable named
    after the buffer, and its output with an Assign to that variable."""
    import numpy as np
    import openvino as ov
    import openvino.opset6 as opset6

    parameters = [model.inputs[s.input_index].get_node() for s in states]
    results = [model.outputs[s.output_index].get_node() for s in states]
    for state, parameter, result in zip(states, parameters, results):
        info = ov.op.util.VariableInfo()
        info.variable_id = state.name
        info.data_shape = parameter.get_partial_shape()
        info.data_type = parameter.get_element_type()
        variable = ov.op.util.Variable(info)
        if state.initial is None:
            read = opset6.read_value(variable)
        else:
            initial = opset6.constant(state.initial.numpy().astype(np.dtype(parameter.get_element_type().to_dtype())))
            read = opset6.read_value(initial, variable)
        for target in list(parameter.output(0).get_target_inputs()):
            target.replace_source_output(read.output(0))
        # The binding takes a node (its first output): made on the result, then pointed at the
        # result's source output.
        assign = opset6.assign(result, variable)
        assign.input(0).replace_source_output(result.input_value(0))
        model.add_variables([variable])
        model.add_sinks([assign])
    for parameter in parameters:
        model.remove_parameter(parameter)
    for result in results:
        model.remove_result(result)
    model.validate_nodes_and_infer_types()
