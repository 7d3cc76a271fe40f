"""Production use from Python: methods of one program on many threads sharing one compiled model,
profiling through ExecuTorch's ETDump and Inspector, and programs made by ExecuTorch's own OpenVINO
partitioner (run by our library where that name is free, left alone where it is taken)."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest
import torch

import executorch_openvino
from executorch.runtime import Runtime
from executorch_openvino.runtime import openvino_discovery
from lowering import SmallNet, assert_matches, compiled_model_counts, eager, load_forward, lower, small_net_program

REPO = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.usefixtures("clean_options")


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))

    def forward(self, x):
        return self.layers(x)


def test_eight_threads_with_their_own_methods_share_one_compiled_model():
    torch.manual_seed(4)
    model = Mlp().eval()
    pte = lower(model, (torch.randn(2, 16),))
    before = compiled_model_counts()
    # One program per worker (executorch.runtime hands out one Method per program and name).
    methods = [load_forward(pte) for _ in range(8)]
    after = compiled_model_counts()
    assert after["compiled_models_created"] - before["compiled_models_created"] == 1
    assert after["compiled_models_reused"] - before["compiled_models_reused"] == 7

    failures: list = []

    def work(index: int) -> None:
        generator = torch.Generator().manual_seed(index)
        try:
            for _ in range(1000):
                x = torch.randn(2, 16, generator=generator)
                (out,) = methods[index].execute([x])
                with torch.no_grad():
                    expected = model(x)
                if not torch.allclose(out, expected, rtol=1e-4, atol=1e-5):
                    failures.append((index, float((out - expected).abs().max())))
                    return
        except Exception as error:  # reported below, with the thread that raised it
            failures.append((index, repr(error)))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert compiled_model_counts()["compiled_models_created"] == after["compiled_models_created"]


def test_a_second_load_of_the_same_program_hits_the_compiled_model_cache():
    _, _, pte = small_net_program(seed=5)
    first = load_forward(pte)
    before = compiled_model_counts()
    second = load_forward(pte)
    after = compiled_model_counts()
    assert (after["compiled_models_created"], after["compiled_models_reused"]) == (
        before["compiled_models_created"],
        before["compiled_models_reused"] + 1,
    )
    assert first is not second


# --- profiling --------------------------------------------------------------------------------------


def _etdump_events(pte: bytes, x: torch.Tensor, tmp_path: Path) -> list:
    from executorch.devtools import Inspector
    from executorch.extension.pybindings import portable_lib

    module = portable_lib._load_for_executorch_from_buffer(pte, enable_etdump=True, debug_buffer_size=1 << 20)
    for _ in range(3):
        module.forward([x])
    etdump = tmp_path / "run.etdp"
    module.write_etdump_result_to_file(str(etdump), str(tmp_path / "run.debug"))
    inspector = Inspector(etdump_path=str(etdump))
    return [event for block in inspector.event_blocks if block.name == "Execute" for event in block.events]


@pytest.fixture(scope="module")
def profiled_net():
    return small_net_program(seed=6)


def test_etdump_holds_our_inference_events_and_the_inspector_reads_them(profiled_net, tmp_path):
    _, x, pte = profiled_net
    events = _etdump_events(pte, x, tmp_path)
    ours = [e for e in events if e.name == "OpenVINO inference"]
    assert len(ours) == 1 and ours[0].is_delegated_op and len(ours[0].perf_data.raw) == 3
    assert not [e for e in events if e.is_delegated_op and e.name != "OpenVINO inference"], "layers without asking"


def test_per_layer_profiling_when_asked_shows_openvinos_layers(profiled_net, tmp_path):
    _, x, pte = profiled_net
    executorch_openvino.set_options(enable_profiling=True)
    events = _etdump_events(pte, x, tmp_path)
    layers = [e for e in events if e.is_delegated_op and e.name != "OpenVINO inference"]
    names = " ".join(e.name for e in layers)
    assert "Convolution" in names and "ReduceMean" in names, names
    # Each layer carries OpenVINO's node type and the kernel that ran it.
    kernels = [bytes(e.delegate_debug_metadatas[0]).decode() for e in layers if e.delegate_debug_metadatas]
    assert any(k.startswith("Convolution:") for k in kernels), kernels


# --- ExecuTorch's own OpenVINO delegate's programs ---------------------------------------------------


def test_in_python_executorchs_own_delegate_keeps_its_name():
    library = executorch_openvino.runtime.library.loaded()
    assert "OpenvinoBackend" in Runtime.get().backend_registry.registered_backend_names
    assert library.handle.executorch_openvino_registered_upstream_name() == 0
    holder = executorch_openvino.runtime.library.backend_library("OpenvinoBackend")
    assert holder and Path(holder).resolve() != library.path.resolve()
    assert Path(executorch_openvino.runtime.library.backend_library(executorch_openvino.BACKEND_ID)).resolve() == library.path.resolve()


@pytest.fixture(scope="module")
def upstream_pte(tmp_path_factory):
    """A .pte made by ExecuTorch's own OpenVINO partitioner (needs nncf, pinned in requirements)."""
    import nncf  # noqa: F401  (pinned in requirements.txt: a missing one is a broken install, not a skip)
    from executorch.backends.openvino.partitioner import OpenvinoPartitioner as UpstreamPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from executorch.exir.backend.backend_details import CompileSpec

    torch.manual_seed(7)
    model = SmallNet().eval()
    x = torch.randn(1, 3, 12, 12)
    edge = to_edge_transform_and_lower(
        torch.export.export(model, (x,)), partitioner=[UpstreamPartitioner([CompileSpec("device", b"CPU")])]
    )
    assert "OpenvinoBackend" in edge.exported_program().graph_module.lowered_module_0.backend_id
    folder = tmp_path_factory.mktemp("upstream")
    (folder / "upstream.pte").write_bytes(edge.to_executorch().buffer)
    np.save(folder / "x.npy", x.numpy())
    return model, x, folder


def test_a_program_from_executorchs_own_partitioner_runs_in_a_cpp_program_with_our_library(upstream_pte):
    model, x, folder = upstream_pte
    runner = Path(os.environ.get("EXECUTORCH_OPENVINO_RUNNER", REPO / "build/site/executorch_openvino/bin/executorch-openvino-run"))
    env = dict(os.environ, OPENVINO_LIB_PATH=str(openvino_discovery.find_pip_runtime().parent))
    result = subprocess.run(
        [str(runner), "upstream.pte", "--input", "x.npy", "--output-dir", "out", "--iterations", "2"],
        cwd=folder, capture_output=True, text=True, env=env, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert_matches([torch.from_numpy(np.load(folder / "out" / "output0.npy"))], eager(model, [x]))
