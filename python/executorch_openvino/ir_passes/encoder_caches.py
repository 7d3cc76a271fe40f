"""Caches computed from an encoder's output once per utterance, as OpenVINO state initializers.

A sequence-to-sequence decoder exported with static caches (optimum-executorch's Whisper, its
Seq2SeqLM wrapper) takes the encoder's states on every call and writes its cross-attention caches
from them: the key and value projections of every layer over every encoder position, on each
decoding step. For Whisper-base that is about 9 GFLOP a token, ten times the rest of the step.
OpenVINO GenAI computes them once per utterance, in ReadValue initializers: a ReadValue computes its
initializer only when its variable was reset (or never written), and reads the variable otherwise,
with nothing copied (the CPU plugin keeps one buffer for a variable's ReadValue and Assign).

The rewrite does the same: each such cache becomes a variable whose initializer is the projection,
read by the attention and assigned back unchanged. That is only right while the encoder's states stay
those the caches were computed from, so the variables are named for the runtime library
(container/ir_names.py: ENCODER_CACHE_PREFIX), the encoder's input too (ENCODER_STATES_INPUT), and the
library resets these variables whenever a call brings other states than the call before
(src/delegate/conversation/encoder_caches.h). Eager PyTorch recomputes the caches every call; the
results are the same.

A cache qualifies when its new value is computed from one model input (the encoder states, a float
tensor of static shape) and constants only: its old value may be read for its shape and type, or as
the data of a scatter that writes every one of its rows (index_copy over all encoder positions, as
transformers' static cache writes), but no value of it may survive into the new one. A value that
keeps something of the old (written at some rows only, or accumulated) would need the old value in
the initializer, which a reset no longer holds: such caches stay as they are.
"""

from __future__ import annotations

import functools
import logging
from typing import Dict, FrozenSet, List, Optional, Tuple

import numpy as np

from ..container.ir_names import ENCODER_CACHE_PREFIX, ENCODER_STATES_INPUT
from .ir_reading import source, variable
from .lowering import Lowering

logger = logging.getLogger(__name__)

_LEAVES = ("Parameter", "ReadValue", "Constant")
_SHAPE_ONLY = ("ShapeOf",)  # read the shape of their input, none of its values


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


@functools.lru_cache(maxsize=None)
def _core():
    import openvino as ov

    return ov.Core()  # one for the export: every scatter of every cache asks it


def _constant(output) -> Optional[np.ndarray]:
    """The values `output` takes whatever the model's inputs and state hold, when they follow from
    constants and static shapes alone (the rows an index_copy writes: arange(n), wrapped by the
    frontend as (rows + n) mod n); None otherwise. Computed by OpenVINO on a copy of that subgraph."""
    import openvino as ov
    import openvino.opset13 as ops

    copies: Dict[int, object] = {}

    def copy_of(out):
        node = out.get_node()
        key = id(node)
        if key not in copies:
            kind = node.get_type_name()
            if kind == "Constant":
                copies[key] = node
            elif kind in _SHAPE_ONLY:
                shape = source(node).get_partial_shape()
                if not shape.is_static:
                    return None
                copies[key] = ops.constant(np.array(shape.to_shape(), node.get_output_element_type(0).to_dtype()))
            elif kind in ("Parameter", "ReadValue"):
                return None
            else:
                inputs = []
                for index in range(node.get_input_size()):
                    copied = copy_of(source(node, index))
                    if copied is None:
                        return None
                    inputs.append(copied)
                copies[key] = node.clone_with_new_inputs(inputs)
        return copies[key].output(out.get_index())

    copied = copy_of(output)
    if copied is None:
        return None
    compiled = _core().compile_model(ov.Model([ops.result(copied)], [], "constant"), "CPU")
    return np.asarray(compiled({})[0])


def _writes_every_row(scatter) -> bool:
    """Whether a scatter overwrites every element of its data input, at rows fixed by constants."""
    data = source(scatter).get_partial_shape()
    if not data.is_static:
        return False
    shape = list(data.to_shape())
    indices = _constant(source(scatter, 1))
    if indices is None or indices.size == 0:
        return False
    if scatter.get_type_name() == "ScatterNDUpdate":
        depth = indices.shape[-1]
        rows = shape[:depth]
        indices = indices.reshape(-1, depth).astype(np.int64)
    elif scatter.get_type_name() == "ScatterUpdate":
        axis = _constant(source(scatter, 3))  # a row there is every element of that index on the axis
        if axis is None:
            return False
        rows = [shape[int(axis) % len(shape)]]
        indices = indices.reshape(-1, 1).astype(np.int64)
    else:
        return False
    if (indices < 0).any() or (indices >= np.array(rows)).any():
        return False  # a negative row, which not every opset counts from the end, or none at all
    return np.unique(np.ravel_multi_index(indices.T, rows)).size == int(np.prod(rows))


def _keeps_old_values(new_value, read) -> bool:
    """Whether any value `read` holds can reach `new_value` (its shape or type may, and the data of a
    scatter that overwrites all of it)."""
    memo: Dict[int, bool] = {}

    def keeps(output) -> bool:
        node = output.get_node()
        key = id(node)
        if key in memo:
            return memo[key]
        kind = node.get_type_name()
        if node == read:
            found = True
        elif kind in _LEAVES or kind in _SHAPE_ONLY:
            found = False
        elif kind == "ConvertLike":  # its second input gives the type only
            found = keeps(source(node))
        elif kind in ("ScatterNDUpdate", "ScatterUpdate"):
            found = any(keeps(source(node, i)) for i in range(1, node.get_input_size())) or (
                keeps(source(node)) and not _writes_every_row(node))
        else:
            found = any(keeps(source(node, i)) for i in range(node.get_input_size()))
        memo[key] = found
        return found

    return keeps(new_value)


def _subgraph(new_value) -> Dict[str, object]:
    """The nodes computing `new_value` above its leaves, by friendly name."""
    seen, stack = {}, [new_value.get_node()]
    while stack:
        node = stack.pop()
        if node.get_friendly_name() in seen or node.get_type_name() in _LEAVES:
            continue
        seen[node.get_friendly_name()] = node
        stack.extend(source(node, i).get_node() for i in range(node.get_input_size()))
    return seen


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
        read = reads[assign.get_variable_id()]
        found = origins[source(assign).get_node().get_friendly_name()]
        ((_, name),) = [pair for pair in found if pair[0] == "Parameter"]  # _may_qualify: one
        (encoder,) = [p for p in model.get_parameters() if p.get_friendly_name() == name]
        if not encoder.get_element_type().is_real() or not encoder.get_partial_shape().is_static:
            continue
        if not read.get_output_partial_shape(0).is_static:
            continue
        if _keeps_old_values(source(assign), read):
            logger.info("cache %s is computed each call: its new value keeps some of its old one",
                        assign.get_variable_id())
            continue
        by_input.setdefault(encoder.get_friendly_name(), (encoder, []))[1].append((assign, read))
    if not by_input:
        return
    # The runtime follows one encoder input; caches of others (no model known here has them) keep
    # eager's form, recomputed each call.
    encoder, caches = max(by_input.values(), key=lambda entry: len(entry[1]))
    for other, theirs in by_input.values():
        if other is not encoder:
            logger.info("%d cache(s) of %s are computed each call: the runtime follows one encoder input (%s)",
                        len(theirs), other.get_friendly_name(), encoder.get_friendly_name())
    _rewrite(model, encoder, caches)


def _computed_alone(encoder, caches) -> List:
    """The caches whose projections are theirs alone, and whose old value nothing else reads: what
    else reads a projection (besides the new value, which the attention reads) would see the
    initializer's value only after a reset. Dropping one cache may leave another's node read outside,
    so until nothing changes."""
    while True:
        subgraphs = [_subgraph(source(assign)) for assign, _ in caches]
        members = {name for subgraph in subgraphs for name in subgraph}
        kept = []
        for (assign, read), subgraph in zip(caches, subgraphs):
            why = None
            for node in subgraph.values():
                for output in node.outputs():
                    for target in output.get_target_inputs():
                        user = target.get_node()
                        if user.get_friendly_name() not in members and user != assign and output != source(assign):
                            why = f"{node.get_friendly_name()} is read outside the caches"
            if any(t.get_node().get_friendly_name() not in subgraph for t in read.output(0).get_target_inputs()):
                why = "its old value is read elsewhere"
            if why:
                logger.info("cache %s of %s is computed each call: %s", assign.get_variable_id(),
                            encoder.get_friendly_name(), why)
            else:
                kept.append((assign, read))
        if len(kept) == len(caches):
            return kept
        caches = kept


def _rewrite(model, encoder, caches) -> None:
    import openvino.opset3 as ops3
    import openvino.opset6 as ops6
    import openvino.opset13 as ops

    caches = _computed_alone(encoder, caches)
    if not caches:
        return
    for assign, read in caches:
        new_value = source(assign)
        dtype = read.get_output_element_type(0)
        shape = read.get_output_partial_shape(0)
        # The old value is read for its shape and type only (checked above): a broadcast zero of it.
        shape_only = ops3.broadcast(ops.constant(np.zeros((), dtype.to_dtype())),
                                    ops.constant(np.array(shape.to_shape(), np.int64)))
        for target in list(read.output(0).get_target_inputs()):
            target.replace_source_output(shape_only.output(0))
        state = variable(ENCODER_CACHE_PREFIX + assign.get_variable_id(), shape, dtype)
        readers = list(new_value.get_target_inputs())  # the attention, and the Assign removed below
        held = ops6.read_value(new_value, state)  # computed only after a reset
        for target in readers:
            target.replace_source_output(held.output(0))
        model.remove_sink(assign)
        for old in model.get_variables():
            if old.get_info().variable_id == assign.get_variable_id():
                model.remove_variable(old)
        model.add_variables([state])
        model.add_sinks([ops6.assign(held, state)])
    encoder.output(0).get_tensor().add_names({ENCODER_STATES_INPUT})
    model.validate_nodes_and_infer_types()
    logger.info("%d cache(s) computed from %s once per utterance", len(caches), encoder.get_friendly_name())
