"""One .pte, any device and any shape: the device and options chosen when a program loads (not
when it was exported), precompiled models, and inputs of dynamic shape, through executorch.runtime."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from torch.export import Dim

import executorch_openvino
from executorch_openvino import OptionError
from lowering import load_forward, small_net_program

pytestmark = pytest.mark.usefixtures("clean_options")


def _run(pte: bytes, *inputs):
    method = load_forward(pte)
    return method, method.execute(list(inputs))


def _live_devices():
    return sorted(model["device"] for model in executorch_openvino.compiled_models())


# --- the device, chosen at load time --------------------------------------------------------------


def test_the_same_pte_runs_on_cpu_and_on_auto_without_re_export(small_net):
    model, x, pte = small_net
    expected = model(x)
    for device in ("CPU", "AUTO"):
        executorch_openvino.set_options(device=device)
        method, (out,) = _run(pte, x)
        torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)
        assert device in _live_devices()
        del method


def test_an_absent_device_fails_listing_the_available_ones(small_net):
    _, x, pte = small_net
    executorch_openvino.set_options(device="GPU")
    with pytest.raises(RuntimeError, match=r"device 'GPU' is not available; available devices: CPU"):
        _run(pte, x)


def test_set_options_overrides_the_environment_which_overrides_the_program(small_net, monkeypatch):
    _, x, pte = small_net
    monkeypatch.setenv("EXECUTORCH_OPENVINO_DEVICE", "GPU")
    with pytest.raises(RuntimeError, match="device 'GPU' is not available"):
        _run(pte, x)
    assert executorch_openvino.get_options()["device"] == "GPU"
    executorch_openvino.set_options(device="CPU")
    assert executorch_openvino.get_options()["device"] == "CPU"
    _run(pte, x)
    executorch_openvino.set_options(device=None)
    assert executorch_openvino.get_options()["device"] == "GPU"


def test_options_are_read_back_from_the_compiled_model(small_net):
    _, x, pte = small_net
    executorch_openvino.set_options(num_threads=1, performance_hint="THROUGHPUT", inference_precision="f32")
    method, _ = _run(pte, x)
    (compiled,) = [m for m in executorch_openvino.compiled_models() if m["PERFORMANCE_HINT"] == "THROUGHPUT"]
    assert (compiled["INFERENCE_NUM_THREADS"], compiled["INFERENCE_PRECISION_HINT"]) == ("1", "f32")


def test_unknown_keys_and_bad_values_are_refused_and_change_nothing():
    with pytest.raises(OptionError, match="unknown option 'numthreads'; known options: device, "):
        executorch_openvino.set_options(device="AUTO", numthreads=2)
    with pytest.raises(OptionError, match="option 'num_threads' = 'many'"):
        executorch_openvino.set_options(device="AUTO", num_threads="many")
    assert executorch_openvino.get_options()["device"] is None


def test_using_options_sets_for_the_block_and_puts_back_what_was_set(small_net):
    """Inside the block the options are in effect, and a method loaded there keeps them; after it each
    key has what set_options had given it (num_threads) or nothing (performance_hint), also when the
    block raises; a bad value raises before the block runs and changes nothing."""
    _, x, pte = small_net
    executorch_openvino.set_options(num_threads=1)
    with executorch_openvino.using_options(num_threads=2, performance_hint="THROUGHPUT"):
        assert executorch_openvino.get_options()["num_threads"] == "2"
        method, _ = _run(pte, x)
    options = executorch_openvino.get_options()
    assert (options["num_threads"], options["performance_hint"]) == ("1", None)
    (compiled,) = [m for m in executorch_openvino.compiled_models() if m["PERFORMANCE_HINT"] == "THROUGHPUT"]
    assert compiled["INFERENCE_NUM_THREADS"] == "2"
    with pytest.raises(KeyError):
        with executorch_openvino.using_options(num_threads=3):
            raise KeyError("inside")
    assert executorch_openvino.get_options()["num_threads"] == "1"
    with pytest.raises(OptionError, match="option 'num_threads' = 'many'"):
        with executorch_openvino.using_options(device="AUTO", num_threads="many"):
            pytest.fail("the block ran")
    assert executorch_openvino.get_options()["num_threads"] == "1"
    assert executorch_openvino.get_options()["device"] is None
    del method


# --- precompiled models ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def precompiled_net():
    return small_net_program(seed=1, precompile=["CPU"])


def test_an_embedded_cpu_model_is_used_on_cpu_and_matches_eager(precompiled_net):
    model, x, pte = precompiled_net
    method, (out,) = _run(pte, x)
    torch.testing.assert_close(out, model(x), rtol=1e-4, atol=1e-5)
    assert [m["source"] for m in executorch_openvino.compiled_models() if m["device"] == "CPU"] == ["precompiled"]


def test_the_same_file_on_auto_compiles_the_ir_and_still_matches(precompiled_net):
    model, x, pte = precompiled_net
    executorch_openvino.set_options(device="AUTO")
    method, (out,) = _run(pte, x)
    torch.testing.assert_close(out, model(x), rtol=1e-4, atol=1e-5)
    assert [m["source"] for m in executorch_openvino.compiled_models() if m["device"] == "AUTO"] == ["ir"]


def test_precompiling_for_an_absent_device_fails_at_export():
    with pytest.raises(Exception, match="cannot precompile for 'GPU'"):
        small_net_program(precompile=["GPU"])


# --- dynamic shapes ----------------------------------------------------------------------------------


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.Sequential(
            torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.GELU(), torch.nn.Linear(64, 10)
        )

    def forward(self, x):
        return self.layers(x)


class Encoder(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, batch_first=True, dropout=0.0)
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


def _lowered_dynamic(model, example, dynamic_shapes):
    exported = torch.export.export(model, (example,), dynamic_shapes=dynamic_shapes)
    partitioner = executorch_openvino.OpenvinoPartitioner()
    from executorch.exir import to_edge_transform_and_lower

    edge = to_edge_transform_and_lower(exported, partitioner=[partitioner])
    assert not partitioner.last_support.refusals, partitioner.last_support.refusals
    return edge.to_executorch().buffer


@pytest.fixture(scope="module")
def dynamic_mlp():
    torch.manual_seed(2)
    model = Mlp().eval()
    pte = _lowered_dynamic(model, torch.randn(4, 32), {"x": {0: Dim("batch", min=1, max=64)}})
    return model, load_forward(pte)


def test_an_mlp_with_a_dynamic_batch_matches_eager_at_every_batch_size(dynamic_mlp):
    model, method = dynamic_mlp
    for batch in (1, 7, 64, 2, 33, 1, 64):  # interleaved, back to sizes seen before
        x = torch.randn(batch, 32)
        (out,) = method.execute([x])
        assert out.shape == (batch, 10)
        torch.testing.assert_close(out, model(x), rtol=1e-4, atol=1e-5)


def test_a_batch_outside_the_bounds_fails_cleanly_and_the_method_keeps_working(dynamic_mlp):
    model, method = dynamic_mlp
    with pytest.raises(RuntimeError):  # ExecuTorch itself refuses more than the planned 64 rows
        method.execute([torch.randn(65, 32)])
    with pytest.raises(RuntimeError, match=r"shape \[0,32\], but the model expects \[1\.\.64,32\]"):
        method.execute([torch.randn(0, 32)])
    x = torch.randn(5, 32)
    torch.testing.assert_close(method.execute([x])[0], model(x), rtol=1e-4, atol=1e-5)


def test_a_transformer_encoder_with_a_dynamic_sequence_matches_eager_at_every_length():
    torch.manual_seed(3)
    model = Encoder().eval()
    method = load_forward(_lowered_dynamic(model, torch.randn(1, 16, 64), {"x": {1: Dim("sequence", min=1, max=256)}}))
    for length in (1, 17, 256, 64, 3, 128, 17):
        x = torch.randn(1, length, 64)
        (out,) = method.execute([x])
        assert out.shape == (1, length, 64)
        torch.testing.assert_close(out, model(x), rtol=1e-4, atol=2e-5)


def test_the_environment_is_read_when_a_program_loads(small_net, monkeypatch):
    _, x, pte = small_net
    monkeypatch.setenv("EXECUTORCH_OPENVINO_PERFORMANCE_HINT", "throughput")
    method, _ = _run(pte, x)
    assert "THROUGHPUT" in [m.get("PERFORMANCE_HINT") for m in executorch_openvino.compiled_models()]
    assert os.environ["EXECUTORCH_OPENVINO_PERFORMANCE_HINT"] == "throughput"


# --- the model cache (cache_dir) -----------------------------------------------------------------

_LOAD_IN_A_FRESH_PROCESS = """
import sys, torch, executorch_openvino
from executorch.runtime import Runtime
method = Runtime.get().load_program(sys.argv[1]).load_method("forward")
(out,) = method.execute([torch.load(sys.argv[2])])
torch.save(out, sys.argv[3])
print([m["source"] for m in executorch_openvino.compiled_models()])
"""


def test_a_second_process_imports_the_model_the_first_one_cached(small_net, tmp_path):
    import subprocess
    import sys

    model, x, pte = small_net
    (tmp_path / "net.pte").write_bytes(pte)
    torch.save(x, tmp_path / "x.pt")
    package = str(Path(executorch_openvino.__file__).resolve().parents[1])  # this checkout's, as in this process
    env = dict(os.environ, EXECUTORCH_OPENVINO_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join(filter(None, [package, os.environ.get("PYTHONPATH")])))
    sources = []
    for run in range(2):
        done = subprocess.run([sys.executable, "-c", _LOAD_IN_A_FRESH_PROCESS, str(tmp_path / "net.pte"),
                               str(tmp_path / "x.pt"), str(tmp_path / f"out{run}.pt")],
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        sources.append(done.stdout.strip().splitlines()[-1])
        torch.testing.assert_close(torch.load(tmp_path / f"out{run}.pt"), model(x), rtol=1e-4, atol=1e-5)
    assert sources == ["['ir']", "['cache']"]
    cached = sorted(p.name for p in (tmp_path / "cache").iterdir())
    assert len(cached) == 1 and cached[0].startswith("executorch_openvino-"), cached
