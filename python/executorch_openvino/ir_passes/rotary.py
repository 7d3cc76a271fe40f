"""Rotary position embedding in the form OpenVINO's CPU plugin runs as one kernel.

ExecuTorch's Llama rotates each query and key head in neighbour pairs (elements 2i and 2i+1, the
complex-number view), which the frontend spells out as a reshape to pairs, two slices, four
multiplications, a stack and a reshape: about a dozen small nodes per query and per key, each a
separate (mostly reference) kernel. OpenVINO fuses rotary embedding into its RoPE kernel when it is
written in halves (element i with element i + D/2: Hugging Face's rotate_half).

The two are the same rotation up to a permutation of each head's elements (evens first, then
odds), and attention only ever takes dot products of a query head with a key head. So when the
query and the key of an attention are both rotated this way and read by that attention alone, both
are rewritten: the projection weights that make them are permuted (their output rows), the rotation
is written in halves over the permuted layout, with the tables repeated for both halves. The
attention's scores are unchanged; the keys it keeps in its cache are held permuted, and only it
reads them. When a projection's weights cannot be followed to constants, its output is permuted by
a Gather instead. Anything else (a rotated tensor read outside attention, a query without its
key) is left as it is.
"""

from __future__ import annotations

import logging
from typing import Dict, List, Optional

import numpy as np

from .ir_reading import constant_values, permutation, source
from .lowering import Lowering

logger = logging.getLogger(__name__)

# Nodes the frontend leaves around values of one type that change nothing here.
_PASS_THROUGH = ("ConvertLike",)
# What may carry a rotated key to its attention: layout moves, the cache write and read, the
# grouped-query expansion; each only where it keeps the last axis whole (_keeps_last_axis).
_KEY_CARRIERS = ("Transpose", "Reshape", "Unsqueeze", "Squeeze", "Broadcast", "Concat", "ScatterNDUpdate",
                 "Gather", "Convert", "ConvertLike", "Slice")


def _underlying(output):
    """The value behind type-preserving converts of the frontend (ConvertLike; ConvertPromoteTypes
    of two values of one type)."""
    while True:
        node = output.get_node()
        kind = node.get_type_name()
        if kind in _PASS_THROUGH:
            output = source(node)
        elif kind == "ConvertPromoteTypes" and node.get_input_element_type(0) == node.get_input_element_type(1):
            output = source(node, output.get_index())
        else:
            return output


def _operands(node) -> List:
    return [_underlying(source(node, i)) for i in range(node.get_input_size())]


def _known_dims(output) -> List[Optional[int]]:
    """The output's dimensions where they are known: from its shape, else from a Reshape to sizes
    assembled by a Concat of one-element pieces (how the frontend writes view(1, L, H, D))."""
    shape = output.get_partial_shape()
    if shape.rank.is_dynamic:
        return []
    dims = [d.get_length() if d.is_static else None for d in shape]
    node = output.get_node()
    if node.get_type_name() == "Reshape":
        target = source(node, 1)
        pieces = [target] if target.get_node().get_type_name() == "Constant" else (
            [source(target.get_node(), i) for i in range(target.get_node().get_input_size())]
            if target.get_node().get_type_name() == "Concat" else [])
        values: List[Optional[int]] = []
        for piece in pieces:
            constant = constant_values(piece)
            count = int(np.prod([d.get_length() for d in piece.get_partial_shape()])) if piece.get_partial_shape().is_static else -1
            values.extend([int(v) for v in constant] if constant is not None else [None] * max(count, 0))
        if len(values) == len(dims):
            dims = [d if d is not None else (v if v is not None and v > 0 else None) for d, v in zip(dims, values)]
    return dims


class _Rotation:
    """One tensor x [B, L, H, D] rotated in neighbour pairs by tables cos, sin [.., L, .., D/2]:
    Reshape(x) to pairs (a, b) -> a*cos - b*sin and a*sin + b*cos -> Unsqueeze, Concat ->
    Reshape back (`result`)."""

    def __init__(self, concat):
        rank = len(concat.get_output_partial_shape(0))
        if rank != 5 or concat.get_attributes()["axis"] % rank != 4 or concat.get_input_size() != 2:
            raise LookupError("not a stack of pairs")
        halves = []
        for output in _operands(concat):
            node = output.get_node()
            axes = constant_values(source(node, 1)) if node.get_type_name() == "Unsqueeze" else None
            if axes is None or [int(a) % 5 for a in axes.reshape(-1)] != [4]:
                raise LookupError("the stacked values are not unsqueezed on the last axis")
            halves.append(_underlying(source(node)).get_node())
        real, imaginary = halves
        if real.get_type_name() != "Subtract" or imaginary.get_type_name() != "Add":
            raise LookupError("the stacked values are not a difference and a sum")
        # real = a*cos - b*sin; imaginary = a*sin + b*cos, in either order of the sum.
        (a, cos), (b, sin) = (_product(output) for output in _operands(real))
        added = sorted((_product(output) for output in _operands(imaginary)), key=lambda p: p[0][0])
        if (a[0], b[0]) != (0, 1) or [p[0][0] for p in added] != [0, 1]:
            raise LookupError("the halves are not the first and second elements of the pairs")
        if len({_key(a[1]), _key(b[1]), _key(added[0][0][1]), _key(added[1][0][1])}) != 1:
            raise LookupError("the halves are elements of different pairs")
        if (_key(added[0][1]), _key(added[1][1])) != (_key(sin), _key(cos)):
            raise LookupError("the second half is not a*sin + b*cos")
        self.cos, self.sin = cos, sin
        pairs = a[1].get_node()
        if pairs.get_type_name() != "Reshape":
            raise LookupError("the pairs are not a reshape of the rotated tensor")
        self.source = _underlying(source(pairs))
        dims, pair_dims = _known_dims(self.source), _known_dims(a[1])
        if len(dims) != 4 or None in dims[2:] or dims[3] % 2:
            raise LookupError("the rotated tensor is not [B, L, H, D] with H and D known")
        self.heads, self.width = dims[2], dims[3]
        if len(pair_dims) != 5 or pair_dims[2:] not in ([self.heads, self.width // 2, 2], [self.heads, None, 2]) or any(
                p is not None and d is not None and p != d for p, d in zip(pair_dims[:2], dims[:2])):
            raise LookupError("the pairs are not [B, L, H, D/2, 2] of the rotated tensor")
        for table in (cos, sin):
            table_dims = _known_dims(table)
            if len(table_dims) != 4 or [table_dims[0], table_dims[2], table_dims[3]] != [1, 1, self.width // 2]:
                raise LookupError("the tables are not [1, L, 1, D/2]")
        users = list(concat.output(0).get_target_inputs())
        if len(users) != 1 or users[0].get_node().get_type_name() != "Reshape":
            raise LookupError("the stacked pairs are not reshaped back")
        self.result = users[0].get_node().output(0)
        back = _known_dims(self.result)
        if len(back) != 4 or back[2:] != [self.heads, self.width]:
            raise LookupError("the rotation is not reshaped back to [B, L, H, D]")


def _key(output):
    return (output.get_node().get_friendly_name(), output.get_index())


def _pair_element(output):
    """(0 or 1, the pairs) when output is the first or second element of each pair of a [.., 2]
    tensor (a slice of the last axis squeezed, or a gather of one index); else None."""
    node = output.get_node()
    if node.get_type_name() == "Squeeze":
        sliced = _underlying(source(node)).get_node()
        if sliced.get_type_name() != "Slice":
            return None
        start, stop, step, axes = (constant_values(source(sliced, i)) for i in (1, 2, 3, 4))
        if any(v is None or v.size != 1 for v in (start, stop, step, axes)):
            return None
        start, stop, step, axis = (int(v.reshape(-1)[0]) for v in (start, stop, step, axes))
        if axis % 5 == 4 and step == 1 and start in (0, 1) and stop == start + 1:
            return start, _underlying(source(sliced))
    elif node.get_type_name() == "Gather":
        index, axis = constant_values(source(node, 1)), constant_values(source(node, 2))
        if index is not None and axis is not None and index.ndim == 0 and int(axis) % 5 == 4 and int(index) in (0, 1):
            return int(index), _underlying(source(node))
    return None


def _product(output):
    """((element, pairs), table) for a product of one element of pairs and a table."""
    node = output.get_node()
    if node.get_type_name() != "Multiply":
        raise LookupError("the rotated halves are not products")
    left, right = _operands(node)
    for element, table in ((left, right), (right, left)):
        found = _pair_element(element)
        if found is not None and _pair_element(table) is None:
            return found, table
    raise LookupError("a product is not of a pair element and a table")


def _attention_inputs(rotation: _Rotation) -> Optional[set]:
    """The (attention, input index) pairs the rotated tensor reaches, through layout moves and the
    cache only; None if it reaches anything else or its last axis moves on the way."""
    reached, stack, seen = set(), [rotation.result], set()
    while stack:
        output = stack.pop()
        if _key(output) in seen:
            continue
        seen.add(_key(output))
        for target in output.get_target_inputs():
            node = target.get_node()
            kind = node.get_type_name()
            if kind == "ScaledDotProductAttention" and target.get_index() in (0, 1):
                reached.add((node.get_friendly_name(), target.get_index()))
            elif kind in ("Assign", "ShapeOf"):
                continue
            elif kind in _KEY_CARRIERS:
                if not _keeps_last_axis(node, target.get_index(), rotation.width):
                    return None
                carried = (0, 2) if kind == "ScatterNDUpdate" else (0,) if kind in ("Gather", "Broadcast", "ConvertLike", "Slice") else None
                if carried is not None and target.get_index() not in carried:
                    return None  # the rotated values as indices or sizes
                if kind in ("Concat", "ScatterNDUpdate"):
                    joined = [i for i in range(node.get_input_size()) if i != target.get_index() and (kind == "Concat" or i == 0)]
                    if not all(_starts_empty(source(node, i), seen) for i in joined):
                        return None  # joined with values the permutation would not apply to
                dims = _known_dims(node.output(0))
                if not dims or dims[-1] not in (None, rotation.width):
                    return None
                stack.extend(node.outputs())
            else:
                return None
    return reached


def _keeps_last_axis(node, index: int, width: int) -> bool:
    """Whether `node` carries each head's elements (the last axis) whole and in place: it moves,
    cuts, joins or picks along other axes only."""
    kind = node.get_type_name()
    rank = len(node.get_input_partial_shape(index)) if node.get_input_partial_shape(index).rank.is_static else 0
    if rank == 0:
        return False
    last = rank - 1

    def axes(i):
        values = constant_values(source(node, i)) if node.get_input_size() > i else None
        return None if values is None else [int(a) % rank for a in values.reshape(-1)]

    if kind == "Transpose":
        order = permutation(node)
        return order is not None and order[-1] == last
    if kind == "Reshape":  # only where the new shape's last size is known to be the heads' width
        return _known_dims(node.output(0))[-1:] == [width]
    if kind == "Slice":
        return axes(4) is not None and last not in axes(4)
    if kind == "Gather":
        return axes(2) is not None and axes(2) != [last]
    if kind == "Concat":
        return node.get_attributes()["axis"] % rank != last
    if kind == "Unsqueeze":
        added = constant_values(source(node, 1))
        return added is not None and (rank + added.size - 1) not in [int(a) % (rank + added.size) for a in added.reshape(-1)]
    if kind == "ScatterNDUpdate":  # whole rows: each index names fewer axes than the data has
        indices = node.get_input_partial_shape(1)
        data_rank = len(node.get_input_partial_shape(0))
        return indices.rank.is_static and indices[len(indices) - 1].is_static and indices[len(indices) - 1].get_length() < data_rank
    return True


def _starts_empty(output, carried: set) -> bool:
    """Whether the values joined to a rotated key are its own cache: an already carried value, or a
    variable that starts empty or zero (so it only ever holds keys written through this path)."""
    while _key(output) not in carried:
        node = output.get_node()
        kind = node.get_type_name()
        if kind in ("Gather", "Transpose", "Convert", "ConvertLike", "Reshape"):
            output = source(node)
        elif kind == "ReadValue":
            if node.get_input_size() == 0:
                return True
            initial = constant_values(source(node))
            return initial is not None and not np.any(initial)
        else:
            return False
    return True


def fuse_rotary(lowering: Lowering) -> None:
    """Rewrites, in place, the neighbour-pair rotations of the query and key of each attention
    that reads them alone into the form OpenVINO fuses."""
    model = lowering.model
    rotations = []
    for node in model.get_ordered_ops():
        if node.get_type_name() == "Concat":
            try:
                rotations.append(_Rotation(node))
            except LookupError:
                continue
    queries: Dict[str, _Rotation] = {}
    keys: Dict[str, _Rotation] = {}
    for rotation in rotations:
        reached = _attention_inputs(rotation)
        if not reached or len(reached) != 1:
            logger.info("rotation before %s kept: it is read by other than one attention input",
                        rotation.result.get_node().get_friendly_name())
            continue
        (attention, index), = reached
        (queries if index == 0 else keys)[attention] = rotation
    tables: Dict[tuple, object] = {}
    rewritten = 0
    for attention in sorted(set(queries) & set(keys)):
        for rotation in (queries[attention], keys[attention]):
            _rewrite(rotation, tables)
            rewritten += 1
    if rewritten:
        model.validate_nodes_and_infer_types()
        logger.info("rotary embedding of %d queries and keys in the fused form", rewritten)


def _within_head_order(width: int) -> np.ndarray:
    """Each head's elements evens first, then odds: pair (2i, 2i+1) becomes (i, i + width/2)."""
    return np.concatenate([np.arange(0, width, 2), np.arange(1, width, 2)])


def _rewrite(rotation: _Rotation, tables: Dict[tuple, object]) -> None:
    import openvino.opset13 as ops

    heads, width = rotation.heads, rotation.width
    order = _within_head_order(width)
    rotated_input = rotation.source
    if not _permute_projection(rotated_input, np.concatenate([h * width + order for h in range(heads)])):
        rotated_input = ops.gather(rotated_input, ops.constant(order.astype(np.int64)), ops.constant(np.int64(3))).output(0)
    dtype = rotated_input.get_element_type().to_dtype()
    x = ops.reshape(rotated_input, ops.constant(np.array([0, 0, heads, width], np.int64)), True)
    x = ops.transpose(x, ops.constant(np.array([0, 2, 1, 3], np.int64)))  # [B, H, L, D]
    first, second = ops.variadic_split(x, ops.constant(np.int64(3)),
                                       ops.constant(np.array([width // 2, width // 2], np.int64))).outputs()
    rotated = ops.concat([ops.multiply(second, ops.constant(np.array(-1, dtype))), first], -1)
    cos, sin = (_halves_table(table, width, tables) for table in (rotation.cos, rotation.sin))
    result = ops.add(ops.multiply(x, cos), ops.multiply(rotated, sin))
    back = ops.transpose(result, ops.constant(np.array([0, 2, 1, 3], np.int64)))  # [B, L, H, D]
    for target in list(rotation.result.get_target_inputs()):
        target.replace_source_output(back.output(0))


def _halves_table(table, width: int, tables: Dict[tuple, object]):
    """A table [1, L, 1, D/2] as [1, 1, L, D] with its values for both halves (made once per table)."""
    import openvino.opset13 as ops

    if _key(table) not in tables:
        moved = ops.reshape(table, ops.constant(np.array([1, 1, -1, width // 2], np.int64)), False)
        tables[_key(table)] = ops.concat([moved, moved], 3).output(0)
    return tables[_key(table)]


def _single_reader(output) -> bool:
    return len(output.get_target_inputs()) == 1


def _permute_projection(tensor, order: np.ndarray) -> bool:
    """Permutes the output features of the linear layer that makes `tensor` (through reshapes and
    a bias), in its weight constants; False (nothing changed) if they cannot be followed."""
    output = tensor
    edits = []  # (constant node, axis) to permute
    while output.get_node().get_type_name() in ("Reshape", "Add"):
        node = output.get_node()
        if not _single_reader(output):
            return False
        if node.get_type_name() == "Add":
            bias, data = _operands(node)
            if constant_values(bias) is None:
                bias, data = data, bias
            shape = bias.get_partial_shape()
            if constant_values(bias) is None or shape.is_dynamic or shape[len(shape) - 1].get_length() != len(order) \
                    or not _single_reader(bias):
                return False
            edits.append((bias.get_node(), len(shape) - 1))
            output = data
        else:
            output = _underlying(source(node))
    matmul = output.get_node()
    if matmul.get_type_name() != "MatMul" or not _single_reader(output):
        return False
    weights = _underlying(source(matmul, 1))
    axis = 0 if matmul.get_attributes()["transpose_b"] else 1
    if weights.get_node().get_type_name() == "Transpose" and _single_reader(weights):
        if permutation(weights.get_node()) != [1, 0]:
            return False
        weights, axis = _underlying(source(weights.get_node())), 1 - axis
    if axis != 0 or not _weight_constants(weights, len(order), edits):
        return False
    for constant, along in edits:
        constant.output(0).replace(_permuted(constant, order, along).output(0))
    return True


def _weight_constants(output, rows: int, edits: list) -> bool:
    """Collects into `edits` the constants of a weight [rows, ...] (a constant, or its
    decompression: converts, zero point, scale, reshape) that vary along the rows."""
    node = output.get_node()
    kind = node.get_type_name()
    shape = output.get_partial_shape()
    if shape.is_dynamic or len(shape) == 0 or shape[0].get_length() != rows or not _single_reader(output):
        return False
    if kind == "Constant":
        edits.append((node, 0))
        return True
    if kind in ("Convert", "Reshape"):
        return _weight_constants(source(node), rows, edits)
    if kind in ("Multiply", "Subtract"):
        for operand in (source(node, 0), source(node, 1)):
            operand_shape = operand.get_partial_shape()
            if operand_shape.rank.is_static and (len(operand_shape) < len(shape) or operand_shape[0] == 1):
                continue  # broadcast along the rows: the same for every row
            if not _weight_constants(operand, rows, edits):
                return False
        return True
    return False


def _permuted(constant, order: np.ndarray, axis: int):
    """A copy of `constant` with its entries along `axis` (the first, or the last for a bias) in
    `order`. Works on the stored bytes, so packed types (u4, i4) are moved whole rows at a time."""
    import openvino as ov

    shape = list(constant.get_output_shape(0))
    element = constant.get_output_element_type(0)
    if axis != 0:
        return ov.op.Constant(np.ascontiguousarray(np.take(np.array(constant.data), order, axis=axis)))
    packed = np.ascontiguousarray(constant.data).view(np.uint8).reshape(shape[0], -1)
    # The tensor wraps the array's memory; the constant takes a copy (shared_memory=False).
    wrapped = ov.Tensor(np.ascontiguousarray(packed[order]).reshape(-1), ov.Shape(shape), element)
    return ov.op.Constant(wrapped, shared_memory=False)
