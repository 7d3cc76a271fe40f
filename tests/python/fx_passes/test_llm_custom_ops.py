"""ExecuTorch's LLM custom ops (llama::update_cache, llama::update_cache_with_indices,
llama::custom_sdpa) spelled out as ATen (fx_passes/llm_custom_ops.py), against ExecuTorch's own
kernels: in the arrangement optimum-executorch's custom KV cache exports (custom_sdpa reads the
cache update_cache has just written, so the spelled-out update must carry the shape metadata the
attention's spell-out reads), in the ring-buffer form its sliding-window layers use, and each form
of custom_sdpa the kernel computes."""

from __future__ import annotations

import pytest
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


# ---------------------------------------------------------------------------------------------
# The ring-buffer form (ExecuTorch's CustomRingKVCache, which optimum-executorch's custom caches
# give a sliding-window layer): llama::update_cache_with_indices writes at position modulo the
# ring's length, and llama::custom_sdpa attends over the whole ring with an additive mask of the
# rows holding the last WINDOW positions (is_causal False). Eager is ExecuTorch's own kernels.

WINDOW, QUERY_HEADS = 4, 4  # a ring of 2 * WINDOW rows; grouped-query: 4 query heads over 2 cache heads


class RingAttention(torch.nn.Module):
    def __init__(self) -> None:
        from executorch.examples.models.llama.source_transformation.custom_kv_cache import CustomRingKVCache

        super().__init__()
        self.cache = CustomRingKVCache(1, WINDOW, HEADS, HEAD_DIM)

    def forward(self, q, k, v, positions):
        # q [1, S, QUERY_HEADS, D]; k, v [1, S, HEADS, D]; the cache takes (and returns) [B, H, S, D].
        keys, values = self.cache.update(positions, k.transpose(1, 2), v.transpose(1, 2))
        mask = self.cache.create_causal_mask_for_ring_buffer(positions[0].item(), q.shape[1])
        return torch.ops.llama.custom_sdpa(q, keys.transpose(1, 2), values.transpose(1, 2), 0, mask, 0.0, False,
                                           0.3)


def _ring_step(seed: int, length: int):
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(1, length, heads, HEAD_DIM, generator=generator) for heads in (QUERY_HEADS, HEADS, HEADS)]


def test_a_ring_buffer_cache_is_delegated_with_its_state_kept_static_and_equals_eager_past_the_ring():
    from lowering import blob_ir

    eager = RingAttention()
    length = torch.export.Dim("length", max=WINDOW - 1)
    exported = torch.export.export(RingAttention(), (*_ring_step(0, 2), torch.arange(2)),
                                   dynamic_shapes=({1: length}, {1: length}, {1: length}, {0: length}))
    lowered = to_edge_transform_and_lower(exported, partitioner=[executorch_openvino.OpenvinoPartitioner()])
    program = lowered.exported_program()
    graph = program.graph_module.graph
    assert len(delegate_calls(graph)) == 1
    # Only the position read as an int stays with ExecuTorch (a delegate returns tensors).
    assert set(outside_ops(graph)) <= {"aten.select_copy.int", "aten._local_scalar_dense.default", "ge",
                                       "aten._assert_scalar.default", "aten.sym_size.int"}, outside_ops(graph)
    assert program.graph_signature.buffers_to_mutate == {}, "a cache left to ExecuTorch"
    ir = blob_ir(getattr(program.graph_module, delegate_calls(graph)[0].args[0].target).processed_bytes)
    shapes = {v.get_info().variable_id: v.get_info().data_shape for v in ir.get_variables()}
    # The ring stays the ring: grown (ir_passes/grown_cache.py), positions past it would be refused.
    assert all(shape.is_static for shape in shapes.values()), shapes
    assert {shape[1].get_length() for name, shape in shapes.items() if "cache_positions" not in name} == {2 * WINDOW}
    method = load_forward(lowered.to_executorch().buffer)
    position, previous = 0, None
    for step, size in enumerate([3, 1, 2, 1, 1, 3] + [1] * 14):  # 26 positions: three times round the ring
        q, k, v = _ring_step(step + 1, size)
        positions = torch.arange(position, position + size)
        expected = eager(q, k, v, positions)
        got = method.execute([q, k, v, positions])
        assert_matches(got, [expected])
        assert previous is None or got[0].shape != previous.shape or not torch.allclose(got[0], previous)
        previous, position = got[0], position + size


class IndexedUpdate(torch.nn.Module):
    """llama::update_cache_with_indices alone, a batch of two with rows of its own each."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("cache", torch.zeros(2, CONTEXT, HEADS, HEAD_DIM))

    def forward(self, value, rows):
        torch.ops.llama.update_cache_with_indices(value, self.cache, 0, rows)
        return self.cache * 1.0


def test_update_cache_with_indices_writes_each_batchs_own_rows_as_the_kernel_does():
    eager = IndexedUpdate()
    value = torch.randn(2, 3, HEADS, HEAD_DIM)
    exported = torch.export.export(IndexedUpdate(), (value, torch.tensor([[0, 1, 2], [3, 4, 5]])))
    lowered = to_edge_transform_and_lower(exported, partitioner=[executorch_openvino.OpenvinoPartitioner()])
    assert outside_ops(lowered.exported_program().graph_module.graph) == []
    method = load_forward(lowered.to_executorch().buffer)
    generator = torch.Generator().manual_seed(3)
    # Out of order, the batches' rows apart, then rows rewritten: each call keeps the earlier ones.
    for rows in ([[9, 2, 5], [0, 15, 7]], [[15, 14, 13], [1, 2, 3]], [[2, 9, 0], [7, 8, 15]]):
        value = torch.randn(2, 3, HEADS, HEAD_DIM, generator=generator)
        rows = torch.tensor(rows)
        assert_matches(method.execute([value, rows]), [eager(value, rows)], rel_tol=0, abs_tol=0)


class CacheAttention(torch.nn.Module):
    """llama::custom_sdpa over a cache (an input here), causal or not, with grouped-query heads."""

    def __init__(self, causal: bool) -> None:
        super().__init__()
        self.causal = causal

    def forward(self, q, k_cache, v_cache, position):
        start = position.item()
        torch._check_is_size(start)
        torch._check(start <= CONTEXT - STEP)
        return torch.ops.llama.custom_sdpa(q, k_cache, v_cache, start, None, 0.0, self.causal)


@pytest.mark.parametrize("causal", [True, False], ids=["causal", "not_causal"])
def test_custom_sdpa_without_a_mask_attends_over_the_positions_written_so_far(causal):
    """The kernel attends over the first start + S cache rows (causally or not), never the rest:
    the rows past them hold values that would change the result if read."""
    q = torch.randn(1, STEP, QUERY_HEADS, HEAD_DIM)
    k_cache, v_cache = torch.randn(2, 1, CONTEXT, HEADS, HEAD_DIM).unbind(0)
    model = CacheAttention(causal)
    exported = torch.export.export(model, (q, k_cache, v_cache, torch.tensor(0)))
    lowered = to_edge_transform_and_lower(exported, partitioner=[executorch_openvino.OpenvinoPartitioner()])
    assert "llama.custom_sdpa.default" not in outside_ops(lowered.exported_program().graph_module.graph)
    method = load_forward(lowered.to_executorch().buffer)
    for start in (0, 3, CONTEXT - STEP):
        position = torch.tensor(start)
        assert_matches(method.execute([q, k_cache, v_cache, position]), [model(q, k_cache, v_cache, position)])
