"""The engine's interleaved rounds, on plain functions: the order of the calls (never their speed)."""

from __future__ import annotations

import threading

from executorch_openvino import benchmark
from executorch_openvino.benchmark import rounds as _rounds


def test_rounds_interleave_the_variants_rotating_and_reversing_the_order():
    """Guards against a fixed order (the first variant always timed on the quietest machine) and
    against a turn that starts without its settling call."""
    log = []
    runners = {key: benchmark.SequentialRunner(lambda key=key: log.append(key)) for key in "abc"}
    rounds = benchmark.interleaved(runners, 4, calls=8, warmup=1, settle_calls=1)

    assert rounds.order == [list("abc"), list("acb"), list("cab"), list("cba")]
    # One warm-up call each, then per round and variant one settling call and the round's share.
    expected = list("abc")
    for order in rounds.order:
        for key in order:
            expected += [key] * (1 + 2)
    assert log == expected
    assert {key: [s.calls for s in slices] for key, slices in rounds.slices.items()} == {k: [2, 2, 2, 2] for k in "abc"}
    assert _rounds.split_calls(10, 4) == [3, 3, 2, 2]


def test_time_based_rounds_give_every_variant_its_share_of_each_round():
    runners = {key: benchmark.SequentialRunner(lambda: None) for key in ("ours", "native")}
    rounds = benchmark.interleaved(runners, 3, seconds=0.15)
    for slices in rounds.slices.values():
        assert len(slices) == 3
        assert all(s.calls >= 1 and s.seconds >= 0.05 and len(s.latencies_ms) == s.calls for s in slices)


def test_the_concurrent_runner_keeps_its_requests_in_flight_together():
    # Each call waits until all three requests are inside a call: it passes only if they overlap.
    inside = threading.Barrier(3, timeout=60)
    made = benchmark.ConcurrentRunner([inside.wait] * 3)
    slice_ = made.run(6, None)
    assert slice_.calls == 6 and len(slice_.latencies_ms) == 6


def test_time_calls_times_each_call_after_the_untimed_ones():
    calls = []
    times = benchmark.time_calls(lambda: calls.append(1), 3, warmup=2)
    assert len(calls) == 5 and len(times) == 3 and all(t >= 0 for t in times)
