"""nn.LSTM / nn.GRU kept whole through to_edge (partition/kept_whole.py, fx_passes/ops/whole_ops.py) and
unrolled in the IR (fx_passes/ops/recurrent.py): every variant the layers have, delegated whole and equal
to eager within 1e-5; a layer the partitioner does not take is decomposed by ExecuTorch as before."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import executorch_openvino
from executorch_openvino.fx_passes.ops import whole_ops
from lowering import assert_matches, eager, lower_and_load

pytestmark = pytest.mark.filterwarnings("ignore:The tensor attributes .* were assigned during export")


class Recurrent(nn.Module):
    def __init__(self, cls, **options):
        super().__init__()
        torch.manual_seed(0)
        self.layer = cls(**options)

    def forward(self, x, *state):
        y, final = self.layer(x, (state if len(state) > 1 else state[0]) if state else None)
        return (y, *final) if isinstance(final, tuple) else (y, final)


_BASE = dict(input_size=12, hidden_size=16)
CASES = [
    pytest.param(nn.LSTM, dict(num_layers=2, batch_first=True), (2, 7, 12), id="lstm_two_layers"),
    pytest.param(nn.LSTM, dict(batch_first=False), (7, 3, 12), id="lstm_sequence_first"),
    pytest.param(nn.LSTM, dict(num_layers=2, bidirectional=True, batch_first=True), (2, 5, 12), id="lstm_bidirectional"),
    pytest.param(nn.LSTM, dict(bias=False, batch_first=True), (1, 6, 12), id="lstm_no_bias"),
    pytest.param(nn.LSTM, dict(proj_size=8, num_layers=2, batch_first=True), (2, 5, 12), id="lstm_proj_size"),
    pytest.param(nn.GRU, dict(num_layers=2, batch_first=True), (2, 7, 12), id="gru_two_layers"),
    pytest.param(nn.GRU, dict(bidirectional=True), (6, 2, 12), id="gru_bidirectional"),
]


@pytest.mark.parametrize("cls, options, shape", CASES)
def test_recurrent_layer_matches_eager(cls, options, shape, tmp_path):
    model = Recurrent(cls, **_BASE, **options).eval()
    inputs = (torch.randn(*shape),)
    lowered = lower_and_load(model, inputs, tmp_path)
    assert lowered.backend_ids == [executorch_openvino.BACKEND_ID] and lowered.outside_ops == [], lowered.refusals
    assert_matches(lowered.run(inputs), eager(model, inputs), rel_tol=1e-5)


def test_lstm_with_initial_states(tmp_path):
    model = Recurrent(nn.LSTM, **_BASE, num_layers=2, batch_first=True).eval()
    inputs = (torch.randn(2, 6, 12), torch.randn(2, 2, 16), torch.randn(2, 2, 16))
    lowered = lower_and_load(model, inputs, tmp_path)
    assert lowered.outside_ops == [], lowered.refusals
    assert_matches(lowered.run(inputs), eager(model, inputs), rel_tol=1e-5)


def _layer_targets(program) -> set:
    return {n.target for n in program.graph.nodes if n.op == "call_function" and n.target in whole_ops.ATEN_OF.keys() | whole_ops.KEPT_WHOLE.keys()}


def test_the_layer_reaches_the_partitioner_whole():
    model = Recurrent(nn.LSTM, **_BASE, num_layers=2).eval()
    exported = torch.export.export(model, (torch.randn(5, 1, 12),))
    kept = executorch_openvino.OpenvinoPartitioner().transform_for_pre_decomposition(exported)
    assert _layer_targets(kept) == {torch.ops.executorch_openvino.lstm.default}


@pytest.mark.parametrize("skip", ["aten.lstm", "aten.lstm.input", "executorch_openvino.lstm"])
def test_a_skipped_layer_is_decomposed_as_before(skip):
    model = Recurrent(nn.LSTM, **_BASE).eval()
    exported = torch.export.export(model, (torch.randn(5, 1, 12),))
    kept = executorch_openvino.OpenvinoPartitioner(skip_ops=[skip]).transform_for_pre_decomposition(exported)
    assert _layer_targets(kept) == {torch.ops.aten.lstm.input}


def test_a_decomposed_layer_still_runs(tmp_path):
    model = Recurrent(nn.LSTM, **_BASE).eval()
    # Decomposed by ExecuTorch into steps, which the partitioner takes node by node.
    inputs = (torch.randn(5, 1, 12),)
    lowered = lower_and_load(model, inputs, tmp_path, skip_ops=["aten.lstm"])
    assert lowered.outside_ops == [], lowered.refusals
    assert_matches(lowered.run(inputs), eager(model, inputs), rel_tol=1e-5)
