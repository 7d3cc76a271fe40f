"""KV caches rewritten to grow with the conversation (ir_passes/grown_cache.py),
the form OpenVINO's CPU plugin runs as one fused attention-with-cache kernel; and what the runtime
library does around it (src/delegate/conversation/grown_conversation.cpp): position 0 starts a new conversation,
and a call past the conversation is refused with a reason, never computed wrong.
The exports are ir_passes/test_buffer_variables.py's (ExecuTorch's Llama, transformers' LlamaForCausalLM)."""

from __future__ import annotations

import copy

import openvino as ov
import pytest
import torch

from executorch_openvino.container.ir_names import exported_name
from executorch_openvino.runtime.errors import DelegateError
from executorch_openvino.ir_passes.grown_cache import CACHE_POSITION_INPUT, GROWN_VARIABLE_PREFIX, LENGTH_VARIABLE
from llm_lowering import PROMPT, eager_of, load, lowered, ours_of
from llm_models import Conversation, eager_step, method_step
from seq2seq_models import CrossAttendingDecoder

pytestmark = pytest.mark.usefixtures("grown")  # the form these tests are about

GROWN = ["dynamic_prompt", "one_token", "hf_static_cache"]


def _variables(ir) -> dict:
    """{variable: shape}, a grown cache (and an encoder's cross-attention cache) named as the model named it."""
    return {exported_name(v.get_info().variable_id): v.get_info().data_shape for v in ir.get_variables()}

@pytest.mark.parametrize("variant", GROWN)
def test_the_caches_grow_and_one_input_carries_their_position(variant):
    ir = lowered(variant).ir
    types = {op.get_type_name() for op in ir.get_ops()}
    assert "ScatterNDUpdate" not in types and "ScatterUpdate" not in types
    variables = {v.get_info().variable_id: v.get_info().data_shape for v in ir.get_variables()}
    assert variables.pop(LENGTH_VARIABLE) == ov.PartialShape([1])  # the positions they hold
    assert len(variables) == 4
    assert lowered(variant).grown_caches == 4  # the blob says so: the runtime may run them paged
    for name, shape in variables.items():  # the past only: its sequence axis is open
        assert name.startswith(GROWN_VARIABLE_PREFIX) and shape[2].is_dynamic, name
    named = [port for port in ir.inputs if CACHE_POSITION_INPUT in port.get_names()]
    assert len(named) == 1 and named[0].get_element_type().is_integral()
    assert ir.get_rt_info(["runtime_options", "KV_CACHE_PRECISION"]).astype(str) == "f32"
    masks = {op.get_input_element_type(3) for op in ir.get_ops() if op.get_type_name() == "ScaledDotProductAttention"}
    assert masks == {ov.Type.f32}  # additive, not boolean: the fused kernel's fast path


@pytest.mark.parametrize("variant", GROWN)
def test_the_cpu_plugin_fuses_each_attention_with_its_cache(variant):
    """Compiled by OpenVINO itself: no scatter, no concatenation of the cache, and each attention
    node reads the cache state directly (the fused kernel's extra inputs)."""
    compiled = ov.Core().compile_model(lowered(variant).ir, "CPU")
    runtime = compiled.get_runtime_model()
    attention = [op for op in runtime.get_ops() if op.get_rt_info()["layerType"].astype(str) == "ScaledDotProductAttention"]
    assert len(attention) == 2
    for op in attention:
        sources = {op.input(i).get_source_output().get_node().get_rt_info()["layerType"].astype(str)
                   for i in range(op.get_input_size())}
        assert "MemoryInput" in sources, sources
        # The new keys come straight from their rotation: the frontend's moves of the written values
        # (transpose, broadcast, transpose back) are skipped where they undo each other.
        assert op.input(1).get_source_output().get_node().get_rt_info()["layerType"].astype(str) == "RoPE"
    # The name that marks the position survives compilation as the port's reported name.
    assert [port.get_any_name() for port in compiled.inputs].count(CACHE_POSITION_INPUT) == 1


def test_a_call_off_the_conversation_is_refused_and_the_conversation_goes_on_unharmed():
    """A gap is refused (going back is allowed: llm/test_conversation_state.py)."""
    case = lowered("dynamic_prompt")
    ours = ours_of("dynamic_prompt", load(case.pte))
    eager = eager_of("dynamic_prompt", case.model)
    ours(torch.tensor([PROMPT]), 0)
    eager(torch.tensor([PROMPT]), 0)
    for position in (len(PROMPT) + 3, len(PROMPT) + 1):
        with pytest.raises(DelegateError, match="past the 7 positions of the conversation so far"):
            ours(torch.tensor([[4]]), position)
    # The refused calls wrote nothing: the same conversation continues as eager's, step by step.
    continued, _ = Conversation(eager).generate([21, 22], 10, start=len(PROMPT))
    got, _ = Conversation(ours).generate([21, 22], 10, start=len(PROMPT))
    assert got == continued
    # And a new conversation from position 0 is eager's.
    expected, _ = Conversation(eager_of("dynamic_prompt", case.model)).generate([11, 12, 13], 12)
    got, _ = Conversation(ours).generate([11, 12, 13], 12)
    assert got == expected


def test_the_static_form_is_kept_when_the_cache_is_written_another_way():
    """ExecuTorch's llama::update_cache, spelled out in ATen, writes the cache in another pattern:
    it stays static, and correct (ir_passes/test_buffer_variables.py covers its results)."""
    ir = lowered("custom_ops").ir
    assert all(v.get_info().data_shape.is_static for v in ir.get_variables())
    assert not [port for port in ir.inputs if CACHE_POSITION_INPUT in port.get_names()]


def test_a_new_conversation_after_a_long_one_equals_eager():
    """The second conversation is shorter than the first: its cache starts empty, not with the first's tail."""
    case = lowered("dynamic_prompt")
    ours = Conversation(method_step(load(case.pte)))
    ours.generate(list(range(1, 40)), 40)
    expected, _ = Conversation(eager_step(copy.deepcopy(case.model))).generate([7], 5)
    got, _ = ours.generate([7], 5)
    assert got == expected


def test_grow_caches_false_keeps_them_static_and_any_position_computes_like_eager():
    """OpenvinoPartitioner(grow_caches=False): the caches stay in OpenVINO, static, so a call may
    rewind (speculative decoding's use) and still computes what eager PyTorch does."""
    from executorch.exir import to_edge_transform_and_lower

    import executorch_openvino
    from lowering import blob_ir, delegate_calls
    from llm_models import et_llama, export_et_llama

    model = et_llama(True)
    edge = to_edge_transform_and_lower(export_et_llama(model),
                                       partitioner=[executorch_openvino.OpenvinoPartitioner(grow_caches=False)])
    graph_module = edge.exported_program().graph_module
    ir = blob_ir(getattr(graph_module, delegate_calls(graph_module.graph)[0].args[0].target).processed_bytes)
    assert ir.get_variables() and all(v.get_info().data_shape.is_static for v in ir.get_variables())
    ours, eager = method_step(load(edge.to_executorch().buffer)), eager_step(copy.deepcopy(model))
    for tokens, position in (([5, 6, 7, 8], 0), ([9], 4), ([3], 2), ([4, 1], 3)):  # the third call rewinds
        torch.testing.assert_close(ours(torch.tensor([tokens]), position), eager(torch.tensor([tokens]), position),
                                   rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("self_mask, cross_mask", [(True, False), (True, True), (False, False)],
                         ids=["unmasked_cross", "masked_cross", "unmasked_self"])
def test_only_a_masked_cache_written_at_the_position_grows_and_encoder_decoder_steps_equal_eager(self_mask,
                                                                                                  cross_mask):
    """A cross-attention cache, written at constant rows, stays static (grown, it would gain the
    encoder's rows again on every call); so does a cache read without a mask spanning it (no cut
    could keep its attention's rows). All four stay in OpenVINO state, and two utterances of steps,
    each from position 0 with other encoder states, equal eager PyTorch step by step."""
    from executorch.exir import to_edge_transform_and_lower

    import executorch_openvino
    from lowering import blob_ir, delegate_calls

    model = CrossAttendingDecoder(self_mask, cross_mask).eval()
    example = (torch.tensor([[1]]), torch.randn(1, 6, 32), torch.tensor([0]))
    with torch.no_grad():
        exported = torch.export.export(copy.deepcopy(model), example)
    edge = to_edge_transform_and_lower(exported, partitioner=[executorch_openvino.OpenvinoPartitioner()])
    program = edge.exported_program()
    assert program.graph_signature.buffers_to_mutate == {}
    graph_module = program.graph_module
    ir = blob_ir(getattr(graph_module, delegate_calls(graph_module.graph)[0].args[0].target).processed_bytes)
    # (The cross caches are state initializers, computed once per utterance: ir_passes/encoder_caches.py.)
    grows = {name: shape[2].is_dynamic for name, shape in _variables(ir).items()
             if name in ("self_k", "self_v", "cross_k", "cross_v")}
    assert grows == {"self_k": self_mask, "self_v": self_mask, "cross_k": False, "cross_v": False}
    assert bool([port for port in ir.inputs if CACHE_POSITION_INPUT in port.get_names()]) == self_mask

    torch.manual_seed(1)
    calls = []
    for utterance in range(2):
        states = torch.randn(1, 6, 32)
        for position in range(8):
            token = (7 * utterance + 5 * position) % 37 + 2  # teacher-forced: other tokens at every step
            calls.append((torch.tensor([[token]]), states, torch.tensor([position])))
    _assert_each_step_equals_eager(load(edge.to_executorch().buffer), model, calls)


def _assert_each_step_equals_eager(ours, model, calls):
    """Each call, in turn on one loaded method, equals eager's, and differs from the one before."""
    previous = None
    for inputs in calls:
        with torch.no_grad():
            expected = model(*inputs)
        got = ours.execute(list(inputs))[0]
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
        assert previous is None or not torch.allclose(got, previous), "the steps do not differ"
        previous = got


class _RingCachedAttention(torch.nn.Module):
    """One attention layer whose cache is a ring of `rows` rows written at position % rows (in
    plain ATen, in the layout the rewrite grows: [B, H, rows, D]), read with a mask of the rows
    holding the last `window` positions, as optimum-executorch's sliding-window caches are; with
    ring=False, the same written at the position (a plain static cache)."""

    def __init__(self, ring: bool, rows=8, window=4, width=16, heads=2, vocab=40):
        super().__init__()
        torch.manual_seed(0)
        self.ring, self.rows, self.window, self.heads = ring, rows, window, heads
        self.embed = torch.nn.Embedding(vocab, width)
        self.projections = torch.nn.ModuleDict({name: torch.nn.Linear(width, width) for name in "qkvo"})
        self.head = torch.nn.Linear(width, vocab)
        self.register_buffer("k_cache", torch.zeros(1, heads, rows, width // heads), persistent=False)
        self.register_buffer("v_cache", torch.zeros(1, heads, rows, width // heads), persistent=False)
        self.register_buffer("held", torch.full((rows,), -1), persistent=False)  # the position each row holds

    def _split(self, name, x):
        return self.projections[name](x).unflatten(-1, (self.heads, -1)).transpose(1, 2)

    def forward(self, tokens, position):
        x = self.embed(tokens)
        rows = position % self.rows if self.ring else position
        self.k_cache.index_copy_(2, rows, self._split("k", x))
        self.v_cache.index_copy_(2, rows, self._split("v", x))
        self.held.index_copy_(0, rows, position)
        distance = position.view(-1, 1) - self.held.view(1, -1)
        mask = (self.held >= 0) & (distance >= 0) & (distance < self.window)
        attended = torch.nn.functional.scaled_dot_product_attention(self._split("q", x), self.k_cache, self.v_cache,
                                                                    attn_mask=mask[None, None])
        return self.head(x + self.projections["o"](attended.transpose(1, 2).flatten(2)))


@pytest.mark.parametrize("ring", [True, False], ids=["ring", "plain"])
def test_a_ring_buffer_cache_stays_static_and_runs_past_its_length_as_eager(ring):
    """Written at position % 8, the ring's rows are the position below 8, and the frontend's wrap
    of index_put's rows, (i + 8) mod 8, makes a plain cache's rows equal them past it too: read
    before that wrap at a probe past the cache, only the plain cache's rows are its position. Grown,
    the ring would refuse every position from 8 (the bound a grown cache gets); static, it equals
    eager three times round. The same cache written at the position grows."""
    from executorch.exir import to_edge_transform_and_lower

    import executorch_openvino
    from lowering import blob_ir, delegate_calls

    model = _RingCachedAttention(ring).eval()
    with torch.no_grad():
        exported = torch.export.export(copy.deepcopy(model), (torch.tensor([[1]]), torch.tensor([0])))
    edge = to_edge_transform_and_lower(exported, partitioner=[executorch_openvino.OpenvinoPartitioner()])
    program = edge.exported_program()
    assert program.graph_signature.buffers_to_mutate == {}
    graph_module = program.graph_module
    ir = blob_ir(getattr(graph_module, delegate_calls(graph_module.graph)[0].args[0].target).processed_bytes)
    grows = {name: shape.is_dynamic for name, shape in _variables(ir).items()}
    assert grows == {"k_cache": not ring, "v_cache": not ring, "held": False,
                     **({} if ring else {LENGTH_VARIABLE: False})}
    assert bool([port for port in ir.inputs if CACHE_POSITION_INPUT in port.get_names()]) == (not ring)

    # Teacher-forced; a plain cache holds 8 positions only, as in eager.
    calls = [(torch.tensor([[(5 * position) % 37 + 2]]), torch.tensor([position])) for position in range(24 if ring else 8)]
    _assert_each_step_equals_eager(load(edge.to_executorch().buffer), model, calls)
