"""Cross-attention caches computed from the encoder's states only when they change
(ir_passes/encoder_caches.py): a decoder exported with static caches recomputes them from the
states it is handed on every call, as eager PyTorch does; ours keeps the last call's states and
reads the caches as they are when the new ones are equal, else computes them. Every call must
equal eager's, including calls whose states change in the middle of a conversation."""

from __future__ import annotations

import copy

import torch
from executorch.exir import to_edge_transform_and_lower

import executorch_openvino
from executorch_openvino.ir_passes.grown_cache import GROWN_VARIABLE_PREFIX, LENGTH_VARIABLE
from lowering import blob_ir, delegate_calls, load_forward
from seq2seq_models import CrossAttendingDecoder


def _lowered(model):
    example = (torch.tensor([[1]]), torch.randn(1, 6, 32), torch.tensor([0]))
    with torch.no_grad():
        exported = torch.export.export(copy.deepcopy(model), example)
    edge = to_edge_transform_and_lower(exported, partitioner=[executorch_openvino.OpenvinoPartitioner()])
    graph_module = edge.exported_program().graph_module
    ir = blob_ir(getattr(graph_module, delegate_calls(graph_module.graph)[0].args[0].target).processed_bytes)
    return ir, load_forward(edge.to_executorch().buffer)


def test_the_cross_caches_are_computed_in_one_branch_and_their_assigns_read_its_choice():
    ir, _ = _lowered(CrossAttendingDecoder(True, True).eval())
    (choice,) = [op for op in ir.get_ops() if op.get_type_name() == "If"]
    computed = {op.get_type_name() for op in choice.get_else_body().get_ops()}
    assert "MatMul" in computed  # the projections of the encoder's states, in the branch that computes
    assert {op.get_type_name() for op in choice.get_then_body().get_ops()} == {"Parameter", "Result"}
    sources = {sink.get_variable_id().removeprefix(GROWN_VARIABLE_PREFIX): sink.input_value(0).get_node().get_type_name() for sink in ir.get_sinks()}
    assert sources["cross_k"] == sources["cross_v"] == "If"
    variables = {v.get_info().variable_id.removeprefix(GROWN_VARIABLE_PREFIX) for v in ir.get_variables()}
    # + the last states, a flag, and the count of positions the grown self-attention caches hold
    assert {"cross_k", "cross_v", "self_k", "self_v", LENGTH_VARIABLE} < variables and len(variables) == 7


def test_every_call_equals_eager_when_the_states_stay_change_mid_conversation_and_come_back():
    model = CrossAttendingDecoder(True, True).eval()
    _, ours = _lowered(model)
    torch.manual_seed(2)
    first, second = torch.randn(1, 6, 32), torch.randn(1, 6, 32)
    almost = first.clone()
    almost[0, 5, 31] = torch.nextafter(almost[0, 5, 31], torch.tensor(1.0))  # one value, one ulp away
    # (position, states): one utterance whose states change at 3 and 4 and come back, then a new one.
    calls = [(0, first), (1, first), (2, first), (3, second), (4, almost), (5, first), (6, first), (0, second),
             (1, second)]
    for position, states in calls:
        token = torch.tensor([[(3 * position) % 37 + 2]])
        with torch.no_grad():
            expected = model(token, states, torch.tensor([position]))
        got = ours.execute([token, states, torch.tensor([position])])[0]
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5, msg=f"position {position}")


def test_the_same_export_twice_gives_the_same_ir_bytes_branches_included():
    # OpenVINO names unnamed operations from process-wide counters, the branches' too: the IR's
    # bytes would differ, and no compiled model would be shared or found in the model cache.
    from executorch_openvino.container.ir_file import serialize

    model = CrossAttendingDecoder(True, True).eval()
    first, _ = serialize(_lowered(model)[0])
    second, _ = serialize(_lowered(model)[0])
    assert b"If" in first and first == second


def test_the_one_pass_finds_the_caches_the_ancestor_walk_finds():
    """encoder_caches._may_qualify (one topological pass over the model) against the rule read off each
    cache's ancestors: one parameter, and no state read but the cache's own."""
    import numpy as np
    import openvino as ov
    import openvino.opset6 as ops6
    import openvino.opset13 as ops

    from executorch_openvino.ir_passes import encoder_caches
    from executorch_openvino.ir_passes.ir_reading import source, variable

    encoder = ops.parameter([1, 4], ov.Type.f32, name="encoder")
    token = ops.parameter([1, 4], ov.Type.f32, name="token")
    weight = ops.constant(np.ones((4, 4), np.float32))
    states = {name: variable(name, ov.PartialShape([1, 4]), ov.Type.f32) for name in "abcde"}
    reads = {name: ops6.read_value(ops.constant(np.zeros((1, 4), np.float32)), v) for name, v in states.items()}
    deep = encoder
    for _ in range(40):  # a long chain from the encoder alone
        deep = ops.matmul(deep, weight, False, False)
    new_values = {
        "a": ops.matmul(encoder, weight, False, False),  # the encoder's projection: qualifies
        "b": ops.add(ops.add(reads["b"], encoder), deep),  # its own old value too: qualifies
        "c": ops.add(encoder, token),  # two parameters
        "d": ops.add(reads["a"], encoder),  # another cache's read
        "e": ops.negative(ops.constant(np.ones((1, 4), np.float32))),  # constants only
    }
    assigns = [ops6.assign(value, states[name]) for name, value in new_values.items()]
    model = ov.Model([ops.result(token)], assigns, [encoder, token], "caches")
    model.add_variables(list(states.values()))

    origins = encoder_caches._origins(model)
    for assign in assigns:
        computed = encoder_caches._ancestors(source(assign)).values()
        by_walk = (sum(n.get_type_name() == "Parameter" for n in computed) == 1 and not any(
            n.get_type_name() == "ReadValue" and n.get_variable_id() != assign.get_variable_id() for n in computed))
        assert encoder_caches._may_qualify(origins, assign) == by_walk, assign.get_variable_id()
    assert [encoder_caches._may_qualify(origins, a) for a in assigns] == [True, True, False, False, False]
