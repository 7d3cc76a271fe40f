"""The C++ runner, executorch-openvino-run: programs lowered by the Python package load and run
through ExecuTorch's Module API with the delegate and the CPU kernels linked in; it reports load,
first-run and latency figures, reads .npy inputs, writes .npy outputs that match eager PyTorch, and
fails with a clear message and a non-zero exit code on bad input."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

import executorch_openvino
from lowering import SmallNet, assert_matches, lower
from executorch_openvino.runtime import openvino_discovery

REPO = Path(__file__).resolve().parents[3]
BACKEND_ID = executorch_openvino.BACKEND_ID



class EmbeddingNet(torch.nn.Module):
    """Integer and bool inputs, two outputs (float and int64)."""

    def __init__(self) -> None:
        super().__init__()
        self.embedding = torch.nn.Embedding(7, 4)

    def forward(self, indices, mask):
        return self.embedding(indices) * mask.unsqueeze(-1), indices.argmax(dim=-1)




@pytest.fixture(scope="module")
def runner() -> Path:
    path = Path(os.environ.get("EXECUTORCH_OPENVINO_RUNNER", REPO / "build" / "site" / "executorch_openvino" / "bin" / "executorch-openvino-run"))
    if not path.is_file():
        pytest.fail(f"{path} does not exist: build it first (cmake --build build --target executorch_openvino_run)")
    return path


@pytest.fixture(scope="module")
def small_net(tmp_path_factory):
    torch.manual_seed(0)
    model = SmallNet().eval()
    x = torch.randn(1, 3, 12, 12)
    folder = tmp_path_factory.mktemp("small_net")
    (folder / "small.pte").write_bytes(lower(model, (x,)))
    np.save(folder / "x.npy", x.numpy())
    return model, x, folder


def _run(runner: Path, *args, cwd: Path, env_overrides: dict | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if not env.get("OPENVINO_LIB_PATH"):
        env["OPENVINO_LIB_PATH"] = str(openvino_discovery.find_pip_runtime().parent)
    env.update(env_overrides or {})
    return subprocess.run([str(runner), *map(str, args)], cwd=cwd, capture_output=True, text=True, env=env, timeout=300)


def _assert_close(actual: np.ndarray, expected: np.ndarray) -> None:
    """Element by element, each held to its own size (lowering.assert_matches), dtype and shape too."""
    assert_matches([torch.from_numpy(actual)], [torch.from_numpy(expected)])


def _field(stdout: str, pattern: str) -> float:
    match = re.search(pattern, stdout, re.MULTILINE)
    assert match, f"no line matching {pattern!r} in:\n{stdout}"
    return float(match.group(1))


def test_runs_an_npy_input_reports_timings_and_writes_outputs_that_match_eager(runner, small_net):
    model, x, folder = small_net
    result = _run(runner, "small.pte", "--input", "x.npy", "--output-dir", "out", "--iterations", "5", cwd=folder)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    load = _field(out, r"^load time:\s+([\d.]+) ms \(program [\d.]+ ms \+ method [\d.]+ ms\)$")
    first = _field(out, r"^first run:\s+([\d.]+) ms$")
    assert re.search(r"^latency over 5 runs after 3 warm-up runs:$", out, re.MULTILINE)
    p50, p90, p99 = (_field(out, rf"^\s+{p}:\s+([\d.]+) ms$") for p in ("p50", "p90", "p99"))
    assert load > 0 and first > 0 and 0 < p50 <= p90 <= p99
    assert re.search(rf"^backends:\s+{BACKEND_ID}$", out, re.MULTILINE)
    assert re.search(r"^input 0:\s+float32 \(1, 3, 12, 12\) from x\.npy$", out, re.MULTILINE)
    _assert_close(np.load(folder / "out" / "output0.npy"), model(x).detach().numpy())


def test_default_inputs_are_deterministic_values_of_the_declared_shape(runner, small_net):
    _, _, folder = small_net
    runs = [_run(runner, "small.pte", "--iterations", "2", "--warmup", "0", "--output-dir", f"default{i}", cwd=folder)
            for i in range(2)]
    for result in runs:
        assert result.returncode == 0, result.stdout + result.stderr
        assert re.search(r"^input 0:\s+float32 \(1, 3, 12, 12\), deterministic$", result.stdout, re.MULTILINE)
    first, second = (np.load(folder / f"default{i}" / "output0.npy") for i in range(2))
    assert first.shape == (1, 5) and np.array_equal(first, second)


def test_integer_and_bool_inputs_and_several_outputs(runner, tmp_path):
    torch.manual_seed(2)
    model = EmbeddingNet().eval()
    indices = torch.tensor([[1, 2, 3, 6]])
    mask = torch.tensor([[True, False, True, True]])
    (tmp_path / "embedding.pte").write_bytes(lower(model, (indices, mask)))
    np.save(tmp_path / "indices.npy", indices.numpy())
    np.save(tmp_path / "mask.npy", mask.numpy())
    result = _run(runner, "embedding.pte", "--input", "indices.npy", "--input", "mask.npy", "--output-dir", "out",
                  "--iterations", "2", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    embedded, argmax = model(indices, mask)
    _assert_close(np.load(tmp_path / "out" / "output0.npy"), embedded.detach().numpy())
    assert np.array_equal(np.load(tmp_path / "out" / "output1.npy"), argmax.numpy())
    # Default int64 inputs stay valid indices (0..6) for the 7-row embedding.
    result = _run(runner, "embedding.pte", "--iterations", "2", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_partially_delegated_model_runs_on_the_linked_kernels(runner, tmp_path):
    torch.manual_seed(1)
    model = SmallNet().eval()
    x = torch.randn(1, 3, 12, 12)
    # relu stays on ExecuTorch's kernels, between two delegated partitions.
    (tmp_path / "partial.pte").write_bytes(lower(model, (x,), skip_ops=["aten.relu"]))
    np.save(tmp_path / "x.npy", x.numpy())
    # Several runs: each must see its inputs afresh, whatever memory planning did to them.
    result = _run(runner, "partial.pte", "--input", "x.npy", "--output-dir", "out", "--iterations", "3", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(rf"^backends:\s+{BACKEND_ID} \(2 partitions\)$", result.stdout, re.MULTILINE)
    _assert_close(np.load(tmp_path / "out" / "output0.npy"), model(x).detach().numpy())


def test_a_wrong_shape_npy_fails_naming_the_input(runner, small_net):
    _, _, folder = small_net
    np.save(folder / "wrong_shape.npy", np.zeros((1, 3, 13, 12), np.float32))
    result = _run(runner, "small.pte", "--input", "wrong_shape.npy", cwd=folder)
    assert result.returncode == 1
    assert "input 0 (wrong_shape.npy)" in result.stderr
    assert "(1, 3, 13, 12)" in result.stderr and "(1, 3, 12, 12)" in result.stderr


def test_a_wrong_dtype_npy_fails_naming_the_input(runner, small_net):
    _, _, folder = small_net
    np.save(folder / "wrong_dtype.npy", np.zeros((1, 3, 12, 12), np.float64))
    result = _run(runner, "small.pte", "--input", "wrong_dtype.npy", cwd=folder)
    assert result.returncode == 1
    assert "input 0 (wrong_dtype.npy): dtype float64" in result.stderr and "float32" in result.stderr


def test_an_unsupported_npy_is_refused_with_the_reason(runner, small_net):
    _, _, folder = small_net
    np.save(folder / "big_endian.npy", np.zeros((1, 3, 12, 12), ">f4"))
    result = _run(runner, "small.pte", "--input", "big_endian.npy", cwd=folder)
    assert result.returncode == 1
    assert "'>f4'" in result.stderr and "big-endian" in result.stderr
    (folder / "truncated.npy").write_bytes((folder / "x.npy").read_bytes()[:-4])
    result = _run(runner, "small.pte", "--input", "truncated.npy", cwd=folder)
    assert result.returncode == 1
    assert "input 0: truncated.npy: truncated" in result.stderr


def test_a_missing_program_fails_cleanly(runner, tmp_path):
    result = _run(runner, tmp_path / "missing.pte", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == ""
    assert f"model file '{tmp_path / 'missing.pte'}' does not exist" in result.stderr


def test_a_file_that_is_not_a_program_reports_executorchs_error_code(runner, small_net):
    _, _, folder = small_net
    result = _run(runner, "x.npy", cwd=folder)
    assert result.returncode == 1
    assert "loading program 'x.npy' failed: ExecuTorch error 0x23" in result.stderr


def test_a_delegate_failure_shows_the_delegates_own_message(runner, small_net):
    _, _, folder = small_net
    result = _run(runner, "small.pte", cwd=folder, env_overrides={"OPENVINO_LIB_PATH": "/nonexistent/openvino/libs"})
    assert result.returncode == 1
    assert re.search(r"loading method 'forward' of 'small\.pte' failed: ExecuTorch error 0x[0-9a-f]+", result.stderr)
    assert "OpenVINO delegate: " in result.stderr and "/nonexistent/openvino/libs" in result.stderr


def test_weights_in_a_data_file_load_with_data_and_are_refused_without(runner, tmp_path):
    from executorch.exir import to_edge_transform_and_lower

    torch.manual_seed(2)
    model, x = SmallNet().eval(), torch.randn(1, 3, 12, 12)
    partitioner = executorch_openvino.OpenvinoPartitioner(external_weights="small_weights")
    program = to_edge_transform_and_lower(torch.export.export(model, (x,)), partitioner=[partitioner]).to_executorch()
    (tmp_path / "small.pte").write_bytes(program.buffer)
    program.write_tensor_data_to_file(str(tmp_path))
    np.save(tmp_path / "x.npy", x.numpy())
    result = _run(runner, "small.pte", "--data", "small_weights.ptd", "--input", "x.npy", "--output-dir", "out",
                  "--iterations", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    _assert_close(np.load(tmp_path / "out" / "output0.npy"), model(x).detach().numpy())
    result = _run(runner, "small.pte", "--iterations", "1", cwd=tmp_path)
    assert result.returncode == 1 and "loaded without named data" in result.stderr, result.stderr


def test_usage_errors_exit_with_2(runner, small_net):
    _, _, folder = small_net
    for args in ([], ["small.pte", "--iterations", "0"], ["small.pte", "--bogus"], ["small.pte", "--method"]):
        result = _run(runner, *args, cwd=folder)
        assert result.returncode == 2, args
        assert "--help" in result.stderr
    result = _run(runner, "small.pte", "--method", "other", cwd=folder)
    assert result.returncode == 1 and "no method 'other' (it has: forward)" in result.stderr
    result = _run(runner, "small.pte", "--input", "x.npy", "--input", "x.npy", cwd=folder)
    assert result.returncode == 1 and "takes 1 input but 2 --input were given" in result.stderr


def test_links_the_delegate_and_the_cpu_kernels(runner):
    section = subprocess.run(["readelf", "-d", str(runner)], check=True, capture_output=True, text=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", section)
    for library in ("libexecutorch_openvino.so", "libexecutorch_kernels_optimized.so", "libexecutorch.so"):
        assert library in needed


def test_load_time_options_choose_the_device_without_re_export(runner, small_net):
    model, x, folder = small_net
    result = _run(runner, "small.pte", "--input", "x.npy", "--output-dir", "auto", "--option", "device=AUTO",
                  "--option", "num_threads=1", cwd=folder)
    assert result.returncode == 0, result.stdout + result.stderr
    _assert_close(np.load(folder / "auto" / "output0.npy"), model(x).detach().numpy())
    absent = _run(runner, "small.pte", "--option", "device=GPU", cwd=folder)
    assert absent.returncode == 1
    assert "device 'GPU' is not available; available devices: CPU" in absent.stdout + absent.stderr
    unknown = _run(runner, "small.pte", "--option", "colour=blue", cwd=folder)
    assert unknown.returncode == 1 and "unknown option 'colour'" in unknown.stdout + unknown.stderr
    assert _run(runner, "small.pte", "--option", "novalue", cwd=folder).returncode == 2
