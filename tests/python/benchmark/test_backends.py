"""The engine's backends: the runtimes `executorch-openvino bench` times."""

from __future__ import annotations

from executorch_openvino.benchmark import backends as _bench_backends


def test_runtimes_are_timed_with_one_torch_thread_and_eager_with_torch_s_own_count():
    # executorch.runtime copies outputs with a torch op: torch's idle OpenMP workers would then spin
    # on the cores OpenVINO needs (docs/performance.md). Eager keeps its threads.
    import torch

    own = torch.get_num_threads()
    seen = []

    class Probe(torch.nn.Module):
        def forward(self, x):
            seen.append(torch.get_num_threads())
            return x + 1

    eager = _bench_backends.eager(Probe(), [torch.ones(2)], requests=1)
    with _bench_backends.one_torch_thread():
        assert torch.get_num_threads() == 1
        eager.runner.run(1, None)
        assert torch.get_num_threads() == 1
    assert seen == [own] and torch.get_num_threads() == own
