"""Partition inputs that are the same value: noted here, computed once inside the delegate.

ExecuTorch's Llama gives every layer its own causal mask buffer and reads the position with .item()
once per layer, then slices its mask with it. That is ExecuTorch's scalar work outside the delegate,
so each layer's copy crossed into the partition as an input of its own, and OpenVINO computed each
layer's mask from it again (the benchmark's 6-layer Llama: 16 inputs, 6 mask chains; with one, 64
decode steps of the IR took 9 % less time). The partitioner may not change the graph (ExecuTorch
checks), so it only notes in each input's meta which value it is (`mark_equal_values`, meta key
fx_graph.VALUE_KEY); ir_passes/equal_inputs.py points the IR's readers of a repeated input at the
first input of the same value.

Two nodes are the same value when both are the same side-effect-free operator on the same values
(positions, sizes, slices, views: `_MERGEABLE_OPS`), or buffers never written with equal dtype,
shape and contents. Nothing else is assumed equal.
"""

from __future__ import annotations

import hashlib
import logging
import operator
from typing import Any, Dict, List, Optional, Tuple

import torch
from torch.export import ExportedProgram

from ..fx_graph import DELEGATION_TAG, VALUE_KEY, op_name
from .partitioning import Partitioning

logger = logging.getLogger(__name__)

# Side-effect free and deterministic: the plumbing around positions and slices, as the edge dialect
# (what the partitioner sees) spells it.
_MERGEABLE_OPS = frozenset({
    "aten._local_scalar_dense.default", "aten.scalar_tensor.default", "aten.sym_size.int", "aten.sym_numel.default",
    "aten.select_copy.int", "aten.slice_copy.Tensor", "aten.view_copy.default", "aten.unsqueeze_copy.default",
    "aten.squeeze_copy.dims", "aten.expand_copy.default", "aten.permute_copy.default", "aten.alias_copy.default",
})
_MERGEABLE_BUILTINS = frozenset({operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod,
                                 operator.neg, operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
                                 operator.ge})


def _is_mergeable(node: torch.fx.Node) -> bool:
    if node.op != "call_function":
        return False
    if node.target in _MERGEABLE_BUILTINS:
        return True
    return op_name(node.target) in _MERGEABLE_OPS


def _frozen(value: Any, canonical: Dict[torch.fx.Node, torch.fx.Node]) -> Optional[Any]:
    """A hashable stand-in for a node argument, each node replaced by the first of its value, or None
    when there is none."""
    if isinstance(value, torch.fx.Node):
        return ("node", canonical.get(value, value))
    if isinstance(value, (list, tuple)):
        items = [_frozen(item, canonical) for item in value]
        return None if any(item is None for item in items) else (type(value).__name__, tuple(items))
    if isinstance(value, dict):
        items = {key: _frozen(item, canonical) for key, item in value.items()}
        return None if any(item is None for item in items.values()) else ("dict", tuple(sorted(items.items())))
    if value is None or isinstance(value, (bool, int, float, str, torch.dtype, torch.device, torch.layout,
                                           torch.memory_format)):
        return ("value", type(value).__name__, value)
    return None


Fingerprint = Tuple[str, Tuple[int, ...], str]  # dtype, shape, SHA-256 of the bytes


def fingerprints(program: ExportedProgram) -> Dict[str, Fingerprint]:
    """Each buffer or lifted constant of the program that holds values (by name) -> its fingerprint."""
    found = {}
    for name in _stored_names(program):
        fingerprint = _fingerprint(program, name)
        if fingerprint is not None:
            found[name] = fingerprint
    return found


def _stored_names(program: ExportedProgram) -> List[str]:
    signature = program.graph_signature
    return list({**signature.inputs_to_buffers, **signature.inputs_to_lifted_tensor_constants}.values())


def _fingerprint(program: ExportedProgram, name: str) -> Optional[Fingerprint]:
    tensor = _stored_tensor(program, name)
    if tensor is None:
        return None
    data = tensor.detach().contiguous().view(-1).view(torch.uint8).numpy().tobytes() if tensor.numel() else b""
    return str(tensor.dtype), tuple(tensor.shape), hashlib.sha256(data).hexdigest()


def equal_buffers(program: ExportedProgram, known: Optional[Dict[str, Optional[Fingerprint]]] = None) -> Dict[str, str]:
    """Each buffer or lifted constant (by name) -> the first one with the same dtype, shape and values,
    where neither is ever written (a KV cache starts as zeros like its neighbours, yet each is its own).
    Parameters are left alone. Where the program holds no values (a re-exported program's buffers can
    be fake tensors by the time it is partitioned), `known` gives their fingerprints, taken earlier
    from the program with values (None: unknown)."""
    written = set(program.graph_signature.buffers_to_mutate.values())
    known = known or {}
    first_of: Dict[Fingerprint, str] = {}
    twins: Dict[str, str] = {}
    for name in _stored_names(program):
        if name in written:
            continue
        # The earlier fingerprint where there is one (None: unknown): each tensor is hashed once.
        fingerprint = known[name] if name in known else _fingerprint(program, name)
        if fingerprint is None:
            continue
        first = first_of.setdefault(fingerprint, name)
        if first != name:
            twins[name] = first
    return twins


def _stored_tensor(program: ExportedProgram, name: str) -> Optional[torch.Tensor]:
    """The buffer's values, or None where there are none to read (fake, meta or sparse tensors)."""
    from torch._subclasses.fake_tensor import FakeTensor

    value = program.constants.get(name)
    if value is None:
        value = program.state_dict.get(name)
    if not isinstance(value, torch.Tensor) or isinstance(value, FakeTensor):
        return None
    return None if value.is_sparse or value.device.type == "meta" else value.cpu()


def _canonical_nodes(program: ExportedProgram,
                     known: Optional[Dict[str, Optional[Fingerprint]]] = None) -> Dict[torch.fx.Node, torch.fx.Node]:
    """Each node -> the first node of the same value (itself when none came before), in graph order."""
    canonical: Dict[torch.fx.Node, torch.fx.Node] = {}
    stored = {**program.graph_signature.inputs_to_buffers, **program.graph_signature.inputs_to_lifted_tensor_constants}
    placeholder_of = {name: node for node in program.graph.nodes if node.op == "placeholder"
                      for name in [stored.get(node.name)] if name is not None}
    buffers = {placeholder_of[name]: placeholder_of[twin]
               for name, twin in equal_buffers(program, known).items() if name in placeholder_of and twin in placeholder_of}
    seen: Dict[Tuple, torch.fx.Node] = {}
    for node in program.graph.nodes:
        canonical[node] = buffers.get(node, node)
        if not _is_mergeable(node):
            continue
        key = _frozen((node.args, node.kwargs), canonical)
        if key is not None:
            canonical[node] = seen.setdefault((node.target, key), node)
    return canonical


def mark_equal_values(partitioning: Partitioning) -> None:
    """Notes in the meta of every node a partition reads from outside it (VALUE_KEY) the name of the
    first node of its value (the buffers by the fingerprints taken before decomposition: see
    equal_buffers). Changes no node; run once the tags are final."""
    program = partitioning.program
    canonical = _canonical_nodes(program, partitioning.buffer_fingerprints)
    repeats = 0
    for node in program.graph.nodes:
        tags = {user.meta.get(DELEGATION_TAG) for user in node.users} - {None, node.meta.get(DELEGATION_TAG)}
        if not tags:
            continue
        node.meta[VALUE_KEY] = canonical[node].name
        repeats += canonical[node] is not node
    if repeats:
        logger.info("executorch_openvino: %d partition input(s) repeat the value of another", repeats)
