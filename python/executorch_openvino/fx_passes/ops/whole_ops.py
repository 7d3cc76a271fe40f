"""This package's own torch operators: ATen layers under another name, so that ExecuTorch's to_edge
leaves them whole instead of decomposing them (partition/kept_whole.py renames them before
decomposition); here they become ATen again for the frontend.

    executorch_openvino::lstm, ::gru   aten.lstm.input / aten.gru.input with the same schema. Their
        decomposition is a few hundred nodes a layer, on which ExecuTorch's edge passes spend most of
        the lowering time (a two-layer LSTM of ten steps: ~30 s of ~40); ops/recurrent.py unrolls
        them into the steps PyTorch defines instead.
    executorch_openvino::sdpa   aten.scaled_dot_product_attention, which becomes OpenVINO's
        ScaledDotProductAttention, one kernel on the CPU plugin (a 6-layer Llama: 9 % faster decoding,
        12 % faster prefill). It cannot simply be listed in ops_to_not_decompose: retraced for
        decomposition, ATen's op gives a contiguous output, unlike in eager, and a Llama's transpose +
        reshape of it with a dynamic length then fails to trace. Ours lays its output out as ATen's
        CPU kernel does in eager ([B, S, H, D] in memory), so models' transpose + view of it trace as
        they ran; here it is named back to ATen's.
    executorch_openvino::weight_shift   aten.bitwise_right_shift.Tensor_Scalar on a stored weight, as NNCF
        unpacks int4 weights. That shift is outside core ATen, so to_edge would keep it only when the
        partitioner hands ExecuTorch a check function, which costs a whole retrace of the graph (a
        sixth of an int4 LLM's export). Renamed, it needs none; here it becomes ATen's shift and its
        rewrite (ops/bit_shifts.py), where constant folding has not computed it first.
"""

from __future__ import annotations

import torch

from . import bit_shifts

_LIBRARY = torch.library.Library("executorch_openvino", "DEF")
_LIBRARY.define(
    "lstm(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, "
    "bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)"
)
_LIBRARY.define(
    "gru(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, "
    "bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)"
)
_LIBRARY.define(
    "sdpa(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0.0, "
    "bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor"
)
_LIBRARY.define("weight_shift(Tensor self, Scalar other) -> Tensor")


def _lstm(*args):
    return tuple(t.clone(memory_format=torch.contiguous_format) for t in torch.ops.aten.lstm.input(*args))


def _gru(*args):
    return tuple(t.clone(memory_format=torch.contiguous_format) for t in torch.ops.aten.gru.input(*args))


def _sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, enable_gqa=False):
    out = torch.ops.aten.scaled_dot_product_attention.default(
        query, key, value, attn_mask, dropout_p, is_causal, scale=scale, enable_gqa=enable_gqa
    )
    if out.dim() == 4:  # [B, H, S, D] over memory in [B, S, H, D] order, as ATen's CPU kernel gives
        return out.transpose(1, 2).contiguous().transpose(1, 2)
    return out.contiguous()


def _weight_shift(weight, amount):
    return torch.ops.aten.bitwise_right_shift.Tensor_Scalar(weight, amount)


for _name, _impl in (("lstm", _lstm), ("gru", _gru), ("sdpa", _sdpa), ("weight_shift", _weight_shift)):
    _LIBRARY.impl(_name, _impl, "CompositeExplicitAutograd")
    torch.library.register_fake(f"executorch_openvino::{_name}", _impl, lib=_LIBRARY)

ATEN_SDPA = torch.ops.aten.scaled_dot_product_attention.default
OUR_SDPA = torch.ops.executorch_openvino.sdpa.default
ATEN_SHIFT = torch.ops.aten.bitwise_right_shift.Tensor_Scalar

# ATen op -> ours, and back.
KEPT_WHOLE = {
    torch.ops.aten.lstm.input: torch.ops.executorch_openvino.lstm.default,
    torch.ops.aten.gru.input: torch.ops.executorch_openvino.gru.default,
    ATEN_SDPA: OUR_SDPA,
    ATEN_SHIFT: torch.ops.executorch_openvino.weight_shift.default,
}
ATEN_OF = {ours: aten for aten, ours in KEPT_WHOLE.items()}


def _sdpa_back_to_aten(graph_module, node):
    node.target = ATEN_SDPA
    return None  # the node stays, renamed


def _weight_shift_back_to_aten(graph_module, node):
    node.target = ATEN_SHIFT
    return bit_shifts.REWRITES["aten.bitwise_right_shift.Tensor_Scalar"](graph_module, node)


REWRITES = {"executorch_openvino.sdpa.default": _sdpa_back_to_aten,
            "executorch_openvino.weight_shift.default": _weight_shift_back_to_aten}
