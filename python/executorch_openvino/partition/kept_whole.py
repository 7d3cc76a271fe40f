"""Layers the delegate takes whole, renamed before ExecuTorch's to_edge decomposes them.

Recurrent layers (aten.lstm / aten.gru), attention (aten.scaled_dot_product_attention) and the bit
shift that unpacks a stored weight (NNCF's int4) become operators of this package with the same
schema, which ExecuTorch leaves alone; fx_passes turns them back into ATen (fx_passes/ops/whole_ops.py
says why each is kept whole). A node is renamed only when the node support takes it renamed and
skip_ops does not name it; the others decompose as usual.

Self-attention whose query and key lengths are both dynamic (an encoder without a cache) is left to
the usual decomposition: OpenVINO 2026.4's CPU plugin fuses that attention into a Snippets MHA
kernel that computes wrong values for every length of 16 or more once the first inference had
length 1 (native OpenVINO on the same model as well; CPU_RUNTIME_CACHE_CAPACITY=0 hides it, so the
fault is in its shape cache). Decomposed, it computes right. Attention over a cache of static length,
as an LLM's, is not affected and stays whole.
"""

from __future__ import annotations

import logging

import torch

from ..fx_graph import op_name
from ..fx_passes.ops.whole_ops import ATEN_OF, ATEN_SDPA, ATEN_SHIFT, KEPT_WHOLE
from .op_support import NodeSupport

logger = logging.getLogger(__name__)


def keep_whole(exported_program, support: NodeSupport):
    """Renames, in place, the layers `support` takes once renamed (see the module's docstring)."""
    graph_module = exported_program.graph_module
    reads_stored_weight = stored_weight_reader(exported_program)
    renamed = False
    for node in graph_module.graph.nodes:
        ours = KEPT_WHOLE.get(node.target) if node.op == "call_function" else None
        if ours is None or support.skips_op(op_name(node.target)) or support.skips_op(op_name(ours)):
            continue
        if node.target is ATEN_SDPA and _dynamic_self_attention(node):
            logger.info("decomposing %s as usual: query and key lengths are both dynamic", node.name)
            continue
        if node.target is ATEN_SHIFT and not reads_stored_weight(node):
            continue
        node.target = ours
        reason = support.reason_to_refuse(node)
        if reason is not None:
            node.target = ATEN_OF[ours]
            logger.info("decomposing %s as usual: %s", node.name, reason)
            continue
        renamed = True
    if renamed:
        graph_module.recompile()
    return exported_program


def stored_weight_reader(exported_program):
    """node -> whether its first argument is a parameter, buffer or constant of the program (the
    program's stored names read once)."""
    signature = exported_program.graph_signature
    stored = set(signature.inputs_to_parameters) | set(signature.inputs_to_buffers) | set(
        signature.inputs_to_lifted_tensor_constants)

    def reads_stored_weight(node: torch.fx.Node) -> bool:
        source = node.args[0] if node.args else None
        return isinstance(source, torch.fx.Node) and (source.op == "get_attr" or source.name in stored)

    return reads_stored_weight


def _dynamic_self_attention(node: torch.fx.Node) -> bool:
    query, key = node.args[0], node.args[1]
    lengths = [getattr(n, "meta", {}).get("val") for n in (query, key)]
    if any(val is None or val.dim() < 2 for val in lengths):
        return False
    return all(not isinstance(val.shape[-2], int) for val in lengths)
