"""KV caches that grow with the conversation, in the form OpenVINO's CPU plugin runs in one kernel.

ExecuTorch's caches are static: a buffer of the whole context, written at the new positions
(index_put, which the frontend turns into Transpose, ScatterNDUpdate, Transpose), and attention
over all of it. Kept like that as OpenVINO state, every step transposes both caches of every layer
twice and attends over the whole context. OpenVINO's CPU plugin has a kernel for the other form
LLM exports use: a variable that holds only the past, concatenated with the new keys and values
(ReadValue, Gather by a beam index, Concat, Assign) right before the attention; it fuses that with
the attention (ScaledDotProductAttentionWithKVCache), keeps the cache in its own layout and grows it
in place. On a 6-layer Llama this takes the attention of a decode step from about 1 ms to 0.3 ms.

`grow_caches` rewrites each cache of the static form into that form:
- the variable starts empty and holds the past only; what was written at the new positions is
  concatenated to it; attention reads the concatenation (grouped-query expansions included);
- the attention mask, over the static context, is cut to the positions up to the last new one
  (first position + new length), the first position as the model computed it. The concatenation
  is as long only when the past holds exactly the positions before the first new one; otherwise
  OpenVINO refuses the inference (mask and keys disagree), so a call that does not continue the
  conversation is an error, never a wrong result; a boolean mask becomes the additive one it
  stands for (the fused kernel is about twice as fast over it);
- one input carrying the first position is named CACHE_POSITION_INPUT, and the grown variables
  GROWN_VARIABLE_PREFIX + their name, with LENGTH_VARIABLE counting the positions they hold: the
  runtime library resets the state when a call's position is 0 (ExecuTorch's way to begin a new
  conversation) and cuts the caches back when a call starts before their end (a rollback: the
  last turn edited or regenerated); the position's values are bounded by the context
  (index_bounds), so a position past it is refused, as eager PyTorch refuses to write it;
- the cache precision is kept as the model's (KV_CACHE_PRECISION in the IR's runtime options; the
  plugin's default is u8), so results stay those of the static form; a property set at load wins.
A cache of any other form (or a model whose position input cannot be found) is left static; so is
a ring buffer (optimum-executorch's sliding-window caches: written at the position modulo its length,
any position valid): its rows are the position only below its length, and the frontend's wrap of
index_put's indices, (i + n) mod n, gives a plain cache's rows the same values past it. The rows are
read before that wrap, at a probe position past every cache: a plain cache's row is the position.
"""

from __future__ import annotations

import logging
from typing import List

import numpy as np

# The names the runtime library looks for, which tests also import from here.
from ..container.ir_names import CACHE_POSITION_INPUT, GROWN_VARIABLE_PREFIX, LENGTH_VARIABLE  # noqa: F401
from . import index_bounds
from .ir_reading import before_index_put_wrap, constant_values, permutation, source
from .ir_reading import variable as new_variable
from .lowering import Lowering

logger = logging.getLogger(__name__)


class _StaticCache:
    """One cache in the static form: ReadValue -> Transpose -> ScatterNDUpdate -> Transpose -> Assign."""

    def __init__(self, read, assign):
        self.read, self.assign = read, assign
        self.updated = source(assign)  # the cache after the write
        restore = self.updated.get_node()
        if restore.get_type_name() != "Transpose":
            raise LookupError("the new cache is not a transposed scatter")
        self.scatter = source(restore).get_node()
        if self.scatter.get_type_name() != "ScatterNDUpdate":
            raise LookupError("the cache is not written by ScatterNDUpdate")
        move = source(self.scatter).get_node()
        if move.get_type_name() != "Transpose" or source(move).get_node() != read:
            raise LookupError("the scatter does not write the cache read")
        forward, back = permutation(move), permutation(restore)
        shape = read.get_output_partial_shape(0)
        if forward is None or back is None or shape.is_dynamic or len(shape) != 4:
            raise LookupError("the cache is not a static 4-D tensor")
        if forward[0] != 2 or [forward[i] for i in back] != [0, 1, 2, 3]:
            raise LookupError("the scatter does not write along the sequence axis")
        indices = source(self.scatter, 1)
        if len(indices.get_partial_shape()) != 2 or indices.get_partial_shape()[1] != 1:
            raise LookupError("the scatter does not write whole rows")
        self.back = back
        self.shape = [d.get_length() for d in shape]
        self.indices = indices
        self.readers = [t for t in self.updated.get_target_inputs() if t.get_node() != self.assign]
        paths = [self._path_to_attention(target) for target in self.readers]
        self.expansions = [node for path in paths for node in path[:-1]]
        self.attentions = [path[-1] for path in paths]

    @staticmethod
    def _path_to_attention(target) -> list:
        """The grouped-query expansion a reader of the updated cache starts, then the attention it leads to."""
        path = [target.get_node()]
        while path[-1].get_type_name() in ("Unsqueeze", "Broadcast", "Reshape"):
            users = list(path[-1].output(0).get_target_inputs())
            if len(users) != 1:
                raise LookupError("the expanded cache has several readers")
            path.append(users[0].get_node())
        attention = path[-1]
        if attention.get_type_name() != "ScaledDotProductAttention" or attention.get_input_size() < 4:
            raise LookupError("the cache is read by something other than masked attention")
        if attention.get_attributes().get("causal"):
            raise LookupError("causal attention over the cache")
        # The rewrite cuts the mask to the rows written so far: a mask that does not span the cache
        # (none, a scalar: attention over every row, zeros included) cannot be cut.
        mask = attention.get_input_partial_shape(3)
        if mask.rank.is_dynamic or len(mask) == 0 or mask[len(mask) - 1] != attention.get_input_partial_shape(1)[2]:
            raise LookupError("the attention's mask does not span the cache")
        return path


# Past every cache's length: there a ring's rows (position modulo its length) are not the position.
_PROBE_POSITION = 1 << 24


def _first_position(cache: _StaticCache):
    import openvino.opset13 as ops

    flat = ops.reshape(before_index_put_wrap(cache.indices), ops.constant(np.array([-1], np.int64)), False)
    return ops.gather(flat, ops.constant(np.array([0], np.int64)), ops.constant(np.int64(0)))


def _position_parameters(model, positions) -> list:
    """For each first position, the model input whose value it is (a rank-0 input, or the first
    element of a 1-D one), or None (a constant: rows written whole on every call, as a
    cross-attention cache is); found by evaluating the positions with a distinct value in every
    integer input."""
    import openvino as ov

    inputs = []
    stack, seen = [position.get_node() for position in positions], set()
    while stack:
        node = stack.pop()
        if node.get_friendly_name() in seen:
            continue
        seen.add(node.get_friendly_name())
        if node.get_type_name() == "Parameter":
            inputs.append(node)
        stack.extend(source(node, i).get_node() for i in range(node.get_input_size()))
    feeds, owners = {}, {}
    for number, parameter in enumerate(inputs):
        shape = parameter.get_partial_shape()
        if not parameter.get_element_type().is_integral() or shape.rank.is_dynamic:
            return [None] * len(positions)
        dims = [d.get_min_length() if d.is_dynamic else d.get_length() for d in shape]
        dims = [max(1, min(d, 3)) if shape[i].is_dynamic else d for i, d in enumerate(dims)]
        first = _PROBE_POSITION + 7 * number
        value = (np.arange(int(np.prod(dims))) + first).reshape(dims) if dims else np.array(first)
        feeds[parameter.get_friendly_name()] = value.astype(parameter.get_element_type().to_dtype())
        if len(dims) <= 1:
            owners[first] = parameter
    probe = ov.Model(list(positions), inputs, "position_probe")
    try:
        compiled = ov.Core().compile_model(probe, "CPU")
        results = compiled({name: value for name, value in feeds.items()})
    except RuntimeError as error:
        logger.info("position probe failed: %s", error)
        return [None] * len(positions)
    return [owners.get(int(np.asarray(results[i]).reshape(-1)[0])) for i in range(len(positions))]


def grow_caches(lowering: Lowering) -> None:
    """Rewrites, in place, each static cache of the model (made stateful) that it can into a growing
    one, unless the partitioner was asked to keep them static (grow_caches=False)."""
    if not lowering.consumed_buffers or not lowering.options.grow_caches:
        return
    model = lowering.model
    import openvino as ov
    import openvino.opset3 as ops3
    import openvino.opset6 as ops6
    import openvino.opset8 as ops8
    import openvino.opset13 as ops

    reads = {node.get_variable_id(): node for node in model.get_ordered_ops() if node.get_type_name() == "ReadValue"}
    caches = []
    for assign in model.get_sinks():
        if assign.get_type_name() != "Assign" or assign.get_variable_id() not in reads:
            continue
        try:
            caches.append(_StaticCache(reads[assign.get_variable_id()], assign))
        except LookupError as why:
            logger.info("cache %s stays static: %s", assign.get_variable_id(), why)
    caches = _in_pairs(caches)
    if not caches:
        return
    # Only a cache written at the rows an input's position names grows; one written at constant
    # rows (a cross-attention cache, overwritten whole from the encoder's states on every call)
    # would gain those rows again on every call, so it stays static.
    positions = [_first_position(cache) for cache in caches]
    owners = _position_parameters(model, [position.output(0) for position in positions])
    marked = next((owner for owner in owners if owner is not None), None)
    for cache, owner in zip(caches, owners):
        if owner is not marked or owner is None:
            logger.info("cache %s stays static: no input carries the position it is written at",
                        cache.assign.get_variable_id())
    chosen = _in_pairs([cache for cache, owner in zip(caches, owners) if owner is not None and owner is marked])
    if not chosen:
        logger.info("caches stay static: no input carries their position")
        return
    positions = [position for cache, position in zip(caches, positions) if cache in chosen]
    caches = chosen

    beam = ops.constant(np.zeros(1, np.int32))  # one node: the plugin fuses K and V gathered by the same
    cut = set()  # the attentions whose mask is cut already
    for cache, position in zip(caches, positions):
        dtype = cache.read.get_output_element_type(0)
        batch, heads, context, width = cache.shape
        variable = new_variable(GROWN_VARIABLE_PREFIX + cache.assign.get_variable_id(),
                                ov.PartialShape([batch, heads, -1, width]), dtype)
        empty = ops.constant(np.zeros((batch, heads, 0, width), dtype.to_dtype()))
        past = ops8.gather(ops6.read_value(empty, variable), beam, ops.constant(np.int64(0)))
        new = _written_values(cache)
        grown = ops.concat([past, new], 2)
        # As long as the rows written: a value that does not fill them (a broadcast the rewrite
        # skipped) makes the mask and the keys disagree, so OpenVINO refuses the call.
        end = ops.add(position, ops8.gather(ops3.shape_of(cache.indices), ops.constant(np.array([0], np.int64)),
                                            ops.constant(np.int64(0))))
        for target in cache.readers:
            target.replace_source_output(grown.output(0))
        _free_context(cache.expansions, context)
        for attention in cache.attentions:
            if attention.get_friendly_name() not in cut:
                mask = source(attention, 3)
                axis = len(mask.get_partial_shape()) - 1
                sliced = ops8.slice(mask, ops.constant(np.array([0], np.int64)), end.output(0),
                                    ops.constant(np.array([1], np.int64)), ops.constant(np.array([axis], np.int64)))
                attention.input(3).replace_source_output(_additive(sliced.output(0), attention))
                _static_heads(attention)
                cut.add(attention.get_friendly_name())
        # What still reads the old variable (shape computations of the scatter) reads its shape only.
        shape_only = ops3.broadcast(ops.constant(np.zeros((), dtype.to_dtype())),
                                    ops.constant(np.array(cache.shape, np.int64)))
        for target in list(cache.read.output(0).get_target_inputs()):
            target.replace_source_output(shape_only.output(0))
        model.remove_sink(cache.assign)
        for old in model.get_variables():
            if old.get_info().variable_id == cache.assign.get_variable_id():
                model.remove_variable(old)
        model.add_variables([variable])
        model.add_sinks([ops6.assign(grown, variable)])
    _count_positions(model, end)
    marked.output(0).get_tensor().set_names({CACHE_POSITION_INPUT})
    # Past its context a grown cache keeps growing where the static one could not be written: the
    # runtime refuses such a position, as eager PyTorch does. The shortest cache bounds them all (a
    # sliding window's, as transformers exports Gemma 3's without custom caches, holds the window only).
    index_bounds.bound_input(marked, 0, min(cache.shape[2] for cache in caches))
    model.set_rt_info(str(caches[0].read.get_output_element_type(0).get_type_name()),
                      ["runtime_options", "KV_CACHE_PRECISION"])
    model.validate_nodes_and_infer_types()
    lowering.grown_caches = len(caches)  # the blob says so: the runtime may run them paged
    logger.info("%d KV cache(s) grow with the conversation", len(caches))


def _count_positions(model, end) -> None:
    """LENGTH_VARIABLE: the positions the grown caches hold after a call (its first position plus
    the rows it wrote), as one int32 (the CPU plugin keeps no int64 state)."""
    import openvino as ov
    import openvino.opset6 as ops6
    import openvino.opset13 as ops

    variable = new_variable(LENGTH_VARIABLE, ov.PartialShape([1]), ov.Type.i32)
    past = ops6.read_value(ops.constant(np.zeros(1, np.int32)), variable)
    length = ops.reshape(ops.convert(end, ov.Type.i32), ops.constant(np.array([1], np.int64)), False)
    # An Assign needs its ReadValue in the graph (an IR without it does not read back): past * 0 keeps it.
    length = ops.add(length, ops.multiply(past, ops.constant(np.zeros(1, np.int32))))
    model.add_variables([variable])
    model.add_sinks([ops6.assign(length, variable)])


def _additive(mask, attention):
    """A boolean mask as the additive one it stands for (0 where attended, -inf elsewhere, as
    OpenVINO defines it): the fused kernel takes about half the time over a float mask."""
    import openvino as ov
    import openvino.opset13 as ops

    kind = attention.get_input_element_type(0)
    if mask.get_element_type() != ov.Type.boolean or kind not in (ov.Type.f32, ov.Type.f16):
        return mask
    dtype = kind.to_dtype()
    return ops.select(mask, ops.constant(np.array(0, dtype)), ops.constant(np.array(-np.inf, dtype))).output(0)


def _written_values(cache: _StaticCache):
    """The values written at the new positions, in the cache's layout. The frontend writes them
    by moving the indexed axis first (Transpose), broadcasting them to the rows written and
    converting them like the cache; where those moves undo the cache's own, the values are taken
    from before them, sparing two transposes and a broadcast per cache and step."""
    import openvino.opset13 as ops

    updates = source(cache.scatter, 2)
    values = updates
    node = values.get_node()
    if node.get_type_name() == "ConvertLike" and node.get_input_element_type(0) == node.get_output_element_type(0):
        values = source(node)
        node = values.get_node()
    if node.get_type_name() == "Broadcast" and node.get_attributes().get("mode") in ("numpy", "bidirectional"):
        moved = source(node).get_node()
        order = permutation(moved) if moved.get_type_name() == "Transpose" else None
        if order is not None and [order[i] for i in cache.back] == [0, 1, 2, 3]:
            return source(moved)
    return ops.transpose(updates, ops.constant(np.array(cache.back, np.int64))).output(0)


def _in_pairs(caches: List[_StaticCache]) -> List[_StaticCache]:
    """The caches whose every attention reads a rewritable key cache and a rewritable value cache:
    growing one of the two alone would give that attention keys and values of different lengths."""
    feeding = {}
    for cache in caches:
        for attention in cache.attentions:
            feeding.setdefault(attention.get_friendly_name(), []).append(cache)
    complete = {name for name, fed in feeding.items() if len(fed) == 2}
    kept = [cache for cache in caches
            if all(attention.get_friendly_name() in complete for attention in cache.attentions)]
    for cache in caches:
        if cache not in kept:
            logger.info("cache %s stays static: its attention reads a cache that does", cache.assign.get_variable_id())
    return kept


def _free_context(expansions, context: int) -> None:
    """Grouped-query expansion of the cache: shapes that spelled the static context length out
    (Broadcast targets, Reshape sizes) take any length instead."""
    import openvino.opset13 as ops

    for node in expansions:
        if node.get_type_name() == "Unsqueeze":
            continue
        values = constant_values(source(node, 1))
        sequence = 3 if node.get_type_name() == "Broadcast" else 2
        if values is not None and len(values) > sequence and values[sequence] == context:
            values = values.copy()
            values[sequence] = 1 if node.get_type_name() == "Broadcast" else -1
            node.input(1).replace_source_output(ops.constant(values.astype(np.int64)).output(0))


def _static_heads(attention) -> None:
    """The plugin keeps attention whole only with the query's head count and width known; the
    frontend may leave them dynamic after a reshape of computed sizes. Spelled out from the key's."""
    import openvino.opset13 as ops

    query, key = source(attention, 0), attention.get_input_partial_shape(1)
    if query.get_partial_shape().rank.is_dynamic or len(query.get_partial_shape()) != 4:
        return
    if key[1].is_dynamic or key[3].is_dynamic:
        return
    sizes = np.array([0, key[1].get_length(), -1, key[3].get_length()], np.int64)
    attention.input(0).replace_source_output(ops.reshape(query, ops.constant(sizes), True).output(0))
