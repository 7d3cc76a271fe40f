"""Cross-attention caches computed from the encoder's states once per utterance
(ir_passes/encoder_caches.py, and the runtime's side: src/delegate/conversation/encoder_caches.h): a
decoder exported with static caches recomputes them from the states it is handed on every call, as
eager PyTorch does; ours computes them in OpenVINO state initializers, which run only after a reset,
and the library resets them when a call brings other states. Every call must equal eager's,
including calls whose states change in the middle of a conversation, and no step may copy or
recompute them."""

from __future__ import annotations

import copy
import sys
import textwrap

import numpy as np
import pytest
import torch
from executorch.exir import to_edge_transform_and_lower

import executorch_openvino
from executorch_openvino.container.ir_names import ENCODER_CACHE_PREFIX, ENCODER_STATES_INPUT
from executorch_openvino.ir_passes.grown_cache import GROWN_VARIABLE_PREFIX, LENGTH_VARIABLE
from lowering import blob_ir, delegate_calls, load_forward, run_without_state_helper
from seq2seq_models import CrossAttendingDecoder


def _lowered(model):
    example = (torch.tensor([[1]]), torch.randn(1, 6, 32), torch.tensor([0]))
    with torch.no_grad():
        exported = torch.export.export(copy.deepcopy(model), example)
    edge = to_edge_transform_and_lower(exported, partitioner=[executorch_openvino.OpenvinoPartitioner()])
    graph_module = edge.exported_program().graph_module
    ir = blob_ir(getattr(graph_module, delegate_calls(graph_module.graph)[0].args[0].target).processed_bytes)
    return ir, load_forward(edge.to_executorch().buffer)


def _eager_calls(model, calls):
    with torch.no_grad():
        return [model(torch.tensor([[(3 * p) % 37 + 2]]), states, torch.tensor([p])) for p, states in calls]


def test_each_cross_cache_is_a_state_whose_initializer_projects_and_whose_assign_writes_it_back():
    """Guards the zero-copy form: the Assign writes the ReadValue's own output (the CPU plugin then
    keeps one buffer and copies nothing), and the projections sit in its initializer. Fails on the
    earlier If form (the Assign wrote the If's choice, copied each step) or on a Select/copy in between."""
    ir, _ = _lowered(CrossAttendingDecoder(True, True).eval())
    assert "If" not in {op.get_type_name() for op in ir.get_ops()}
    variables = {v.get_info().variable_id for v in ir.get_variables()}
    assert variables == {ENCODER_CACHE_PREFIX + "cross_k", ENCODER_CACHE_PREFIX + "cross_v",
                         GROWN_VARIABLE_PREFIX + "self_k", GROWN_VARIABLE_PREFIX + "self_v", LENGTH_VARIABLE}
    for sink in ir.get_sinks():
        if not sink.get_variable_id().startswith(ENCODER_CACHE_PREFIX):
            continue
        held = sink.input_value(0).get_node()
        assert held.get_type_name() == "ReadValue" and held.get_variable_id() == sink.get_variable_id()
        initializer, stack, seen = set(), [held.input_value(0).get_node()], set()
        while stack:
            node = stack.pop()
            if node.get_friendly_name() in seen:
                continue
            seen.add(node.get_friendly_name())
            initializer.add(node.get_type_name())
            stack.extend(node.input_value(i).get_node() for i in range(node.get_input_size()))
        assert {"MatMul", "Parameter"} <= initializer
    (states,) = [p for p in ir.get_parameters() if p.get_friendly_name() == "states"]
    assert ENCODER_STATES_INPUT in states.output(0).get_names()


def test_a_step_reads_the_caches_it_holds_and_computes_them_again_only_after_a_reset():
    """Native OpenVINO on the blob's IR: caches overwritten between two steps with the same states
    stay overwritten (fails if a step recomputes them: tried with the Assign and the attention fed the
    projection itself, which this and the test above both fail), and a reset of the encoder's
    variables alone computes them again (fails if the initializer does not hold the projection)."""
    import openvino as ov

    model = CrossAttendingDecoder(True, True).eval()
    ir, _ = _lowered(model)
    # f32 as the delegate compiles by default (OpenVINO's own default is bf16 on CPUs that have it).
    compiled = ov.Core().compile_model(ir, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    torch.manual_seed(3)
    states = torch.randn(1, 6, 32)
    calls = [(0, states), (1, states)]
    expected = _eager_calls(model, calls)

    def run(request, position):
        feeds = {}
        for port in compiled.inputs:
            name = port.get_any_name()
            feeds[port] = (np.array([position], np.int64) if "position" in name
                           else states.numpy() if name in ("states", ENCODER_STATES_INPUT)
                           else np.array([[(3 * position) % 37 + 2]], np.int64))
        return torch.from_numpy(request.infer(feeds)[compiled.outputs[0]].copy())

    request = compiled.create_infer_request()
    torch.testing.assert_close(run(request, 0), expected[0], rtol=1e-4, atol=1e-5)
    marked = [s for s in request.query_state() if s.name.startswith(ENCODER_CACHE_PREFIX)]
    assert len(marked) == 2
    for state in marked:
        state.state = ov.Tensor(np.zeros(state.state.shape, np.float32))
    stale = run(request, 1)
    assert not torch.allclose(stale, expected[1], rtol=1e-3, atol=1e-3)  # the step read the zeros it holds

    fresh = compiled.create_infer_request()
    run(fresh, 0)
    for state in fresh.query_state():
        if state.name.startswith(ENCODER_CACHE_PREFIX):
            state.state = ov.Tensor(np.zeros(state.state.shape, np.float32))
            state.reset()  # back to the initializer: computed again from the states at the next call
    torch.testing.assert_close(run(fresh, 1), expected[1], rtol=1e-4, atol=1e-5)


def test_every_call_equals_eager_when_the_states_stay_change_mid_conversation_and_come_back():
    """Guards the runtime's reset when a call brings other states (tried without it: fails at position
    3, the caches still the first states')."""
    model = CrossAttendingDecoder(True, True).eval()
    _, ours = _lowered(model)
    torch.manual_seed(2)
    first, second = torch.randn(1, 6, 32), torch.randn(1, 6, 32)
    almost = first.clone()
    almost[0, 5, 31] = torch.nextafter(almost[0, 5, 31], torch.tensor(1.0))  # one value, one ulp away
    # (position, states): one utterance whose states change at 3 and 4 and come back, then a new one.
    calls = [(0, first), (1, first), (2, first), (3, second), (4, almost), (5, first), (6, first), (0, second),
             (1, second)]
    for (position, states), expected in zip(calls, _eager_calls(model, calls)):
        token = torch.tensor([[(3 * position) % 37 + 2]])
        got = ours.execute([token, states, torch.tensor([position])])[0]
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5, msg=f"position {position}")


def test_a_restored_prefix_with_other_states_than_the_call_computes_the_caches_again():
    """A prefix saved under one utterance's states, restored for a call with another's: the prefix's
    cross caches are not the call's (tried: fails when a restore leaves the runtime believing the
    caches hold the states of the call before it)."""
    model = CrossAttendingDecoder(True, True).eval()
    _, ours = _lowered(model)
    torch.manual_seed(4)
    first, second = torch.randn(1, 6, 32), torch.randn(1, 6, 32)

    def call(position, states):
        return ours.execute([torch.tensor([[(3 * position) % 37 + 2]]), states, torch.tensor([position])])[0]

    call(0, first)
    call(1, first)
    executorch_openvino.save_state("two positions")
    try:
        call(0, second)
        call(1, second)
        executorch_openvino.restore_state("two positions")
        # The conversation as eager sees it: positions 0 and 1 with the first states, then the second's.
        expected = _eager_calls(model, [(0, first), (1, first), (2, second)])[-1]
        torch.testing.assert_close(call(2, second), expected, rtol=1e-4, atol=1e-5)
    finally:
        executorch_openvino.forget_state("two positions")


def test_the_same_export_twice_gives_the_same_ir_bytes():
    # OpenVINO names unnamed operations from process-wide counters: the IR's bytes would differ, and
    # no compiled model would be shared or found in the model cache.
    from executorch_openvino.container.ir_file import serialize

    model = CrossAttendingDecoder(True, True).eval()
    first, _ = serialize(_lowered(model)[0])
    second, _ = serialize(_lowered(model)[0])
    assert ENCODER_CACHE_PREFIX.encode() in first and first == second


def _toy_model():
    """Caches of every kind the rule tells apart, each computed from an `encoder` input."""
    import openvino as ov
    import openvino.opset3 as ops3
    import openvino.opset6 as ops6
    import openvino.opset13 as ops

    from executorch_openvino.ir_passes.ir_reading import variable

    encoder = ops.parameter([1, 4], ov.Type.f32, name="encoder")
    token = ops.parameter([1, 4], ov.Type.f32, name="token")
    weight = ops.constant(np.ones((4, 4), np.float32))
    names = "abcdefgh"
    states = {name: variable(name, ov.PartialShape([1, 4]), ov.Type.f32) for name in names}
    reads = {name: ops6.read_value(ops.constant(np.zeros((1, 4), np.float32)), v) for name, v in states.items()}
    deep = encoder
    for _ in range(40):  # a long chain from the encoder alone
        deep = ops.matmul(deep, weight, False, False)

    def scatter(read, rows):  # index_copy of the projection into `rows` of the cache, axis 1
        projected = ops.matmul(encoder, weight, False, False)
        taken = ops.gather(projected, ops.constant(np.array(rows, np.int64)), ops.constant(np.int64(1)))
        return ops3.scatter_update(read, ops.constant(np.array(rows, np.int64)), taken, ops.constant(np.int64(1)))

    new_values = {
        "a": ops.matmul(encoder, weight, False, False),  # the encoder's projection
        "b": ops.add(ops.add(reads["b"], encoder), deep),  # its own old value too, accumulated
        "c": ops.add(encoder, token),  # two parameters
        "d": ops.add(reads["a"], encoder),  # another cache's read
        "e": ops.negative(ops.constant(np.ones((1, 4), np.float32))),  # constants only
        "f": scatter(reads["f"], [3, 1, 0, 2]),  # every row written
        "g": scatter(reads["g"], [0, 2]),  # rows 1 and 3 keep their old values
        # the old value's shape and type only
        "h": ops.convert_like(ops.add(encoder, ops.reduce_prod(ops.convert(ops3.shape_of(reads["h"]), ov.Type.f32),
                                                               ops.constant(np.int64(0)))), reads["h"]),
    }
    assigns = [ops6.assign(value, states[name]) for name, value in new_values.items()]
    model = ov.Model([ops.result(token)], assigns, [encoder, token], "caches")
    model.add_variables(list(states.values()))
    return model, assigns


def test_the_one_pass_finds_the_caches_the_ancestor_walk_finds():
    """encoder_caches._may_qualify (one topological pass over the model) against the rule read off each
    cache's ancestors: one parameter, and no state read but the cache's own."""
    from executorch_openvino.ir_passes import encoder_caches
    from executorch_openvino.ir_passes.ir_reading import source

    model, assigns = _toy_model()
    origins = encoder_caches._origins(model)
    for assign in assigns:
        seen, stack = {}, [source(assign).get_node()]
        while stack:
            node = stack.pop()
            if node.get_friendly_name() in seen:
                continue
            seen[node.get_friendly_name()] = node
            if node.get_type_name() not in ("Parameter", "ReadValue", "Constant"):
                stack.extend(source(node, i).get_node() for i in range(node.get_input_size()))
        computed = seen.values()
        by_walk = (sum(n.get_type_name() == "Parameter" for n in computed) == 1 and not any(
            n.get_type_name() == "ReadValue" and n.get_variable_id() != assign.get_variable_id() for n in computed))
        assert encoder_caches._may_qualify(origins, assign) == by_walk, assign.get_variable_id()
    assert [encoder_caches._may_qualify(origins, a) for a in assigns] == [True, True, False, False, False, True,
                                                                          True, True]


def test_only_caches_that_keep_nothing_of_their_old_value_become_initializers():
    """An initializer sees no old value, so a cache that keeps some of it (accumulated, or written at
    some rows only) must stay computed each call: fails when the check lets 'g' (rows 1 and 3 kept)
    or 'b' through, or refuses 'f' (a permutation of every row) or 'h' (shape and type only); and 'a',
    whose old value cache 'd' reads, must stay too (an initializer's variable holds no old value)."""
    from executorch_openvino.ir_passes import encoder_caches
    from executorch_openvino.ir_passes.lowering import Lowering

    model, _ = _toy_model()
    encoder_caches.reuse_encoder_caches(Lowering(model=model, program=None))
    moved = {v.get_info().variable_id.removeprefix(ENCODER_CACHE_PREFIX) for v in model.get_variables()
             if v.get_info().variable_id.startswith(ENCODER_CACHE_PREFIX)}
    assert moved == {"f", "h"}


@pytest.mark.parametrize("rows, covered", [([0, 1, 2, 3], True), ([3, 1, 0, 2], True), ([0, 1, 2], False),
                                           ([0, 1, 2, 2], False), ([0, 1, 2, 4], False), ([3, -3, 0, 2], False)])
def test_a_scatter_overwrites_everything_only_when_its_rows_cover_the_axis(rows, covered):
    """Rows in any order; a duplicate, a row past the end or a negative one (not every opset counts it
    from the end) covers nothing more (fails when duplicates count twice or bounds are not checked)."""
    import openvino as ov
    import openvino.opset3 as ops3
    import openvino.opset13 as ops

    from executorch_openvino.ir_passes import encoder_caches

    data = ops.parameter([1, 4, 2], ov.Type.f32)
    updates = ops.parameter([1, len(rows), 2], ov.Type.f32)
    scatter = ops3.scatter_update(data, ops.constant(np.array(rows, np.int64)), updates, ops.constant(np.int64(1)))
    assert encoder_caches._writes_every_row(scatter) == covered


def test_without_the_helper_new_states_start_a_conversation_and_mid_conversation_ones_are_refused(library_path):
    """EXECUTORCH_OPENVINO_STATE_LIBRARY at a missing file: a new conversation at position 0 takes a
    new request and computes the caches from its states (equal to eager's), and states changed in the
    middle of one are refused, naming the helper, instead of decoding against the old caches."""
    script = textwrap.dedent("""
        import sys, torch
        sys.path[:0] = sys.argv[1:]
        from executorch_openvino.runtime.errors import DelegateError
        from seq2seq_models import CrossAttendingDecoder
        from ir_passes.test_encoder_caches import _eager_calls, _lowered
        model = CrossAttendingDecoder(True, True).eval()
        _, ours = _lowered(model)
        torch.manual_seed(5)
        first, second = torch.randn(1, 6, 32), torch.randn(1, 6, 32)
        calls = [(0, first), (1, first), (0, second), (1, second)]
        for (position, states), expected in zip(calls, _eager_calls(model, calls)):
            got = ours.execute([torch.tensor([[(3 * position) % 37 + 2]]), states, torch.tensor([position])])[0]
            torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
        try:
            ours.execute([torch.tensor([[3]]), first, torch.tensor([2])])
        except DelegateError as error:
            assert "brings other encoder states" in str(error), error
            assert "/nowhere/libexecutorch_openvino_state.so" in str(error), error
        else:
            raise AssertionError("new states mid-conversation ran without the helper")
        print("ok")
    """)
    run_without_state_helper(script, library_path)
