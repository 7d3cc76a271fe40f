"""Exporting a Hugging Face causal LM (transformers) with a static KV cache, for ExecuTorch.

transformers' own wrapper (transformers.integrations.executorch.TorchExportableModuleWithStaticCache)
registers the cache tensors as buffers, but its cache object hands the attention layers the same
tensors again, so torch.export (2.13, transformers 4.57) sees them a second time as constants: the
program then fails to decompose ("expected compiled_fn to be GraphModule": two inputs alias), and
the cache's update is not a buffer mutation. Here the cache's layers are pointed at the module's
own buffers at the start of every call, so each cache is one buffer whose mutation export records;
the delegate then keeps it inside OpenVINO as state (ir_passes/buffer_variables.py).

    exported = export_causal_lm(model, max_cache_len=256)           # prompts of 1..255 tokens
    program = to_edge_transform_and_lower(exported, partitioner=[OpenvinoPartitioner()])

The program's forward takes (input_ids [1, n], cache_position [n]) and returns logits [1, n, vocab],
as transformers' and optimum-executorch's exports do.
"""

from __future__ import annotations

from typing import Optional

import torch


def _static_cache_module():
    from transformers.integrations.executorch import TorchExportableModuleWithStaticCache

    class StaticCacheDecoder(TorchExportableModuleWithStaticCache):
        def forward(self, input_ids=None, inputs_embeds=None, cache_position=None):
            for index, layer in enumerate(self.static_cache.layers):
                layer.keys = getattr(self, f"key_cache_{index}")
                layer.values = getattr(self, f"value_cache_{index}")
            return super().forward(input_ids=input_ids, inputs_embeds=inputs_embeds, cache_position=cache_position)

    return StaticCacheDecoder


def static_cache_decoder(model, max_cache_len: int, batch_size: int = 1) -> torch.nn.Module:
    """`model` (a transformers causal LM in eval mode) wrapped with a static cache of
    `max_cache_len` positions; callable as (input_ids=..., cache_position=...) in eager too."""
    from transformers import GenerationConfig

    model.generation_config = GenerationConfig(
        use_cache=True, cache_implementation="static", max_length=max_cache_len,
        cache_config={"batch_size": batch_size, "max_cache_len": max_cache_len},
    )
    return _static_cache_module()(model, batch_size=batch_size, max_cache_len=max_cache_len)


def export_causal_lm(model, max_cache_len: int, *, dynamic_prompt: bool = True,
                     max_prompt_len: Optional[int] = None) -> torch.export.ExportedProgram:
    """The model with a static cache, exported: prompts of 1 .. max_prompt_len tokens (default
    max_cache_len - 1) in one call when `dynamic_prompt`, else one token per call."""
    decoder = static_cache_decoder(model, max_cache_len)
    length = 4 if dynamic_prompt else 1
    inputs = {"input_ids": torch.zeros(1, length, dtype=torch.long), "cache_position": torch.arange(length)}
    shapes = None
    if dynamic_prompt:
        tokens = torch.export.Dim("tokens", min=1, max=max_prompt_len or max_cache_len - 1)
        shapes = {"input_ids": {1: tokens}, "cache_position": {0: tokens}}
    with torch.no_grad():
        return torch.export.export(decoder, (), inputs, dynamic_shapes=shapes, strict=False)
