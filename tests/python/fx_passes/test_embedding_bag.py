"""embedding_bag through the delegate (fx_passes/ops/embedding_bag.py) equal to eager for every input
eager accepts: each mode, with and without include_last_offset, padding_idx and per-sample weights,
run on many offsets per lowered program: empty bags anywhere, offsets ending before the indices do
(the indices after the last offset, which PyTorch's CPU kernel lets into the last bag for max, for
mean's divisor and with padding_idx; issue 28), and offsets ending exactly at the end."""

from __future__ import annotations

import itertools
import logging
import random

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import executorch_openvino
from executorch.exir import EdgeCompileConfig, to_edge
from executorch_openvino.partition import NodeSupport
from lowering import assert_matches, eager, lower_and_load

# embedding_bag without gradients is outside the core ATen set: lowered as ExecuTorch's backend
# suite lowers it (to_edge's IR check off).
NON_CORE = EdgeCompileConfig(_check_ir_validity=False)
VOCABULARY, DIM, INDICES, OFFSETS = 10, 4, 8, 3


class _Bag(nn.Module):
    def __init__(self, mode: str, weighted: bool, **options) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.table = nn.Parameter(torch.randn(VOCABULARY, DIM), requires_grad=False)
        self.mode, self.weighted, self.options = mode, weighted, options

    def forward(self, indices, offsets, *weights):
        return F.embedding_bag(indices, self.table, offsets, mode=self.mode,
                               per_sample_weights=weights[0] if self.weighted else None, **self.options)


def _offsets_cases(count: int = 40):
    """Sorted offsets from 0, as eager accepts them: some with empty bags, the last offset before
    the end (indices left after it) and at the end."""
    rng = random.Random(count)
    cases = [torch.tensor([0, 4, INDICES]), torch.tensor([0, 4, 4]), torch.tensor([0, 0, 0]),
             torch.tensor([0, INDICES, INDICES]), torch.tensor([0, 2, 5])]
    while len(cases) < count:
        cases.append(torch.tensor([0] + sorted(rng.randint(0, INDICES) for _ in range(OFFSETS - 1))))
    return cases


@pytest.mark.parametrize("mode, include_last_offset, padding_idx, weighted", [
    *((mode, last, pad, False) for mode, last, pad in itertools.product(("sum", "mean", "max"), (False, True),
                                                                         (None, 3))),
    ("sum", False, None, True), ("sum", True, None, True), ("sum", True, 3, True),
])
def test_embedding_bag_equals_eager_for_every_valid_offsets(mode, include_last_offset, padding_idx, weighted,
                                                            tmp_path):
    model = _Bag(mode, weighted, include_last_offset=include_last_offset, padding_idx=padding_idx).eval()
    generator = torch.Generator().manual_seed(1)
    indices = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])  # the operator suite's, with padding_idx 3 among them
    weights = (torch.rand(INDICES, generator=generator),) if weighted else ()
    example = (indices, torch.tensor([0, 4, INDICES]), *weights)
    lowered = lower_and_load(model, example, tmp_path, compile_config=NON_CORE)
    assert lowered.backend_ids == [executorch_openvino.BACKEND_ID] and lowered.outside_ops == [], lowered.refusals
    checked = 0
    for offsets in _offsets_cases():
        for values in (indices, torch.randint(0, VOCABULARY, (INDICES,), generator=generator)):
            inputs = (values, offsets, *weights)
            try:
                expected = eager(model, inputs)
            except RuntimeError:
                continue  # an input eager refuses is not a case of this test
            assert_matches(lowered.run(inputs), expected, rel_tol=1e-6), (values, offsets)
            checked += 1
    assert checked >= 60


def test_the_suites_trailing_indices_case_in_every_mode(tmp_path):
    """ExecuTorch's operator suite's test_embedding_bag_include_last_offset: the indices after the
    last offset count for max and for mean's divisor, as in eager."""
    indices, offsets = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 4])
    for mode in ("sum", "mean", "max"):
        model = _Bag(mode, False, include_last_offset=True).eval()
        lowered = lower_and_load(model, (indices, offsets), tmp_path, name=mode, compile_config=NON_CORE)
        (out,), (expected,) = lowered.run((indices, offsets)), eager(model, (indices, offsets))
        assert torch.allclose(out, expected, rtol=0, atol=1e-6), (mode, out, expected)
        stopped = getattr(model.table[indices[:4]], "amax" if mode == "max" else mode)(0)
        if mode == "sum":
            assert torch.allclose(out[0], stopped, atol=1e-6)  # sum stops at the last offset
        else:
            assert not torch.allclose(out[0], stopped, atol=1e-3)  # the quirk is really exercised


def test_embedding_bag_of_2d_indices_and_per_sample_weights(tmp_path):
    torch.manual_seed(0)
    table = torch.randn(10, 4)

    class _Two(nn.Module):
        def forward(self, i, o, p):
            return (F.embedding_bag(i.reshape(2, 5), table, mode="max"),
                    F.embedding_bag(i, table, o, mode="sum", per_sample_weights=p))

    inputs = (torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0, 7]), torch.tensor([0, 6]), torch.rand(10))
    lowered = lower_and_load(_Two().eval(), inputs, tmp_path, compile_config=NON_CORE)
    assert lowered.outside_ops == [], lowered.refusals
    assert_matches(lowered.run(inputs), eager(_Two(), inputs), rel_tol=1e-6)


def test_a_left_out_row_holding_inf_does_not_reach_the_sum(tmp_path):
    model = _Bag("sum", False, include_last_offset=True).eval()
    with torch.no_grad():
        model.table[9] = float("inf")  # row 9 is only read after the last offset
    inputs = (torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 2, 4]))
    lowered = lower_and_load(model, inputs, tmp_path, compile_config=NON_CORE)
    (out,), (expected,) = lowered.run(inputs), eager(model, inputs)
    assert torch.isfinite(expected).all() and torch.equal(out.isfinite(), expected.isfinite())
    assert torch.allclose(out, expected, atol=1e-6)


def test_embedding_bag_too_large_to_spell_out_is_refused_with_its_reason(caplog):
    table, indices, offsets = torch.randn(100, 4), torch.zeros(5000, dtype=torch.int64), torch.arange(0, 5000)

    class _Large(nn.Module):
        def forward(self, i, o):
            return F.embedding_bag(i, table, o, mode="sum")

    graph = to_edge(torch.export.export(_Large(), (indices, offsets)), compile_config=NON_CORE).exported_program().graph
    node = next(n for n in graph.nodes if "embedding_bag" in str(n.target))
    with caplog.at_level(logging.INFO, logger="executorch_openvino.partition.op_support"):
        assert not NodeSupport().is_node_supported({}, node)
    assert "embedding_bag of 5000 indices in 5000 bags is too large" in caplog.text
