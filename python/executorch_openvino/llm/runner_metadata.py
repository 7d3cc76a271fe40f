"""The metadata ExecuTorch's LLM runner reads from a program, for programs exported by hand.

ExecuTorch's TextLLMRunner (C++ and Python, executorch.extension.llm.runner) reads a text model's
limits and special tokens from constant methods of the program (get_max_seq_len, get_eos_ids, ...),
which ExecuTorch's own LLM export writes. A program made with our export path (export_causal_lm,
or torch.export of a model with a cache) carries them when they are passed as constant_methods:

    to_edge_transform_and_lower(exported, partitioner=[OpenvinoPartitioner()],
                                constant_methods=text_runner_metadata(max_seq_len=256, ...))
"""

from __future__ import annotations

from typing import Dict, Iterable, Optional, Union


def text_runner_metadata(
    *,
    max_seq_len: int,
    n_layers: int,
    vocab_size: int,
    bos_id: int,
    eos_ids: Iterable[int],
    max_context_len: Optional[int] = None,
    dynamic_prompt: bool = True,
    custom_sdpa: bool = False,
) -> Dict[str, Union[int, bool, list]]:
    """The constant methods for a model whose forward takes (tokens [1, n], start position) and
    keeps its cache: `max_seq_len` tokens per call at most, `max_context_len` (default
    `max_seq_len`) positions of cache; `dynamic_prompt` when one call takes a whole prompt (else
    the runner feeds it one token per call); `custom_sdpa` records that the model was exported with
    ExecuTorch's llama::custom_sdpa, as ExecuTorch's export does."""
    eos = [int(token) for token in eos_ids]
    if not eos:
        raise ValueError("eos_ids is empty: the runner needs at least one end-of-sequence token")
    if max_seq_len < 1 or (max_context_len is not None and max_context_len < max_seq_len):
        raise ValueError(f"max_seq_len {max_seq_len} must be >= 1 and <= max_context_len {max_context_len}")
    return {
        "get_max_seq_len": int(max_seq_len),
        "get_max_context_len": int(max_context_len or max_seq_len),
        "get_n_layers": int(n_layers),
        "get_vocab_size": int(vocab_size),
        "get_bos_id": int(bos_id),
        "get_eos_ids": eos,
        "use_kv_cache": True,
        "use_sdpa_with_kv_cache": bool(custom_sdpa),
        "enable_dynamic_shape": bool(dynamic_prompt),
    }
