"""KV caches kept inside OpenVINO as state (partition/mutated_buffers.py, ir_passes/buffer_variables.py), on
ExecuTorch's own Llama with random weights, exported three ways: with a dynamic prompt length
(enable_dynamic_shape), one token per call, and with ExecuTorch's LLM custom ops (llama::update_cache
and llama::custom_sdpa, fx_passes/llm_custom_ops.py); and a transformers LlamaForCausalLM with a static cache
(llm/hf_export.py). The caches are consumed by the delegate (nothing is
passed in, copied out or back per step), attention is OpenVINO's own operation, a prompt of any
length is one call, greedy ids equal eager PyTorch over 64 steps, position 0 starts a new
conversation, and two loaded programs hold two conversations at once."""

from __future__ import annotations

import copy
import threading
from collections import Counter

import pytest
import torch

import executorch_openvino
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime
from executorch_openvino.generation import greedy
from executorch_openvino.ir_passes.grown_cache import GROWN_VARIABLE_PREFIX, LENGTH_VARIABLE
from llm_models import Conversation, eager_step, et_llama, export_et_llama, method_step
from llm_lowering import PROMPT, STEPS, VARIANTS, eager_of, load, lowered, ours_of, steps
from lowering import compiled_model_counts

@pytest.mark.parametrize("variant", VARIANTS)
def test_the_kv_caches_are_consumed_and_live_in_openvino_state(variant):
    case = lowered(variant)
    caches = {name for name, _ in case.model.named_buffers() if name.endswith(("k_cache", "v_cache"))
              or "key_cache" in name or "value_cache" in name}
    assert len(caches) == 4
    assert set(case.partitioner.consumed_buffers) == caches
    # ExecuTorch keeps no mutation of its own: nothing is copied back after a call ...
    assert case.buffers_to_mutate == {}
    assert not caches & set(case.buffers)
    # ... and the one delegate call takes no cache: the tokens, and (dynamic) the pieces of the
    # position ExecuTorch computes (mask and rotary rows, the sequence length).
    assert case.delegate_calls == 1
    cache_shape = tuple(dict(case.model.named_buffers())[next(iter(caches))].shape)
    assert cache_shape not in case.delegate_arg_shapes, case.delegate_arg_shapes
    ir = case.ir
    types = Counter(op.get_type_name() for op in ir.get_ops())
    # (And, where they grow, the count of positions they hold: ir_passes/grown_cache.py.)
    grown = variant != "custom_ops"
    assert types["ReadValue"] == types["Assign"] == 4 + grown, types
    variables = {v.get_info().variable_id.removeprefix(GROWN_VARIABLE_PREFIX) for v in ir.get_variables()}
    assert variables == set(caches) | ({LENGTH_VARIABLE} if grown else set())
    # Attention is OpenVINO's own operation in every layer (not matrix products and a softmax).
    assert types["ScaledDotProductAttention"] == 2 and types["Softmax"] == 0, types
    if variant in ("one_token", "hf_static_cache"):
        assert case.outside_ops == []
    else:  # what ExecuTorch computes for the position: .item(), its checks, sizes and slices
        scalar_work = {"aten._local_scalar_dense.default", "aten._assert_scalar.default", "aten.sym_size.int",
                       "aten.scalar_tensor.default", "aten.slice_copy.Tensor", "aten.select_copy.int", "le", "lt", "ge",
                       "add"}
        assert set(case.outside_ops) <= scalar_work, case.outside_ops


@pytest.mark.parametrize("variant", ["dynamic_prompt", "custom_ops", "hf_static_cache"])
def test_a_prompt_of_any_length_is_one_call(variant):
    case = lowered(variant)
    ours = ours_of(variant, load(case.pte))
    for prompt in ([3], PROMPT, list(range(1, 40))):
        expected = eager_of(variant, case.model)(torch.tensor([prompt]), 0)
        torch.testing.assert_close(ours(torch.tensor([prompt]), 0), expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("variant", VARIANTS)
def test_greedy_ids_equal_eager_over_64_steps(variant):
    eager, ours = steps(variant, lowered(variant))
    one_call = variant != "one_token"
    expected, expected_logits = Conversation(eager).generate(PROMPT, STEPS, one_call_prefill=one_call)
    got, got_logits = Conversation(ours).generate(PROMPT, STEPS, one_call_prefill=one_call)
    assert got == expected
    assert max(float((a - b).abs().max()) for a, b in zip(got_logits, expected_logits)) < 1e-4


@pytest.mark.parametrize("variant", ["dynamic_prompt", "custom_ops", "hf_static_cache"])
def test_position_zero_starts_a_new_conversation(variant):
    case = lowered(variant)
    ours = Conversation(ours_of(variant, load(case.pte)))
    ours.generate(PROMPT, 20)  # a first conversation fills the cache
    second = [11, 12, 13]
    expected, _ = Conversation(eager_of(variant, case.model)).generate(second, 30)
    got, _ = ours.generate(second, 30)
    assert got == expected
    # And a conversation may go on from where it stopped (the runner's multi-turn prefill).
    turn, _ = ours.generate([9, 8], 10, start=len(second) + 30)
    eager = Conversation(eager_of(variant, case.model))
    eager.generate(second, 30)
    expected_turn, _ = eager.generate([9, 8], 10, start=len(second) + 30)
    assert turn == expected_turn


def _two_conversations_interleaved(model, methods, steps: int) -> None:
    """Two greedy conversations, one per method, each on a thread of its own taking turns: a call of
    each in turn (the prompt's, then a token's), every call against its own eager copy's (whose logits
    choose the tokens both are fed)."""
    turn = threading.Condition()
    state = {"next": 0, "failed": False}
    failures = []

    def checked(index, ours, eager):
        def step(tokens, position):
            with turn:
                if not turn.wait_for(lambda: state["next"] == index or state["failed"], timeout=600):
                    raise TimeoutError("the other conversation never handed over its turn")
                if state["failed"]:
                    raise RuntimeError("the other conversation failed")
                try:
                    tokens = torch.tensor([tokens])
                    expected = eager(tokens, position)
                    torch.testing.assert_close(ours(tokens, position), expected, rtol=1e-4, atol=1e-5)
                    return expected
                except BaseException:
                    state["failed"] = True
                    raise
                finally:
                    state["next"] = 1 - index
                    turn.notify_all()

        return step

    def run(index, method, prompt):
        try:
            greedy(checked(index, method_step(method), eager_step(copy.deepcopy(model))), prompt, steps)
        except BaseException as caught:  # noqa: BLE001  (raised in the test's thread below)
            with turn:
                state["failed"] = True
                turn.notify_all()
            failures.append(caught)

    threads = [threading.Thread(target=run, args=(index, method, prompt))
               for index, (method, prompt) in enumerate(zip(methods, (PROMPT, [100, 1, 2])))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]


def test_two_conversations_in_two_programs_at_once():
    model, pte = lowered().model, lowered().pte
    first = load(pte)
    before = compiled_model_counts()
    second = load(pte)
    after = compiled_model_counts()
    # The second program shares the first's compiled model, each with its own state.
    assert after["compiled_models_created"] == before["compiled_models_created"]
    assert after["compiled_models_reused"] == before["compiled_models_reused"] + 1
    _two_conversations_interleaved(model, [first, second], 25)


def test_two_conversations_in_two_methods_of_one_program_at_once():
    """Two methods lowered from the same export share one compiled model (one copy of the
    weights), and each method's cache is its own."""
    model = et_llama(True)
    edge = to_edge_transform_and_lower({"first": export_et_llama(model), "second": export_et_llama(model)},
                                       partitioner=[executorch_openvino.OpenvinoPartitioner()])
    program = Runtime.get().load_program(edge.to_executorch().buffer)
    before = compiled_model_counts()
    methods = [program.load_method("first"), program.load_method("second")]
    after = compiled_model_counts()
    # One IR: at most one model made (none when another test's is live), the other method reuses it.
    made = after["compiled_models_created"] - before["compiled_models_created"]
    assert made <= 1 and after["compiled_models_reused"] - before["compiled_models_reused"] == 2 - made
    _two_conversations_interleaved(model, methods, 20)


def test_stateful_false_leaves_the_caches_to_executorch():
    case = lowered(stateful=False)
    assert case.partitioner.consumed_buffers == {}
    assert len(case.buffers_to_mutate) == 4
    expected, _ = Conversation(eager_step(copy.deepcopy(case.model))).generate(PROMPT, 10)
    got, _ = Conversation(method_step(load(case.pte))).generate(PROMPT, 10)
    assert got == expected
