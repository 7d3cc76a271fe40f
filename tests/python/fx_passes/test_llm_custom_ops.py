"""ExecuTorch's LLM custom ops (llama::update_cache, llama::custom_sdpa) spelled out as ATen
(fx_passes/llm_custom_ops.py) in the arrangement optimum-executorch's custom KV cache exports:
custom_sdpa reads the cache update_cache has just written, so the spelled-out update must carry
the shape metadata the attention's spell-out reads."""

from __future__ import annotations

import torch
from executorch.exir import to_edge_transform_and_lower

import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401  registers the llama:: ops
import executorch_openvino
from lowering import assert_matches, delegate_calls, load_forward, outside_ops

CONTEXT, HEADS, HEAD_DIM, STEP = 16, 2, 8, 4


class CachedAttention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("k_cache", torch.zeros(1, CONTEXT, HEADS, HEAD_DIM))
        self.register_buffer("v_cache", torch.zeros(1, CONTEXT, HEADS, HEAD_DIM))

    def forward(self, q, k, v, position):
        start = position.item()
        torch._check_is_size(start)
        torch._check(start <= CONTEXT - STEP)
        torch.ops.llama.update_cache(k, self.k_cache, start)
        torch.ops.llama.update_cache(v, self.v_cache, start)
        return torch.ops.llama.custom_sdpa(q, self.k_cache, self.v_cache, start, None, 0.0, True)


def _step(seed: int):
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(1, STEP, HEADS, HEAD_DIM, generator=generator) for _ in range(3)]


def test_attention_over_the_cache_update_cache_wrote_is_delegated_and_equals_eager_over_a_conversation():
    eager = CachedAttention()
    exported = torch.export.export(CachedAttention(), (*_step(0), torch.tensor(0)))
    lowered = to_edge_transform_and_lower(exported, partitioner=[executorch_openvino.OpenvinoPartitioner()])
    graph = lowered.exported_program().graph_module.graph
    assert delegate_calls(graph), "nothing was delegated"
    assert "llama::custom_sdpa" not in " ".join(outside_ops(graph))
    method = load_forward(lowered.to_executorch().buffer)
    for step, start in enumerate((0, STEP, 2 * STEP)):  # each step attends to every earlier one
        q, k, v = _step(step + 1)
        expected = eager(q, k, v, torch.tensor(start))
        assert_matches(method.execute([q, k, v, torch.tensor(start)]), [expected])
