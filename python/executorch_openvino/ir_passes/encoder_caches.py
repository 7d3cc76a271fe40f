"""Caches computed from an encoder's output, recomputed only when that output changes.

A sequence-to-sequence decoder exported with static caches (optimum-executorch's Whisper, its
Seq2SeqLM wrapper) takes the encoder's states on every call and writes its cross-attention caches
from them: the key and value projections of every layer over every encoder position, on each
decoding step. For Whisper-base that is about 9 GFLOP a token, ten times the rest of the step;
OpenVINO GenAI computes them once per utterance. Eager PyTorch recomputes them too, and a caller may
hand another encoder output at any call, so skipping is only right when the states are those of the
call before: the rewrite keeps the last states in a variable and compares them, in the graph, on
every call (a few hundred thousand comparisons, against billions of multiply-adds). Equal, and
after a call that wrote the caches, the caches are what that call wrote and are read as they are;
otherwise they are computed as before. An If chooses: its else branch holds the projections.

A cache qualifies when its new value depends on nothing but one model input (the encoder states, a
float tensor of static shape), its own old value and constants: written at rows no input chooses.
"""

from __future__ import annotations

import logging
from typing import Dict, FrozenSet, List, Optional, Tuple

import numpy as np

from .ir_reading import source, variable
from .lowering import Lowering

logger = logging.getLogger(__name__)

_LEAVES = ("Parameter", "ReadValue", "Constant")


def _ancestors(output) -> Dict[str, object]:
    """The nodes the output is computed from, down to parameters, reads of state and constants, by
    friendly name."""
    seen, stack = {}, [output.get_node()]
    while stack:
        node = stack.pop()
        if node.get_friendly_name() in seen:
            continue
        seen[node.get_friendly_name()] = node
        if node.get_type_name() in _LEAVES:
            continue
        stack.extend(source(node, i).get_node() for i in range(node.get_input_size()))
    return seen


def _origins(model) -> Dict[str, Optional[FrozenSet[Tuple[str, str]]]]:
    """For every node, by friendly name, the parameters and state reads it is computed from, as
    ("Parameter", name) and ("ReadValue", variable id) pairs; None once there are more than two, more
    than a cache computed from one input and its own old value can have. One pass in topological
    order: walking every cache's ancestors instead took time quadratic in a decoder-only LLM's layers
    (2.5 s of a 32-layer export), where each layer's caches are computed from all layers before."""
    origins: Dict[str, Optional[FrozenSet[Tuple[str, str]]]] = {}
    for node in model.get_ordered_ops():
        kind = node.get_type_name()
        if kind == "Parameter":
            found: Optional[FrozenSet[Tuple[str, str]]] = frozenset({(kind, node.get_friendly_name())})
        elif kind == "ReadValue":
            found = frozenset({(kind, node.get_variable_id())})
        else:
            found = frozenset()
            for index in range(node.get_input_size() if kind not in _LEAVES else 0):
                theirs = origins.get(source(node, index).get_node().get_friendly_name())
                found = None if theirs is None else found | theirs
                if found is None or len(found) > 2:
                    found = None
                    break
        origins[node.get_friendly_name()] = found
    return origins


def _may_qualify(origins, assign) -> bool:
    """Whether the cache `assign` writes is computed from one parameter and its own old value at most."""
    found = origins.get(source(assign).get_node().get_friendly_name())
    if found is None:
        return False
    parameters = {pair for pair in found if pair[0] == "Parameter"}
    return len(parameters) == 1 and found - parameters <= {("ReadValue", assign.get_variable_id())}


def reuse_encoder_caches(lowering: Lowering) -> None:
    """Rewrites, in place, the caches computed from one encoder-output input as described above."""
    model = lowering.model
    reads = {node.get_variable_id(): node for node in model.get_ordered_ops() if node.get_type_name() == "ReadValue"}
    origins = _origins(model)
    by_input: Dict[str, Tuple[object, List]] = {}
    for assign in model.get_sinks():
        if assign.get_type_name() != "Assign" or assign.get_variable_id() not in reads:
            continue
        if not _may_qualify(origins, assign):
            continue
        computed = _ancestors(source(assign))  # the projections, moved into the If's branch
        (encoder,) = [n for n in computed.values() if n.get_type_name() == "Parameter"]  # _may_qualify: one
        if not encoder.get_element_type().is_real() or not encoder.get_partial_shape().is_static:
            continue
        by_input.setdefault(encoder.get_friendly_name(), (encoder, []))[1].append(
            (assign, reads[assign.get_variable_id()], computed))
    for encoder, caches in by_input.values():
        _rewrite(model, encoder, caches)


def _rewrite(model, encoder, caches) -> None:
    import openvino as ov
    import openvino.opset6 as ops6
    import openvino.opset8 as ops8
    import openvino.opset13 as ops

    members = {}
    for _, read, computed in caches:
        members.update({key: node for key, node in computed.items() if node.get_type_name() not in _LEAVES})
    new_values = [source(assign) for assign, _, _ in caches]
    # What the projections compute must be theirs alone: a node also read elsewhere stays outside.
    allowed = {assign.get_friendly_name() for assign, _, _ in caches}
    for node in members.values():
        for output in node.outputs():
            for target in output.get_target_inputs():
                user = target.get_node()
                if user.get_friendly_name() in members or user.get_friendly_name() in allowed:
                    continue
                if any(output == value for value in new_values):
                    continue  # the new cache, read by the attention: it reads the If's output instead
                logger.info("encoder caches of %s stay as they are: %s is read outside them",
                            encoder.get_friendly_name(), node.get_friendly_name())
                return

    # Who reads each new cache besides the projections (the Assign, the attention): they read the
    # If's output instead. Listed before the branches add their own results.
    readers = [[t for t in value.get_target_inputs() if t.get_node().get_friendly_name() not in members]
               for value in new_values]

    # The branch that computes: its parameters stand for the encoder states and the old caches.
    encoder_in = ops.parameter(encoder.get_partial_shape(), encoder.get_element_type())
    olds_in = [ops.parameter(read.get_output_partial_shape(0), read.get_output_element_type(0)) for _, read, _ in caches]
    for node in members.values():
        for index in range(node.get_input_size()):
            feeding = source(node, index).get_node()
            if feeding == encoder:
                node.input(index).replace_source_output(encoder_in.output(0))
            for (_, read, _), old_in in zip(caches, olds_in):
                if feeding == read:
                    node.input(index).replace_source_output(old_in.output(0))
    computing = ov.Model([ops.result(value) for value in new_values], [encoder_in, *olds_in], "encoder_caches")
    # The branch that reads: the old caches as they are.
    kept_in = [ops.parameter(p.get_partial_shape(), p.get_element_type()) for p in olds_in]
    keeping = ov.Model([ops.result(p) for p in kept_in], [ops.parameter(encoder_in.get_partial_shape(),
                                                                         encoder_in.get_element_type()), *kept_in],
                       "encoder_caches_kept")

    # The last call's states, and whether a call wrote the caches since the request began.
    name = encoder.get_friendly_name()
    stored = variable(f"{name}.last", encoder.get_partial_shape(), encoder.get_element_type())
    # A float flag, 0 until a call ran: the CPU plugin keeps no boolean variable (it reads False
    # after an Assign of True), and a flag assigned from a constant alone is not stored either.
    written = variable(f"{name}.written", ov.PartialShape([1]), ov.Type.f32)
    last = ops6.read_value(ops.constant(np.zeros(encoder.get_shape(), encoder.get_element_type().to_dtype())), stored)
    flag = ops6.read_value(ops.constant(np.zeros(1, np.float32)), written)
    was_written = ops.greater(ops.squeeze(flag, ops.constant(np.array([0], np.int64))), ops.constant(np.float32(0.5)))
    axes = ops.constant(np.arange(len(encoder.get_shape()), dtype=np.int64))
    same = ops.logical_and(was_written, ops.reduce_logical_and(ops.equal(encoder, last), axes, keep_dims=False))

    # Names of their own for the branches' inputs (OpenVINO would take them from a process-wide
    # counter, and the same export would give other IR bytes each time: container/ir_file.py).
    for index, parameter in enumerate([encoder_in, *olds_in]):
        parameter.output(0).get_tensor().set_names({f"{name}.computing.{index}"})
    for index, parameter in enumerate(keeping.get_parameters()):
        parameter.output(0).get_tensor().set_names({f"{name}.keeping.{index}"})
    choice = ops8.if_op(same.output(0))
    choice.set_then_body(keeping)
    choice.set_else_body(computing)
    choice.set_input(encoder.output(0), keeping.get_parameters()[0], encoder_in)
    for (_, read, _), kept, old in zip(caches, kept_in, olds_in):
        choice.set_input(read.output(0), kept, old)
    outputs = [choice.set_output(kept_result, computed_result)
               for kept_result, computed_result in zip(keeping.get_results(), computing.get_results())]
    for targets, output in zip(readers, outputs):
        for target in targets:
            target.replace_source_output(output)
    model.add_variables([stored, written])
    # Both written from `same`: the CPU plugin shares a variable's memory between its ReadValue and
    # its Assign and may run an Assign whose input does not wait for the comparison before it (the
    # comparison then reads this call's states as the last call's).
    kept_states = ops.select(same, last, encoder)
    ran = ops.add(ops.multiply(ops.convert(ops.unsqueeze(same, ops.constant(np.array([0], np.int64))), ov.Type.f32),
                               ops.constant(np.float32(0))), ops.constant(np.float32(1)))
    model.add_sinks([ops6.assign(kept_states, stored), ops6.assign(ran, written)])
    model.validate_nodes_and_infer_types()
    logger.info("%d cache(s) computed from %s only when it changes", len(caches), name)

