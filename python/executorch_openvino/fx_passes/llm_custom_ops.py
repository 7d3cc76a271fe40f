"""ExecuTorch's LLM custom operators (executorch.extension.llm.custom_ops), which its Llama
source transformations and optimum-executorch's custom caches put in a model
(replace_kv_cache_with_custom_kv_cache, replace_sdpa_with_custom_op, CustomKVCache,
CustomRingKVCache), spelled out in ATen calls that OpenVINO's frontend converts, as ExecuTorch's
kernels (op_update_cache.cpp, op_sdpa.cpp) compute them:

    llama::update_cache(value [B,S,H,D], cache [B,L,H,D], start_pos)   writes value at positions
        start_pos .. start_pos+S-1 of the cache (in the edge graph: auto_functionalized_v2 of it,
        whose second output is the updated cache) -> index_put at those positions;
    llama::update_cache_with_indices(value, cache, start_pos, indices [B,S])   writes value[b, s]
        at row indices[b, s] of batch b, start_pos unused (a ring buffer's rows: position modulo
        its length) -> index_put at those rows;
    llama::custom_sdpa(q [B,S,H,D], k [B,L,Hkv,D], v, start_pos, mask, 0, is_causal, scale)
        without a mask: attention of the S new positions over the cache's first start_pos+S
        positions, causal (offset by start_pos) if is_causal -> scaled_dot_product_attention over
        exactly that valid length (not the whole cache);
        with a mask (a float [S, L] added to the scaled scores; the kernel refuses it with
        is_causal): attention over the whole cache, start_pos unused -> scaled_dot_product_attention
        over the whole cache with that additive mask;
        grouped-query heads repeated (query head h reads cache head h // (H / Hkv)).

start_pos is a symbolic int ExecuTorch computes outside the partition (input_pos.item()); the
delegate receives it as a rank-0 input (partition/scalar_boundaries.py).
"""

from __future__ import annotations

import operator
from typing import Optional

import torch

from ..fx_graph import op_name
from .ops.builder import Builder

_AUTO_FUNCTIONALIZED = (getattr(torch.ops.higher_order, "auto_functionalized_v2", None),
                        getattr(torch.ops.higher_order, "auto_functionalized", None))


def _llama_op(name: str):
    namespace = getattr(torch.ops, "llama", None)
    try:
        return getattr(namespace, name).default if namespace is not None else None
    except AttributeError:  # the custom ops library is not loaded: no such node can exist
        return None


def _mutated_op(node: torch.fx.Node):
    if node.op == "call_function" and node.target in _AUTO_FUNCTIONALIZED and node.target is not None and node.args:
        return node.args[0]
    return None


def is_update_cache(node: torch.fx.Node) -> bool:
    """llama::update_cache or llama::update_cache_with_indices (auto-functionalized)."""
    target = _mutated_op(node)
    return target is not None and target in (_llama_op("update_cache"), _llama_op("update_cache_with_indices"))


def is_custom_sdpa(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and op_name(node.target) == "llama.custom_sdpa.default"


def is_llm_custom_op(node: torch.fx.Node) -> bool:
    return is_update_cache(node) or is_custom_sdpa(node)


def _float_4d(value) -> bool:
    tensor = value.meta.get("val") if isinstance(value, torch.fx.Node) else None
    return isinstance(tensor, torch.Tensor) and tensor.dim() == 4 and tensor.dtype in (torch.float32, torch.float16, torch.bfloat16)


def reason_to_refuse(node: torch.fx.Node) -> Optional[str]:
    """Why the rewrite below cannot take this custom op node, or None."""
    if is_update_cache(node):
        bases = node.kwargs.get("_all_bases", [])
        if len(bases) != 1 or node.kwargs.get("_cache_base_index", 0) != 0:
            return "update_cache of a view of a cache (only a whole cache buffer is taken)"
        value = node.kwargs.get("value")
        if not (_float_4d(value) and _float_4d(bases[0])):
            return "update_cache of tensors other than a [B, S, H, D] float value and cache"
        if "indices" in node.kwargs:
            indices = node.kwargs["indices"]
            indices = indices.meta.get("val") if isinstance(indices, torch.fx.Node) else None
            if not isinstance(indices, torch.Tensor) or indices.dtype != torch.int64 or indices.dim() != 2:
                return "update_cache_with_indices whose indices are not an int64 [B, S] tensor"
        return None
    query, key, value, _, mask, dropout, causal = (list(node.args) + [None, 0.0, False, None])[:7]
    mask = node.kwargs.get("attn_mask", mask)
    dropout = node.kwargs.get("drpout_p", dropout)  # ExecuTorch's schema spells it so
    causal = node.kwargs.get("is_causal", causal)
    if not all(_float_4d(t) for t in (query, key, value)):
        return "custom_sdpa of tensors other than [B, S, H, D] float query, key and value"
    if dropout not in (0, 0.0):
        return "custom_sdpa with dropout"
    if mask is not None:
        tensor = mask.meta.get("val") if isinstance(mask, torch.fx.Node) else None
        if causal:
            return "custom_sdpa with both a mask and is_causal (ExecuTorch's kernel refuses it)"
        if not isinstance(tensor, torch.Tensor) or tensor.dim() != 2 or tensor.dtype != query.meta["val"].dtype:
            return ("custom_sdpa with a mask other than a 2-D one of the query's float dtype "
                    "(ExecuTorch's kernel refuses it)")
    return None


def _positions(call, start, length) -> torch.fx.Node:
    """start, start+1, ..., start+length-1 as an int64 tensor (start: a scalar input)."""
    aten = torch.ops.aten
    steps = call(aten.arange.start_step, 0, length, 1, dtype=torch.int64)
    return call(aten.add.Tensor, steps, start)


def _spell_out_update_cache(graph_module: torch.fx.GraphModule, node: torch.fx.Node) -> None:
    aten = torch.ops.aten
    graph, call = graph_module.graph, Builder(graph_module, node).call
    value, (cache,), start = node.kwargs["value"], node.kwargs["_all_bases"], node.kwargs["start_pos"]
    indices = node.kwargs.get("indices")
    if indices is None:
        rows = [None, _positions(call, start, call(aten.sym_size.int, value, 1))]
    elif value.meta["val"].shape[0] == 1:  # one batch: its rows alone, as update_cache writes
        rows = [None, call(aten.select.int, indices, 0, 0)]
    else:  # batch b's rows indices[b]: the batch index broadcast along the sequence
        batches = call(aten.arange.start_step, 0, value.meta["val"].shape[0], 1, dtype=torch.int64)
        rows = [call(aten.unsqueeze.default, batches, 1), indices]
    updated = call(aten.index_put.default, cache, rows, value)
    # Later spell-outs read shapes from meta: optimum-executorch's cache feeds update_cache's result
    # (not the buffer, as ExecuTorch's Llama does) to custom_sdpa.
    updated.meta["val"] = cache.meta["val"]
    for user in list(node.users):
        if user.target is operator.getitem and user.args[1] == 1:
            user.replace_all_uses_with(updated)
        graph.erase_node(user)
    graph.erase_node(node)


def _spell_out_custom_sdpa(graph_module: torch.fx.GraphModule, node: torch.fx.Node) -> None:
    aten = torch.ops.aten
    graph, call = graph_module.graph, Builder(graph_module, node).call
    query, key, value, start = node.args[:4]
    mask = node.args[4] if len(node.args) > 4 else node.kwargs.get("attn_mask")
    is_causal = node.args[6] if len(node.args) > 6 else node.kwargs.get("is_causal", False)
    scale = node.args[7] if len(node.args) > 7 else node.kwargs.get("scale")
    batch, _, heads, head_dim = query.meta["val"].shape
    kv_heads = key.meta["val"].shape[2]
    length = call(aten.sym_size.int, query, 1)
    # With a mask the kernel attends over the whole cache, the mask saying which rows count;
    # without one, over the positions written so far.
    valid = None if mask is not None else call(aten.add.Tensor, start, length)

    def heads_first(tensor, cache: bool):
        if valid is not None and cache:
            tensor = call(aten.slice.Tensor, tensor, 1, 0, valid)
        tensor = call(aten.permute.default, tensor, [0, 2, 1, 3])
        if cache and heads != kv_heads:  # grouped-query attention: each cache head serves heads/kv_heads
            tensor = call(aten.unsqueeze.default, tensor, 2)
            tensor = call(aten.expand.default, tensor, [batch, kv_heads, heads // kv_heads, -1, head_dim])
            tensor = call(aten.view.default, tensor, [batch, heads, -1, head_dim])
        return tensor

    if mask is None and is_causal:
        rows = call(aten.unsqueeze.default, _positions(call, start, length), 1)
        columns = call(aten.unsqueeze.default, call(aten.arange.start_step, 0, valid, 1, dtype=torch.int64), 0)
        mask = call(aten.le.Tensor, columns, rows)  # [S, valid]: a position sees itself and the past
    # The frontend reads a scale kwarg as a tensor: given only when set.
    extra = {"scale": scale} if scale is not None else {}
    attention = call(aten.scaled_dot_product_attention.default, heads_first(query, False), heads_first(key, True),
                     heads_first(value, True), mask, 0.0, False, **extra)
    result = call(aten.permute.default, attention, [0, 2, 1, 3])
    node.replace_all_uses_with(result)
    graph.erase_node(node)


def spell_out(graph_module: torch.fx.GraphModule) -> None:
    """Rewrites, in place, every update_cache and custom_sdpa node into ATen calls."""
    changed = False
    for node in list(graph_module.graph.nodes):
        if is_update_cache(node):
            _spell_out_update_cache(graph_module, node)
            changed = True
        elif is_custom_sdpa(node):
            _spell_out_custom_sdpa(graph_module, node)
            changed = True
    if changed:
        graph_module.recompile()
