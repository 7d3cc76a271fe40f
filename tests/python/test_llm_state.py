"""KV caches kept inside OpenVINO as state (python/executorch_openvino/llm/stateful.py), on
ExecuTorch's own Llama with random weights: the caches are consumed by the delegate (nothing is
passed in, copied out or back per step), a prompt of any length is one call, greedy ids equal
eager PyTorch over 64 steps, position 0 starts a new conversation, and two loaded programs hold
two conversations at once."""

from __future__ import annotations

import copy
import functools
from collections import Counter

import numpy as np
import openvino as ov
import pytest
import torch

import executorch_openvino
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime
from executorch_openvino.blob import parse_blob
from llm_models import Conversation, eager_step, et_llama, export_et_llama, method_step
from lowering import delegate_calls, outside_ops

PROMPT = [5, 17, 99, 3, 42, 7, 64]
STEPS = 64


@functools.lru_cache(maxsize=None)
def lowered(dynamic: bool = True, stateful: bool = True):
    """(eager model, edge program after lowering, partitioner, .pte) of the tiny Llama."""
    model = et_llama(dynamic)
    partitioner = executorch_openvino.OpenvinoPartitioner(stateful=stateful)
    edge = to_edge_transform_and_lower(export_et_llama(model, dynamic), partitioner=[partitioner])
    return model, edge, partitioner, edge.to_executorch().buffer


def load(pte):
    # Program.load_method hands back the same method for the same program: a second conversation
    # needs a program of its own.
    return Runtime.get().load_program(pte).load_method("forward")


def ir_of(edge) -> ov.Model:
    (call,) = delegate_calls(edge.exported_program().graph_module.graph)
    blob = parse_blob(getattr(edge.exported_program().graph_module, call.args[0].target).processed_bytes)
    return ov.Core().read_model(bytes(blob.ir_xml).decode(), ov.Tensor(np.frombuffer(bytes(blob.ir_weights), np.uint8).copy()))


@pytest.mark.parametrize("dynamic", [True, False], ids=["dynamic_prompt", "one_token"])
def test_the_kv_caches_are_consumed_and_live_in_openvino_state(dynamic):
    model, edge, partitioner, _ = lowered(dynamic)
    caches = {name for name, _ in model.named_buffers() if name.endswith(("k_cache", "v_cache"))}
    assert len(caches) == 4
    assert set(partitioner.consumed_buffers) == caches
    program = edge.exported_program()
    # ExecuTorch keeps no mutation of its own: nothing is copied back after a call ...
    assert program.graph_signature.buffers_to_mutate == {}
    assert not caches & set(program.graph_signature.buffers)
    # ... and the one delegate call takes no cache: the tokens, and (dynamic) the pieces of the
    # position ExecuTorch computes (mask and rotary rows, the sequence length).
    (call,) = delegate_calls(program.graph_module.graph)
    shapes = [tuple(a.meta["val"].shape) for a in call.args[1:] if isinstance(a.meta.get("val"), torch.Tensor)]
    cache_shape = tuple(dict(model.named_buffers())[next(iter(caches))].shape)
    assert cache_shape not in shapes, shapes
    ir = ir_of(edge)
    types = Counter(op.get_type_name() for op in ir.get_ops())
    assert types["ReadValue"] == types["Assign"] == 4, types
    assert sorted(v.get_info().variable_id for v in ir.get_variables()) == sorted(caches)
    if not dynamic:
        assert outside_ops(program.graph_module.graph) == []


def test_a_prompt_of_any_length_is_one_call():
    model, _, _, pte = lowered(True)
    method = load(pte)
    eager = copy.deepcopy(model)
    for prompt in ([3], PROMPT, list(range(1, 40))):
        expected = eager_step(copy.deepcopy(eager))(torch.tensor([prompt]), 0)
        got = method.execute([torch.tensor([prompt]), torch.tensor([0])])[0]
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dynamic", [True, False], ids=["dynamic_prompt", "one_token"])
def test_greedy_ids_equal_eager_over_64_steps(dynamic):
    model, _, _, pte = lowered(dynamic)
    expected, expected_logits = Conversation(eager_step(copy.deepcopy(model))).generate(PROMPT, STEPS, one_call_prefill=dynamic)
    got, got_logits = Conversation(method_step(load(pte))).generate(PROMPT, STEPS, one_call_prefill=dynamic)
    assert got == expected
    assert max(float((a - b).abs().max()) for a, b in zip(got_logits, expected_logits)) < 1e-4


def test_position_zero_starts_a_new_conversation():
    model, _, _, pte = lowered(True)
    method = load(pte)
    Conversation(method_step(method)).generate(PROMPT, 20)  # a first conversation fills the cache
    second = [11, 12, 13]
    expected, _ = Conversation(eager_step(copy.deepcopy(model))).generate(second, 30)
    got, _ = Conversation(method_step(method)).generate(second, 30)
    assert got == expected
    # And a conversation may go on from where it stopped (the runner's multi-turn prefill).
    turn, _ = Conversation(method_step(method)).generate([9, 8], 10, start=len(second) + 30)
    eager = copy.deepcopy(model)
    Conversation(eager_step(eager)).generate(second, 30)
    expected_turn, _ = Conversation(eager_step(eager)).generate([9, 8], 10, start=len(second) + 30)
    assert turn == expected_turn


def test_two_conversations_in_two_programs_at_once():
    model, _, _, pte = lowered(True)
    ours = [load(pte), load(pte)]
    eager = [copy.deepcopy(model), copy.deepcopy(model)]
    prompts = [PROMPT, [100, 1, 2]]
    positions = [0, 0]
    tokens = [torch.tensor([p]) for p in prompts]
    for _ in range(25):  # interleaved, step by step
        for i in range(2):
            expected = eager_step(eager[i])(tokens[i], positions[i])
            got = ours[i].execute([tokens[i], torch.tensor([positions[i]])])[0]
            torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
            positions[i] += tokens[i].shape[1]
            tokens[i] = expected[0].argmax(-1).view(1, 1)
    compiled = [m for m in executorch_openvino.compiled_models() if int(m["users"]) >= 2]
    assert compiled, "the two programs should share one compiled model (each with its own state)"


def test_stateful_false_leaves_the_caches_to_executorch():
    model, edge, partitioner, pte = lowered(True, stateful=False)
    assert partitioner.consumed_buffers == {}
    assert len(edge.exported_program().graph_signature.buffers_to_mutate) == 4
    expected, _ = Conversation(eager_step(copy.deepcopy(model))).generate(PROMPT, 10)
    got, _ = Conversation(method_step(load(pte))).generate(PROMPT, 10)
    assert got == expected
