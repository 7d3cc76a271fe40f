"""A transformers causal LM exported with llm/hf_export.py and lowered to the delegate computes what
plain transformers computes: LlamaForCausalLM called on the whole sequence so far, without any cache
(not the project's own static-cache wrapper, which the export shares), step by step over 32 greedy
steps of the program's own choices."""

from __future__ import annotations

import torch

from llm_lowering import PROMPT, load, lowered
from llm_models import hf_llama, hf_method_step, last_token_logits

STEPS = 32


def test_the_lowered_hf_llama_equals_transformers_without_a_cache_over_32_steps():
    ours = hf_method_step(load(lowered("hf_static_cache").pte))
    plain = hf_llama()  # the same seed, so the same weights as the exported one
    sequence = list(PROMPT)
    logits = ours(torch.tensor([sequence]), 0)
    for step in range(STEPS):
        with torch.no_grad():
            expected = plain(input_ids=torch.tensor([sequence]), use_cache=False).logits
        # The prompt's every position on the first call, then the new token's.
        got = logits[0] if step == 0 else logits[0, -1:]
        want = expected[0] if step == 0 else expected[0, -1:]
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5, msg=f"step {step}")
        token = int(last_token_logits(logits).argmax())
        sequence.append(token)
        logits = ours(torch.tensor([[token]]), len(sequence) - 1)
    assert len(set(sequence[len(PROMPT):])) > 1  # not one token repeated: the steps really differ
