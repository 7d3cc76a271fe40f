"""Inputs used as indices are checked before OpenVINO computes with them (ir_passes/index_bounds.py, blob
section 8, src/delegate/execution/input_bounds.cpp): eager PyTorch raises IndexError for a token id past the
vocabulary or a position past a KV cache's context, while OpenVINO's Gather gives zeros for such an
index and a cache that grows with the conversation grows past its context, so the delegate refuses
the call with the reason, and a refused call changes nothing."""

from __future__ import annotations


import pytest
import torch
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime

import executorch_openvino
from executorch_openvino.container import delegate_blobs
from executorch_openvino.fx_graph import op_name
from executorch_openvino.runtime.errors import DelegateError
from llm_models import CONTEXT, et_llama, export_et_llama, method_step
from llm_lowering import PROMPT, eager_of, load, lowered, ours_of
from lowering import lower

VOCAB = 128  # llm_models.et_llama's


def _bounds_of(pte: bytes) -> tuple:
    (ours,) = delegate_blobs(pte)
    return ours.parsed.input_bounds


def _eager_refuses(call) -> bool:
    try:
        call()
    except (IndexError, RuntimeError):  # index_select and gather raise RuntimeError, the others IndexError
        return True
    return False


# Token ids at and beyond each edge of the vocabulary: which eager refuses is read from eager.
EDGE_IDS = (-VOCAB - 1, -VOCAB, -1, 0, 1, VOCAB - 1, VOCAB, VOCAB + 1000)


@pytest.mark.parametrize("variant", ["dynamic_prompt", "one_token", "hf_static_cache"])
def test_the_llamas_bound_their_tokens_as_eager_does_and_their_position_by_the_context(variant):
    case = lowered(variant)
    refused = {v for v in EDGE_IDS if _eager_refuses(lambda: eager_of(variant, case.model)(torch.tensor([[v]]), 0))}
    assert refused == {v for v in EDGE_IDS if not 0 <= v < VOCAB}  # eager's embedding: no negative id
    bounds = {(b.low, b.high) for b in _bounds_of(case.pte)}
    assert bounds == {(0, VOCAB), (0, CONTEXT)}, bounds


def _static_one_token(**partitioner_options):
    model = et_llama(False)
    pte = to_edge_transform_and_lower(export_et_llama(model, False),
                                      partitioner=[executorch_openvino.OpenvinoPartitioner(**partitioner_options)])
    return model, pte.to_executorch().buffer


@pytest.mark.parametrize("variant", ["one_token", "hf_static_cache", "static_cache", "cache_in_executorch"])
def test_a_position_past_the_context_is_refused_as_eager_refuses_it(variant):
    if variant in ("one_token", "hf_static_cache"):
        case = lowered(variant)
        model, ours = case.model, ours_of(variant, load(case.pte))
        message = f"past the context of {CONTEXT} positions"
    else:  # the cache kept static: in OpenVINO state, or in ExecuTorch's buffers
        model, pte = _static_one_token(**({"grow_caches": False} if variant == "static_cache" else {"stateful": False}))
        ours = method_step(Runtime.get().load_program(pte).load_method("forward"))
        message = rf"outside \[(-{CONTEXT}|0), {CONTEXT}\)"  # indexes the mask (as eager, -1 is the last row)
    eager = eager_of("hf_static_cache" if variant == "hf_static_cache" else "one_token", model)
    for position in range(CONTEXT):  # the whole context, one token a call, as eager
        last = ours(torch.tensor([[position % VOCAB]]), position)
    torch.testing.assert_close(last, _eager_through(eager, CONTEXT), rtol=1e-4, atol=1e-5)
    with pytest.raises(IndexError):
        eager(torch.tensor([[1]]), CONTEXT)
    for position in (CONTEXT, CONTEXT + 7):
        with pytest.raises(DelegateError, match=message):
            ours(torch.tensor([[1]]), position)


def _eager_through(eager, positions: int):
    for position in range(positions):
        logits = eager(torch.tensor([[position % VOCAB]]), position)
    return logits


@pytest.mark.parametrize("variant", ["dynamic_prompt", "one_token", "hf_static_cache"])
def test_token_ids_are_refused_exactly_where_eager_refuses_them_and_the_conversation_goes_on(variant):
    case = lowered(variant)
    ours = ours_of(variant, load(case.pte))
    eager = eager_of(variant, case.model)
    prompt_calls = [(torch.tensor([PROMPT]), 0)] if variant != "one_token" else [
        (torch.tensor([[t]]), i) for i, t in enumerate(PROMPT)]
    for tokens, position in prompt_calls:
        ours(tokens, position)
        eager(tokens, position)
    accepted = []
    for value in EDGE_IDS:
        if not _eager_refuses(lambda: eager_of(variant, case.model)(torch.tensor([[value]]), 0)):
            accepted.append(value)
            continue
        with pytest.raises(DelegateError, match=rf"holds {value}, outside \[0, {VOCAB}\)"):
            ours(torch.tensor([[value]]), len(PROMPT))
    assert accepted == [0, 1, VOCAB - 1]
    # The refused calls changed nothing: the conversation goes on as eager's, with the highest id.
    edge = torch.tensor([[VOCAB - 1]])
    torch.testing.assert_close(ours(edge, len(PROMPT)), eager(edge, len(PROMPT)), rtol=1e-4, atol=1e-5)
    # The lowest id, in a conversation of its own.
    fresh_ours, fresh_eager = ours_of(variant, load(case.pte)), eager_of(variant, case.model)
    torch.testing.assert_close(fresh_ours(torch.tensor([[0]]), 0), fresh_eager(torch.tensor([[0]]), 0),
                               rtol=1e-4, atol=1e-5)


class Lookup(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.table = torch.nn.Embedding(10, 4)

    def forward(self, ids):
        return self.table(ids) * 2


def test_an_embedding_index_is_refused_exactly_where_eager_refuses_it_naming_the_input_and_range():
    torch.manual_seed(0)
    model, ids = Lookup().eval(), torch.tensor([[1, 9, 3]])
    pte = lower(model, (ids,))
    assert [(b.input, b.low, b.high) for b in _bounds_of(pte)] == [(0, 0, 10)]
    method = Runtime.get().load_program(pte).load_method("forward")
    for value in (-11, -10, -1, 0, 1, 9, 10, 11):
        probe = torch.tensor([[1, value, 3]])
        if _eager_refuses(lambda: model(probe)):
            with pytest.raises(DelegateError, match=rf"input 0 holds {value} at element 1, outside \[0, 10\)"):
                method.execute([probe])
        else:
            torch.testing.assert_close(method.execute([probe])[0], model(probe))
    torch.testing.assert_close(method.execute([ids])[0], model(ids))


class Rows(torch.nn.Module):
    """Plain indexing counts negative indices from the end, unlike an embedding."""

    def __init__(self) -> None:
        super().__init__()
        self.table = torch.nn.Parameter(torch.randn(10, 4), requires_grad=False)

    def forward(self, ids):
        return self.table[ids] * 2


def test_a_plain_index_keeps_its_negative_range_where_eager_takes_it():
    model, ids = Rows().eval(), torch.tensor([1, 9, 3])
    pte = lower(model, (ids,))
    method = Runtime.get().load_program(pte).load_method("forward")
    for value in (-11, -10, -1, 0, 9, 10):
        probe = torch.tensor([1, value, 3])
        if _eager_refuses(lambda: model(probe)):
            with pytest.raises(DelegateError, match=rf"holds {value} at element 1, outside \[-10, 10\)"):
                method.execute([probe])
        else:
            torch.testing.assert_close(method.execute([probe])[0], model(probe))


# ---------------------------------------------------------------------------------------------
# Indices of the other indexing operators, an input of the program: refused exactly where eager
# raises (from 0 for index_select, gather, scatter, index_add and index_copy, from minus the size for
# index_put and index_fill), equal to eager elsewhere. Before, OpenVINO counted a negative index from the end
# where eager raises, index_put folded an index past the end onto a row, and scatter_add with one
# corrupted the CPU plugin's heap.

ROWS = 5
_UPDATES = torch.arange(6, dtype=torch.float32).reshape(2, 3) + 10
_INDEXING = {
    "index_select": (lambda x, i: torch.index_select(x, 0, i), lambda v: torch.tensor([0, v])),
    "gather": (lambda x, i: torch.gather(x, 0, i), lambda v: torch.tensor([[0, v, 1]])),
    "scatter": (lambda x, i: x.scatter(0, i, _UPDATES[:1]), lambda v: torch.tensor([[0, v, 1]])),
    "scatter_add": (lambda x, i: x.scatter_add(0, i, _UPDATES[:1]), lambda v: torch.tensor([[0, v, 1]])),
    "index_put": (lambda x, i: x.index_put((i,), _UPDATES), lambda v: torch.tensor([0, v])),
    "index_put_accumulate": (lambda x, i: x.index_put((i,), _UPDATES, accumulate=True), lambda v: torch.tensor([v, v])),
    "index_fill": (lambda x, i: x.index_fill(0, i, -3.0), lambda v: torch.tensor([0, v])),
    # to_edge makes both an index_put, which takes negative rows; eager's raises for them. The
    # second row is 2, never probed, as index_copy with a repeated row is not deterministic.
    "index_add": (lambda x, i: x.index_add(0, i, _UPDATES), lambda v: torch.tensor([v, 2])),
    "index_copy": (lambda x, i: x.index_copy(0, i, _UPDATES), lambda v: torch.tensor([v, 2])),
}


class _Indexing(torch.nn.Module):
    def __init__(self, fn) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, x, i):
        return self.fn(x, i)


@pytest.mark.parametrize("name", list(_INDEXING))
def test_an_indexing_operators_index_is_refused_exactly_where_eager_refuses_it(name):
    fn, index_of = _INDEXING[name]
    model, x = _Indexing(fn).eval(), torch.arange(ROWS * 3, dtype=torch.float32).reshape(ROWS, 3) + 1
    pte = lower(model, (x, index_of(1)))
    assert [b.input for b in _bounds_of(pte)] == [1], "the index input is bounded"
    method = Runtime.get().load_program(pte).load_method("forward")
    refused = []
    for value in (-ROWS - 1, -ROWS, -1, 0, 1, ROWS - 1, ROWS):
        probe = index_of(value)
        if _eager_refuses(lambda: model(x, probe)):
            refused.append(value)
            with pytest.raises(DelegateError, match=rf"input 1 holds {value} at element \d+, outside \["):
                method.execute([x, probe])
        else:
            torch.testing.assert_close(method.execute([x, probe])[0], model(x, probe), rtol=0, atol=0)
    assert ROWS in refused  # every operator refuses one past the end
    torch.testing.assert_close(method.execute([x, index_of(1)])[0], model(x, index_of(1)), rtol=0, atol=0)


def test_several_index_tensors_count_each_negative_index_in_its_own_dimension():
    """x[i, j]: the frontend gathered at i * 3 + j, so x[-1, -1] read x[3, 2] (fx_passes/ops/multi_index.py)."""
    model = _Indexing(lambda x, i: (x[i[0], i[1]], x[i[0], :, i[1]])).eval()
    x = torch.arange(ROWS * 4 * 3, dtype=torch.float32).reshape(ROWS, 4, 3)
    pairs = torch.tensor([[r, c] for r in range(-ROWS, ROWS) for c in range(-3, 3)]).T.contiguous()
    pte = lower(model, (x, pairs))
    method = Runtime.get().load_program(pte).load_method("forward")
    for got, expected in zip(method.execute([x, pairs]), model(x, pairs)):
        torch.testing.assert_close(got, expected, rtol=0, atol=0)


def test_several_index_tensors_into_a_dynamic_dimension_count_negative_indices_from_its_size_at_run_time():
    """x[i, j] with j indexing a dimension of dynamic size (transformers' attention masks index the
    padding mask so): was refused; a negative j counts from the length this call has, not the one
    exported with."""
    model = _Indexing(lambda x, j: x[torch.tensor([[0], [1]]), j]).eval()
    x, j = torch.arange(2 * 7, dtype=torch.float32).reshape(2, 7), torch.tensor([[0, -1, 2, -3]])
    exported = torch.export.export(model, (x, j), dynamic_shapes=({1: torch.export.Dim("length", min=4, max=32)}, None))
    lowered = to_edge_transform_and_lower(exported, partitioner=[executorch_openvino.OpenvinoPartitioner()])
    graph = lowered.exported_program().graph_module.graph
    assert [op_name(n.target) for n in graph.nodes
            if n.op == "call_function" and "index" in op_name(n.target)] == [], "the indexing stayed outside"
    method = Runtime.get().load_program(lowered.to_executorch().buffer).load_method("forward")
    for length in (4, 7, 19):  # -1 and -3 name other columns at each length
        x = torch.arange(2 * length, dtype=torch.float32).reshape(2, length)
        torch.testing.assert_close(method.execute([x, j])[0], model(x, j), rtol=0, atol=0)


class RepeatedPositions(torch.nn.Module):
    """Whisper's decoder: position_ids = cache_position.unsqueeze(0).repeat(batch, 1), then
    weight[position_ids] (transformers' WhisperPositionalEmbedding). The repeat keeps the values."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(8, 4), requires_grad=False)

    def forward(self, positions):
        return self.weight[positions.unsqueeze(0).repeat(2, 1)] + self.weight[positions.expand(3, -1)].sum(0)


def test_an_index_repeated_or_expanded_from_an_input_is_bounded_by_what_it_indexes():
    model, positions = RepeatedPositions().eval(), torch.tensor([3])
    pte = lower(model, (positions,))
    assert [(b.input, b.low, b.high) for b in _bounds_of(pte)] == [(0, -8, 8)]
    method = Runtime.get().load_program(pte).load_method("forward")
    for value in (-9, -8, 0, 7, 8):
        probe = torch.tensor([value])
        if _eager_refuses(lambda: model(probe)):
            with pytest.raises(DelegateError, match=rf"input 0 holds {value}, outside \[-8, 8\)"):
                method.execute([probe])
        else:
            torch.testing.assert_close(method.execute([probe])[0], model(probe), rtol=0, atol=0)
