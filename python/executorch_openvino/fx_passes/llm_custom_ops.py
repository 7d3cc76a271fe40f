"""ExecuTorch's LLM custom operators (executorch.extension.llm.custom_ops), which its Llama
source transformations put in a model (replace_kv_cache_with_custom_kv_cache,
replace_sdpa_with_custom_op), spelled out in ATen calls that OpenVINO's frontend converts:

    llama::update_cache(value [B,S,H,D], cache [B,L,H,D], start_pos)   writes value at positions
        start_pos .. start_pos+S-1 of the cache (in the edge graph: auto_functionalized_v2 of it,
        whose second output is the updated cache) -> index_put at those positions;
    llama::custom_sdpa(q [B,S,H,D], k [B,L,Hkv,D], v, start_pos, None, 0, True, scale)   causal
        attention of the S new positions over the cache's first start_pos+S positions ->
        scaled_dot_product_attention over exactly that valid length (not the whole cache), with
        grouped-query heads repeated and a causal mask offset by start_pos.

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
    target = _mutated_op(node)
    return target is not None and target is _llama_op("update_cache")


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
        if not (_float_4d(node.kwargs.get("value")) and _float_4d(bases[0])):
            return "update_cache of tensors other than a [B, S, H, D] float value and cache"
        return None
    query, key, value, _, mask, dropout, causal = (list(node.args) + [None, 0.0, False, None])[:7]
    if not all(_float_4d(t) for t in (query, key, value)):
        return "custom_sdpa of tensors other than [B, S, H, D] float query, key and value"
    if mask is not None or dropout not in (0, 0.0) or not causal:
        return "custom_sdpa with a mask, dropout or without is_causal (only ExecuTorch's causal form is taken)"
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
    length = call(aten.sym_size.int, value, 1)
    updated = call(aten.index_put.default, cache, [None, _positions(call, start, length)], value)
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
    scale = node.args[7] if len(node.args) > 7 else node.kwargs.get("scale")
    batch, _, heads, head_dim = query.meta["val"].shape
    kv_heads = key.meta["val"].shape[2]
    length = call(aten.sym_size.int, query, 1)
    valid = call(aten.add.Tensor, start, length)  # the cache positions written so far

    def heads_first(tensor, cut: bool):
        if cut:
            tensor = call(aten.slice.Tensor, tensor, 1, 0, valid)
        tensor = call(aten.permute.default, tensor, [0, 2, 1, 3])
        if cut and heads != kv_heads:  # grouped-query attention: each cache head serves heads/kv_heads
            tensor = call(aten.unsqueeze.default, tensor, 2)
            tensor = call(aten.expand.default, tensor, [batch, kv_heads, heads // kv_heads, -1, head_dim])
            tensor = call(aten.view.default, tensor, [batch, heads, -1, head_dim])
        return tensor

    rows = call(aten.unsqueeze.default, _positions(call, start, length), 1)
    columns = call(aten.unsqueeze.default, call(aten.arange.start_step, 0, valid, 1, dtype=torch.int64), 0)
    causal = call(aten.le.Tensor, columns, rows)  # [S, valid]: a position sees itself and the past
    # The frontend reads a scale kwarg as a tensor: given only when set.
    extra = {"scale": scale} if scale is not None else {}
    attention = call(aten.scaled_dot_product_attention.default, heads_first(query, False), heads_first(key, True),
                     heads_first(value, True), causal, 0.0, False, **extra)
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
