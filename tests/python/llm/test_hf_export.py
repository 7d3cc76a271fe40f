"""A transformers causal LM exported with llm/hf_export.py and lowered to the delegate computes what
plain transformers computes: LlamaForCausalLM called on the whole sequence so far, without any cache
(not the project's own static-cache wrapper, which the export shares), step by step over 32 greedy
steps of the program's own choices."""

from __future__ import annotations

import torch

from llm_lowering import PROMPT, load, lowered
from llm_models import Conversation, hf_llama, hf_method_step

STEPS = 32


def test_the_lowered_hf_llama_equals_transformers_without_a_cache_over_32_steps():
    ours = hf_method_step(load(lowered("hf_static_cache").pte))
    plain = hf_llama()  # the same seed, so the same weights as the exported one
    generated, calls = Conversation(ours).generate(PROMPT, STEPS)
    for step, logits in enumerate(calls[:STEPS]):
        with torch.no_grad():
            expected = plain(input_ids=torch.tensor([list(PROMPT) + generated[:step]]), use_cache=False).logits
        # The prompt's every position on the first call, then the new token's.
        got = logits[0] if step == 0 else logits[0, -1:]
        want = expected[0] if step == 0 else expected[0, -1:]
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5, msg=f"step {step}")
    assert len(set(generated)) > 1  # not one token repeated: the steps really differ
