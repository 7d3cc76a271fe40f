"""attention=paged for a Hugging Face program (llm/hf_export.py): its mask is computed inside the model
from the call's positions, so the rewrite keeps that mask as an output once sample positions have
shown it causal at load, and the delegate checks it after every call. Every call equals transformers
itself; positions that do not follow on are refused and change nothing; a mask that is not causal (a
sliding window) is found at load, and the program runs as exported."""

from __future__ import annotations

import copy
import functools
import re

import pytest
import torch

import executorch_openvino
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime
from executorch_openvino.llm.hf_export import export_causal_lm, static_cache_decoder
from executorch_openvino.runtime.errors import DelegateError
from llm_lowering import PROMPT, attentions, load, lowered
from llm_models import CONTEXT, Conversation, hf_llama, hf_method_step, hf_step


@functools.lru_cache(maxsize=None)
def _plain_llama():
    return hf_llama()  # the same seed, so the same weights as the exported one


def _transformers(sequence):
    """LlamaForCausalLM on the whole sequence, without a cache: what every call must equal."""
    with torch.no_grad():
        return _plain_llama()(input_ids=torch.tensor([sequence]), use_cache=False).logits[0]


def test_a_hugging_face_program_runs_paged_and_equals_transformers(paged):
    """The prompt, 40 greedy steps across a block boundary, then going back to 20 and to 3 with
    other tokens: each call's logits are transformers' for the sequence so far."""
    method = load(lowered("hf_static_cache").pte)
    assert "paged" in attentions()
    ours = hf_method_step(method)
    generated, calls = Conversation(ours).generate(PROMPT, 40)
    sequence = list(PROMPT) + generated
    torch.testing.assert_close(calls[0][0], _transformers(PROMPT), rtol=1e-4, atol=1e-5)
    for step, logits in enumerate(calls[1:]):
        expected = _transformers(sequence[:len(PROMPT) + step + 1])[-1:]
        torch.testing.assert_close(logits[0], expected, rtol=1e-4, atol=1e-5, msg=f"step {step}")
    assert len(set(generated)) > 1
    for back, tokens in ((20, [1]), (3, [9, 8, 7])):
        sequence = sequence[:back] + tokens
        got = ours(torch.tensor([tokens]), back)[0]
        torch.testing.assert_close(got, _transformers(sequence)[back:], rtol=1e-4, atol=1e-5, msg=f"back to {back}")


def test_positions_that_do_not_follow_on_are_refused_and_change_nothing(paged):
    """A call whose positions skip one computes a mask that is not causal for paged attention: the
    call is refused naming where, and the conversation goes on from where it was."""
    method = load(lowered("hf_static_cache").pte)
    ours = hf_method_step(method)
    ours(torch.tensor([PROMPT]), 0)
    with pytest.raises(DelegateError, match="not causal at row 1"):
        method.execute([torch.tensor([[1, 2]]), torch.tensor([len(PROMPT), len(PROMPT) + 2])])
    sequence = PROMPT + [11]
    got = ours(torch.tensor([[11]]), len(PROMPT))[0]
    torch.testing.assert_close(got, _transformers(sequence)[-1:], rtol=1e-4, atol=1e-5)


def test_a_sliding_window_mask_is_found_at_load_and_the_program_runs_as_exported(paged, monkeypatch, capfd):
    """transformers' Llama with its mask narrowed to a window of 8 (and_mask_function, as Gemma's
    and Mistral's sliding layers do): the mask is causal at the start of a conversation and not past
    the window, which the load's sample positions find; the program runs grown and equals eager."""
    from transformers import masking_utils
    from transformers.models.llama import modeling_llama

    windowed = functools.partial(modeling_llama.create_causal_mask,
                                 and_mask_function=masking_utils.sliding_window_overlay(8))
    monkeypatch.setattr(modeling_llama, "create_causal_mask", windowed)
    model = hf_llama()
    edge = to_edge_transform_and_lower(export_causal_lm(copy.deepcopy(model), CONTEXT),
                                       partitioner=[executorch_openvino.OpenvinoPartitioner()])
    capfd.readouterr()
    method = Runtime.get().load_program(edge.to_executorch().buffer).load_method("forward")
    # The log line says what the load's sample found (a position hidden that a causal mask attends),
    # not what kind of attention it guesses that to be.
    logged = capfd.readouterr().err
    assert re.search(r"the model runs as exported: the attention mask is not causal for \d+ tokens at position \d+, "
                     r"row \d+ \(position \d+\): column \d+ is hidden, which a causal mask attends", logged), logged
    assert attentions() == ["grown"] * len(attentions())
    ours, eager = hf_method_step(method), hf_step(static_cache_decoder(model, CONTEXT))
    tokens = torch.arange(1, 31).reshape(1, -1)
    torch.testing.assert_close(ours(tokens, 0), eager(tokens, 0), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(ours(tokens[:, :1], 30), eager(tokens[:, :1], 30), rtol=1e-4, atol=1e-5)


def test_a_going_back_call_refused_after_it_ran_leaves_the_positions_before_it(paged):
    """Mid-conversation (12 positions held), a call going back to 5 whose positions skip one: it ran,
    writing from 5 on, before its computed mask was found not causal, so it is refused and the
    conversation holds the 5 positions before it: a call at 6 is refused naming 5, and the
    conversation continues from 5 as transformers computes it. Guards against a refused call that went
    back keeping the old length (CompiledMethod::read_length leaving length_ at 12 after a failed paged
    call): tried, the call at 6 is accepted (the earlier test's refusal, at the end of the conversation,
    passes it)."""
    method = load(lowered("hf_static_cache").pte)
    ours = hf_method_step(method)
    sequence = PROMPT + [30, 31, 32, 33, 34]
    ours(torch.tensor([sequence]), 0)
    with pytest.raises(DelegateError, match="not causal at row 1"):
        method.execute([torch.tensor([[1, 2]]), torch.tensor([5, 7])])
    with pytest.raises(DelegateError, match="starts at position 6, past the 5 positions"):
        ours(torch.tensor([[9]]), 6)
    sequence = sequence[:5]
    for tokens in ([9, 10], [11], [12]):
        got = ours(torch.tensor([tokens]), len(sequence))[0]
        sequence += tokens
        torch.testing.assert_close(got, _transformers(sequence)[-len(tokens):], rtol=1e-4, atol=1e-5,
                                   msg=f"{tokens} after the refusal")
