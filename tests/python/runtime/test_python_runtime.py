"""The Python side at run time: the package loads the library into ExecuTorch's registry, finds the
pip-installed OpenVINO runtime, and programs lowered to the delegate run through executorch.runtime
from files and from bytes, with several methods and partitions sharing one OpenVINO core."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import executorch_openvino
from executorch.runtime import Runtime
from executorch_openvino.runtime import openvino_discovery
from lowering import SmallNet, assert_matches, eager, lower

REPO = Path(__file__).resolve().parents[3]


def _describe() -> dict:
    return executorch_openvino.runtime.library.loaded().describe_runtime()


def test_backend_id_is_the_one_the_library_registers():
    library = executorch_openvino.runtime.library.loaded()
    assert library is not None, executorch_openvino.runtime.library.load_error()
    assert library.backend_id() == executorch_openvino.BACKEND_ID
    assert executorch_openvino.BACKEND_ID in Runtime.get().backend_registry.registered_backend_names


def test_info_reports_the_library_the_runtime_and_versions():
    found = executorch_openvino.info()
    assert found.backend_registered
    assert Path(found.library_path).name == "libexecutorch_openvino.so"
    assert found.executorch_version == importlib.metadata.version("executorch")
    assert found.openvino_error is None
    assert "CPU" in found.devices
    assert found.openvino_version.startswith(importlib.metadata.version("openvino") + "-")
    # The highest-versioned C library of the pip package, by full path.
    assert found.openvino_runtime_path == str(openvino_discovery.find_pip_runtime())


def test_pip_runtime_discovery_takes_the_highest_version(tmp_path):
    for name in ("libopenvino_c.so.2460", "libopenvino_c.so.10000", "libopenvino_c.so.2641", "libopenvino.so.99999"):
        (tmp_path / name).write_bytes(b"")
    assert openvino_discovery.c_library_in(tmp_path) == tmp_path / "libopenvino_c.so.10000"
    assert openvino_discovery.c_library_in(tmp_path / "missing") is None


def test_runs_from_a_file_and_from_bytes_with_the_same_outputs(small_net, tmp_path):
    model, x, pte = small_net
    path = tmp_path / "small.pte"
    path.write_bytes(pte)
    from_file = Runtime.get().load_program(path).load_method("forward").execute([x])[0]
    from_bytes = Runtime.get().load_program(pte).load_method("forward").execute([x])[0]
    assert torch.equal(from_file, from_bytes)
    assert_matches([from_file], eager(model, [x]))


def test_a_loaded_program_does_not_depend_on_its_file_afterwards(small_net, tmp_path):
    model, x, pte = small_net
    path = tmp_path / "small.pte"
    path.write_bytes(pte)
    method = Runtime.get().load_program(path).load_method("forward")
    expected = method.execute([x])[0].clone()
    # Remove the file and put something else at its path: the loaded method is unaffected.
    path.unlink()
    path.write_bytes(b"\0" * len(pte))
    assert torch.equal(method.execute([x])[0], expected)


def test_a_method_keeps_its_program_from_bytes_alive(small_net):
    # load_program(data).load_method(...) drops the Program, which alone held the bytes.
    import gc

    model, x, pte = small_net
    method = Runtime.get().load_program(bytes(bytearray(pte))).load_method("forward")
    gc.collect()
    _scribble = [bytes(len(pte)) for _ in range(4)]  # reuse freed memory, if any was freed
    for _ in range(3):
        assert_matches([method.execute([x])[0]], eager(model, [x]))


def test_two_methods_and_several_partitions_share_one_core():
    torch.manual_seed(1)
    model = SmallNet().eval()
    x = torch.randn(1, 3, 12, 12)
    programs = {
        "forward": torch.export.export(model, (x,)),
        "features": torch.export.export(torch.nn.Sequential(model.conv, torch.nn.ReLU()).eval(), (x,)),
    }
    # Keeping relu on ExecuTorch's kernels splits "forward" into two partitions.
    pte = lower(programs, skip_ops=["aten.relu"])
    program = Runtime.get().load_program(pte)
    assert program.method_names == {"forward", "features"}
    forward = program.load_method("forward").execute([x])[0]
    features = program.load_method("features").execute([x])[0]
    assert_matches([forward], eager(model, [x]))
    assert_matches([features], eager(torch.nn.Sequential(model.conv, torch.nn.ReLU()), [x]))
    assert _describe()["cores_created"] == "1"


def test_a_method_with_a_wrong_input_dtype_is_refused_naming_it_and_keeps_working(small_net, capfd):
    _, _, pte = small_net
    method = Runtime.get().load_program(pte).load_method("forward")
    capfd.readouterr()
    # ExecuTorch's Method::set_inputs checks the dtype before the delegate sees the input: it fails
    # with InvalidArgument (0x12) and logs which input and which dtypes.
    with pytest.raises(RuntimeError, match=r"set_inputs\(\) for method 'forward' failed with error 0x12"):
        method.execute([torch.randn(1, 3, 12, 12, dtype=torch.float64)])
    assert "Input 0 has unexpected scalar type: expected Float but was Double" in capfd.readouterr().err
    # The process keeps working.
    assert method.execute([torch.randn(1, 3, 12, 12)])[0].shape == (1, 5)


_MISSING_RUNTIME = textwrap.dedent(
    """
    import os, sys, torch
    sys.path.insert(0, sys.argv[2])
    os.environ["OPENVINO_LIB_PATH"] = "/nonexistent/openvino/libs"
    import executorch_openvino
    from executorch.runtime import Runtime
    program = Runtime.get().load_program(sys.argv[1])
    try:
        program.load_method("forward")
    except RuntimeError as error:
        print("FIRST-ERROR:" + repr(str(error)))
    else:
        raise SystemExit("loading succeeded without a runtime")
    os.environ["OPENVINO_LIB_PATH"] = sys.argv[3]
    out = program.load_method("forward").execute([torch.ones(1, 3, 12, 12)])[0]
    print("SECOND-OK:" + str(tuple(out.shape)))
    """
)


def test_a_missing_runtime_is_a_clear_error_and_a_fixed_path_then_works(small_net, tmp_path):
    _, _, pte = small_net
    path = tmp_path / "small.pte"
    path.write_bytes(pte)
    env = dict(os.environ)
    env.pop("OPENVINO_LIB_PATH", None)
    result = subprocess.run(
        [sys.executable, "-c", _MISSING_RUNTIME, str(path), str(REPO / "python"),
         str(openvino_discovery.find_pip_runtime().parent)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    first = next(line for line in result.stdout.splitlines() if line.startswith("FIRST-ERROR:"))
    assert "/nonexistent/openvino/libs" in first
    assert "OPENVINO_LIB_PATH" in first and "pip install" in first
    assert "SECOND-OK:(1, 5)" in result.stdout
