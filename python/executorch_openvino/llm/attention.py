"""Attention kept as one operation through ExecuTorch's edge lowering.

to_edge decomposes aten.scaled_dot_product_attention into matrix products, a softmax and masking;
kept whole, it becomes OpenVINO's ScaledDotProductAttention, which the CPU plugin runs as one
kernel (measured on a 6-layer Llama: 9 % faster decoding, 12 % faster prefill). It cannot simply be
listed in ops_to_not_decompose: retraced for decomposition, ATen's op gives a contiguous output,
unlike in eager, and a Llama's transpose + reshape of it with a dynamic length then fails to trace.
So, before decomposition, the partitioner renames each attention our delegate takes to
executorch_openvino::sdpa (the same schema; its output laid out as ATen's CPU kernel lays it out in
eager, [B, S, H, D] in memory, so models' transpose + view of it trace as they ran), which
ExecuTorch leaves alone, and the IR conversion names it back (rewrites) for OpenVINO's frontend.

Self-attention whose query and key lengths are both dynamic (an encoder without a cache) is left to
the usual decomposition: OpenVINO 2026.4's CPU plugin fuses that attention into a Snippets MHA
kernel that computes wrong values for every length of 16 or more once the first inference had
length 1 (native OpenVINO on the same model as well; CPU_RUNTIME_CACHE_CAPACITY=0 hides it, so the
fault is in its shape cache). Decomposed, it computes right. Attention over a cache of static length,
as an LLM's, is not affected and stays whole.
"""

from __future__ import annotations

import logging
from typing import Callable, Optional

import torch

logger = logging.getLogger(__name__)

_LIBRARY = torch.library.Library("executorch_openvino", "FRAGMENT")
_LIBRARY.define(
    "sdpa(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0.0, "
    "bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor"
)


def _sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, enable_gqa=False):
    out = torch.ops.aten.scaled_dot_product_attention.default(
        query, key, value, attn_mask, dropout_p, is_causal, scale=scale, enable_gqa=enable_gqa
    )
    if out.dim() == 4:  # [B, H, S, D] over memory in [B, S, H, D] order, as ATen's CPU kernel gives
        return out.transpose(1, 2).contiguous().transpose(1, 2)
    return out.contiguous()


_LIBRARY.impl("sdpa", _sdpa, "CompositeExplicitAutograd")
torch.library.register_fake("executorch_openvino::sdpa", _sdpa, lib=_LIBRARY)

ATEN_SDPA = torch.ops.aten.scaled_dot_product_attention.default
OURS = torch.ops.executorch_openvino.sdpa.default
OUR_NAME = "executorch_openvino.sdpa.default"


def keep_whole(exported_program, refusal: Callable[[torch.fx.Node], Optional[str]], skipped: Callable[[str], bool]):
    """Renames, in place, the attention nodes `refusal` accepts once renamed and `skipped` does not
    name ("aten.scaled_dot_product_attention" or ours); the others are decomposed as usual."""
    from ..op_support import op_name

    graph_module = exported_program.graph_module
    renamed = False
    for node in graph_module.graph.nodes:
        if node.op != "call_function" or node.target is not ATEN_SDPA:
            continue
        if skipped(op_name(ATEN_SDPA)) or skipped(OUR_NAME):
            continue
        if _dynamic_self_attention(node):
            logger.info("decomposing %s as usual: query and key lengths are both dynamic", node.name)
            continue
        node.target = OURS
        reason = refusal(node)
        if reason is not None:
            node.target = ATEN_SDPA
            logger.info("decomposing %s as usual: %s", node.name, reason)
            continue
        renamed = True
    if renamed:
        graph_module.recompile()
    return exported_program


def _dynamic_self_attention(node: torch.fx.Node) -> bool:
    query, key = node.args[0], node.args[1]
    lengths = [getattr(n, "meta", {}).get("val") for n in (query, key)]
    if any(val is None or val.dim() < 2 for val in lengths):
        return False
    return all(not isinstance(val.shape[-2], int) for val in lengths)


def _back_to_aten(graph_module, node):
    """The rewrite for the IR conversion: our name back to ATen's, which the frontend knows."""
    node.target = ATEN_SDPA
    return None  # the node stays, renamed


REWRITES = {OUR_NAME: _back_to_aten}
