"""Small decoder-only language models for the LLM tests, built from configs with random weights
(no downloads): ExecuTorch's own Llama (executorch.examples.models.llama) with its KV cache, and
the exports of it the tests lower."""

from __future__ import annotations

import copy
from typing import Sequence

import torch
from torch.export import Dim

CONTEXT = 96  # long enough for a prompt and 64 generated tokens


def et_llama(dynamic: bool = True, *, layers: int = 2, seed: int = 0, **overrides):
    """ExecuTorch's Llama with a KV cache (static buffers of CONTEXT positions): `dynamic` takes
    prompts of any length in one call (ExecuTorch's enable_dynamic_shape), otherwise one token."""
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs

    args = dict(dim=64, n_layers=layers, n_heads=4, n_kv_heads=2, vocab_size=128, hidden_dim=128,
                max_seq_len=CONTEXT, max_context_len=CONTEXT, use_kv_cache=True,
                enable_dynamic_shape=dynamic, max_batch_size=1)
    args.update(overrides)
    torch.manual_seed(seed)
    return construct_transformer(ModelArgs(**args)).eval()


def et_llama_draft(of: int = 2, *, layers: int = 1, seed: int = 0, **overrides):
    """The first `layers` layers of et_llama(layers=of, seed=seed), with its embedding and output
    layer: a draft program whose guesses of the larger one's tokens sometimes land."""
    draft = et_llama(True, layers=layers, seed=seed, **overrides)
    own = draft.state_dict().keys()
    whole = et_llama(True, layers=of, seed=seed, **overrides).state_dict()
    draft.load_state_dict({name: value for name, value in whole.items() if name in own})
    return draft


def with_custom_ops(model):
    """The model with ExecuTorch's LLM custom ops (llama::update_cache and llama::custom_sdpa), as
    its export for XNNPACK applies them (its source transformations)."""
    from executorch.examples.models.llama.source_transformation.custom_kv_cache import (
        replace_kv_cache_with_custom_kv_cache,
    )
    from executorch.examples.models.llama.source_transformation.sdpa import replace_sdpa_with_custom_op

    return replace_sdpa_with_custom_op(replace_kv_cache_with_custom_kv_cache(copy.deepcopy(model)))


def export_et_llama(model, dynamic: bool = True, context: int = CONTEXT) -> torch.export.ExportedProgram:
    """`model` exported as ExecuTorch's export_llm does: tokens of 1 to context - 1, and the start position."""
    tokens = torch.zeros(1, 4 if dynamic else 1, dtype=torch.long)
    shapes = ({1: Dim("seq", min=1, max=context - 1)}, {"input_pos": None}) if dynamic else None
    with torch.no_grad():
        return torch.export.export(copy.deepcopy(model), (tokens, {"input_pos": torch.tensor([0])}),
                                   dynamic_shapes=shapes, strict=False)


class Conversation:
    """Greedy generation (executorch_openvino.generation.greedy) through any `step(tokens, position)
    -> logits` of torch tensors, every call's logits kept."""

    def __init__(self, step) -> None:
        self.step = step

    def generate(self, prompt: Sequence[int], new_tokens: int, start: int = 0, one_call_prefill: bool = True):
        """(generated ids, the logits of every call: the prompt's, then each generated token's). Every
        generated token is fed, so a next turn starts at start + len(prompt) + new_tokens."""
        from executorch_openvino.generation import greedy

        calls = []

        def recorded(tokens, position):
            calls.append(self.step(torch.tensor([tokens]), position))
            return calls[-1]

        # One token more than asked for is chosen, so that the last one asked for is fed.
        chosen = greedy(recorded, prompt, new_tokens + 1, start=start, call_tokens=None if one_call_prefill else 1)
        return chosen[:new_tokens], calls


def teacher_forced(step, prompt: Sequence[int], tokens: Sequence[int]):
    """The logits after the prompt and after each of `tokens` fed in turn (not the model's own
    choices), so two models can be compared step by step on the same inputs."""
    logits = [step(torch.tensor([list(prompt)]), 0)]
    position = len(prompt)
    for token in tokens:
        logits.append(step(torch.tensor([[token]]), position))
        position += 1
    return logits


def last_token_logits(logits: torch.Tensor) -> torch.Tensor:
    return logits[0] if logits.dim() == 2 else logits[0, -1]


def hf_llama(seed: int = 0, vocab_size: int = 128):
    """A transformers LlamaForCausalLM of the same size as et_llama, random weights."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, vocab_size=vocab_size, max_position_embeddings=CONTEXT)
    return LlamaForCausalLM(config).eval()


def hf_step(decoder):
    """A step function of transformers' convention: (input_ids, cache_position) -> logits [1, n, vocab]."""

    def step(tokens, position):
        with torch.no_grad():
            return decoder(input_ids=tokens, cache_position=torch.arange(position, position + tokens.shape[1]))

    return step


def hf_method_step(method):
    def step(tokens, position):
        return method.execute([tokens, torch.arange(position, position + tokens.shape[1])])[0]

    return step


def eager_step(model):
    """A step function of an eager model (it keeps its own KV cache, as the program does)."""

    def step(tokens, position):
        with torch.no_grad():
            return model(tokens, {"input_pos": torch.tensor([position])})

    return step


def method_step(method):
    def step(tokens, position):
        return method.execute([tokens, torch.tensor([position])])[0]

    return step
