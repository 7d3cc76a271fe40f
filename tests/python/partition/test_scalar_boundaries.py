"""An int ExecuTorch reads with .item() (a start position) at the delegate's boundary
(partition/op_support.py, partition/scalar_boundaries.py): what computes with it is delegated (the
partition reads the int as a rank-0 input); a pick from a program input or stored table at it stays
with ExecuTorch, so the pick crosses, not the table; and the picks of an input that give the int are
left to ExecuTorch, so the layers reading it stay one partition."""

from __future__ import annotations

import torch
from executorch.exir import to_edge_transform_and_lower

import executorch_openvino
from lowering import assert_matches, delegate_calls, load_forward, outside_ops

ROWS = 8
# The int's own plumbing, which a delegate cannot hand back (it returns tensors): the pick and
# .item(), and the checks torch.export adds on the int.
SCALAR_WORK = {"aten.select_copy.int", "aten.unsqueeze_copy.default", "aten._local_scalar_dense.default", "ge", "le",
               "aten._assert_scalar.default"}


class PositionsBothWays(torch.nn.Module):
    """position_ids = positions.unsqueeze(0) read as a tensor (a rotation) and, picked to an int
    (position_ids[0][0].item()), as where a window starts: optimum-executorch's Gemma 3 reads its
    cache_position so. The int only computes (arange(ROWS) < start), it picks from nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.table = torch.nn.Parameter(torch.randn(ROWS, 4), requires_grad=False)

    def forward(self, x, positions):
        position_ids = positions.unsqueeze(0)
        start = position_ids[0][0].item()
        torch._check(start >= 0)
        torch._check(start <= 64)
        rotated = x * torch.cos(position_ids.float()).unsqueeze(-1)  # [1, S, 4]
        seen = (torch.arange(ROWS) < start).float().unsqueeze(-1)  # [ROWS, 1]
        return rotated.sum(1) + (self.table * seen).sum(0)


def test_an_int_read_from_an_input_is_picked_outside_and_computed_with_inside_one_partition():
    model = PositionsBothWays().eval()
    exported = torch.export.export(model, (torch.randn(1, 3, 4), torch.arange(3)))
    partitioner = executorch_openvino.OpenvinoPartitioner()
    lowered = to_edge_transform_and_lower(exported, partitioner=[partitioner])
    graph = lowered.exported_program().graph_module.graph
    assert len(delegate_calls(graph)) == 1, "the pick split the partition"
    assert set(outside_ops(graph)) <= SCALAR_WORK, outside_ops(graph)
    assert "aten.lt.Scalar" not in outside_ops(graph), "what computes with the int is delegated"
    method = load_forward(lowered.to_executorch().buffer)
    for start in (0, 3, 8, 20):  # no rows seen, some, all
        x, positions = torch.randn(1, 3, 4), torch.arange(start, start + 3)
        assert_matches(method.execute([x, positions]), [model(x, positions)])


class PickAtTheInt(torch.nn.Module):
    """A stored table and an input, each sliced at the int."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("table", torch.randn(ROWS, 4), persistent=False)

    def forward(self, x, position):
        start = position.item()
        torch._check(start >= 0)
        torch._check(start <= ROWS - 2)
        return (self.table.narrow(0, start, 2) * 2 + x.narrow(0, start, 2)).relu()


def test_a_pick_from_a_table_or_an_input_at_the_int_stays_outside_and_the_pick_crosses():
    model = PickAtTheInt().eval()
    exported = torch.export.export(model, (torch.randn(ROWS, 4), torch.tensor(1)))
    partitioner = executorch_openvino.OpenvinoPartitioner()
    lowered = to_edge_transform_and_lower(exported, partitioner=[partitioner])
    graph = lowered.exported_program().graph_module.graph
    assert outside_ops(graph).count("aten.slice_copy.Tensor") == 2, outside_ops(graph)
    reasons = {why for why in partitioner.last_support.refusals.values() if "picks" in why}
    assert reasons == {"picks from a stored or given tensor at an int ExecuTorch computes"}
    method = load_forward(lowered.to_executorch().buffer)
    for start in (0, 3, ROWS - 2):
        x = torch.randn(ROWS, 4)
        assert_matches(method.execute([x, torch.tensor(start)]), [model(x, torch.tensor(start))])
