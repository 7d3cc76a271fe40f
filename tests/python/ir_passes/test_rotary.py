"""Rotary embedding rewritten into the form OpenVINO's CPU plugin fuses (python/executorch_openvino/
ir_passes/rotary.py): ExecuTorch's neighbour-pair rotation of queries and keys becomes one RoPE kernel
each, with the projections' weights permuted; results stay those of the unrewritten program, and a
rotation the permutation would show through (read outside attention) is kept as it is. Greedy ids
equal to eager over 64 steps with the rewrite in place are ir_passes/test_buffer_variables.py's."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
import torch

import executorch_openvino
from executorch.examples.models.llama.rope import apply_rotary_emb, precompute_freqs_cis
from executorch.exir import to_edge_transform_and_lower
from executorch_openvino import ir_passes
from executorch_openvino.ir_passes import rotary
from llm_models import Conversation, method_step, teacher_forced
from lowering import blob_ir, delegate_calls, load_forward
from llm_lowering import PROMPT, load, lowered


def runtime_layers(ir: ov.Model, kind: str) -> int:
    compiled = ov.Core().compile_model(ir, "CPU")
    return sum(op.get_rt_info()["layerType"].astype(str) == kind for op in compiled.get_runtime_model().get_ops())


@pytest.mark.parametrize("variant", ["dynamic_prompt", "one_token", "custom_ops", "hf_static_cache"])
def test_each_query_and_key_rotation_is_one_fused_kernel(variant):
    """Two layers: two RoPE kernels each. ExecuTorch's pairs (the first three) are rewritten; the
    transformers export is already in halves, which OpenVINO fuses as it comes."""
    ir = lowered(variant).ir
    assert runtime_layers(ir, "RoPE") == 4
    stacks = [op for op in ir.get_ops() if op.get_type_name() == "Concat" and len(op.get_output_partial_shape(0)) == 5]
    assert not stacks  # no stack of pairs left


def _two_lowerings(monkeypatch):
    """The dynamic-prompt Llama lowered with the rewrite and without it (fresh lowerings: the cached
    ones of ir_passes/test_buffer_variables.py were made with it)."""
    from llm_models import et_llama, export_et_llama

    model = et_llama(True, seed=3)
    programs = {}
    with_it = ir_passes.PASSES
    without = tuple(p for p in with_it if p is not rotary.fuse_rotary)
    for label, passes in (("rewritten", with_it), ("as exported", without)):
        monkeypatch.setattr(ir_passes, "PASSES", passes)
        edge = to_edge_transform_and_lower(export_et_llama(model, True),
                                           partitioner=[executorch_openvino.OpenvinoPartitioner()])
        graph_module = edge.exported_program().graph_module
        calls = delegate_calls(graph_module.graph)
        programs[label] = (blob_ir(getattr(graph_module, calls[0].args[0].target).processed_bytes),
                           edge.to_executorch().buffer)
    return programs


def test_results_equal_the_program_without_the_rewrite(monkeypatch):
    programs = _two_lowerings(monkeypatch)
    assert runtime_layers(programs["as exported"][0], "RoPE") == 0
    assert runtime_layers(programs["rewritten"][0], "RoPE") == 4
    steps = {label: method_step(load(pte)) for label, (_, pte) in programs.items()}
    reference = method_step(load(programs["as exported"][1]))  # chooses the tokens both are fed
    tokens, _ = Conversation(reference).generate(PROMPT, 21)
    got, expected = (teacher_forced(steps[label], PROMPT, tokens) for label in ("rewritten", "as exported"))
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, rtol=0, atol=1e-5)


class RotatedAttention(torch.nn.Module):
    """Projections, ExecuTorch's rotation, attention: the piece of a Llama layer the rewrite sees.
    `show_query` also returns the rotated query, which the permutation would change."""

    def __init__(self, show_query: bool = False, project: bool = True, dim: int = 64, heads: int = 4):
        super().__init__()
        self.heads, self.width, self.show_query, self.project = heads, dim // heads, show_query, project
        self.wq, self.wk, self.wv = (torch.nn.Linear(dim, dim, bias=bias) for bias in (True, False, False))
        cos, sin = precompute_freqs_cis(self.width, 32)
        self.register_buffer("cos", cos)
        self.register_buffer("sin", sin)

    def forward(self, x, q=None):
        length = x.shape[1]
        shape = (1, length, self.heads, self.width)
        query = self.wq(x).view(shape) if self.project else q.view(shape)
        key, value = self.wk(x).view(shape), self.wv(x).view(shape)
        query, key = apply_rotary_emb(query, key, self.cos[:length], self.sin[:length])
        out = torch.nn.functional.scaled_dot_product_attention(
            query.transpose(1, 2), key.transpose(1, 2), value.transpose(1, 2), is_causal=False)
        out = out.transpose(1, 2).reshape(1, length, -1)
        return (out, query) if self.show_query else out


def _lower(model, inputs):
    edge = to_edge_transform_and_lower(torch.export.export(model, inputs),
                                       partitioner=[executorch_openvino.OpenvinoPartitioner()])
    graph_module = edge.exported_program().graph_module
    calls = delegate_calls(graph_module.graph)
    assert len(calls) == 1
    return blob_ir(getattr(graph_module, calls[0].args[0].target).processed_bytes), edge.to_executorch().buffer


@pytest.mark.parametrize("show_query, project, fused", [
    (False, True, 2),   # weights (and the query's bias) permuted
    (False, False, 2),  # the query is an input: permuted by a gather instead
    (True, True, 0),    # the rotated query is an output: nothing rewritten
])
def test_rotated_attention_equals_eager(show_query, project, fused):
    torch.manual_seed(0)
    model = RotatedAttention(show_query, project).eval()
    inputs = (torch.randn(1, 8, 64), torch.randn(1, 8, 64))
    ir, pte = _lower(model, inputs)
    assert runtime_layers(ir, "RoPE") == fused
    got = load_forward(pte).execute(list(inputs))
    expected = model(*inputs)
    expected = list(expected) if isinstance(expected, tuple) else [expected]
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("element", [ov.Type.u4, ov.Type.i4, ov.Type.u8, ov.Type.i8, ov.Type.f16, ov.Type.f32])
def test_weights_of_any_storage_type_are_permuted_by_whole_rows(element):
    """Low-bit weights are packed two to a byte: rows move as bytes, and unpack as the rows they were."""
    rows, width = 6, 8
    low, high = {ov.Type.i4: (-8, 8), ov.Type.u4: (0, 16), ov.Type.u8: (0, 250)}.get(element, (-100, 100))
    values = np.random.default_rng(1).integers(low, high, (rows, width))
    if element.is_real():
        constant = ops.constant(values.astype(element.to_dtype()))
    else:
        constant = ov.op.Constant(element, ov.Shape([rows, width]), values.reshape(-1).tolist())
    order = np.array([3, 0, 5, 1, 4, 2])
    permuted = rotary._permuted(constant, order, 0)

    def unpacked(node):
        compiled = ov.Core().compile_model(ov.Model([ops.convert(node, "f32")], []), "CPU")
        return compiled({})[0]

    np.testing.assert_array_equal(unpacked(permuted), values[order].astype(np.float32))
    assert permuted.get_element_type() == element
