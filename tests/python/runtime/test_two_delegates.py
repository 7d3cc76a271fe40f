"""ExecuTorch's own OpenVINO delegate and ours in one process: each runs its own program and matches
eager PyTorch, whichever package is imported first, with OPENVINO_LIB_PATH unset when our package
is imported (ExecuTorch sets it later), set by ExecuTorch's bindings, or set by the user; and our
package never changes the variable.

Each case is a fresh process (the import order and the environment at start-up are the point);
the programs are made once, here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import executorch_openvino
from executorch_openvino.runtime import openvino_discovery
from lowering import SmallNet, assert_matches, lower

# Prints what the variable was at each step and each delegate's output (compared with eager's by the test).
_BOTH_DELEGATES = r"""
import json, os, sys
folder, order = sys.argv[1], sys.argv[2]
seen = {"at_start": os.environ.get("OPENVINO_LIB_PATH")}
if order == "ours_first":
    import executorch_openvino
    seen["after_ours"] = os.environ.get("OPENVINO_LIB_PATH")
    from executorch.runtime import Runtime
    seen["after_executorch"] = os.environ.get("OPENVINO_LIB_PATH")
else:
    from executorch.runtime import Runtime
    seen["after_executorch"] = os.environ.get("OPENVINO_LIB_PATH")
    import executorch_openvino
    seen["after_ours"] = os.environ.get("OPENVINO_LIB_PATH")
import torch
x, expected = torch.load(os.path.join(folder, "x_expected.pt"))
outputs = {}
for name in ("executorchs.pte", "ours.pte"):
    # From bytes: ExecuTorch's delegate reads freed memory when its program is loaded from a file
    # (docs/performance.md); from a buffer it runs.
    with open(os.path.join(folder, name), "rb") as file:
        program = Runtime.get().load_program(file.read())
    (out,) = program.load_method("forward").execute([x])
    outputs[name] = out.tolist()
seen["at_end"] = os.environ.get("OPENVINO_LIB_PATH")
print(json.dumps({"seen": seen, "outputs": outputs, "ours": executorch_openvino.info().openvino_runtime_path,
                  "backends": list(Runtime.get().backend_registry.registered_backend_names)}))
"""


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """The same SmallNet lowered by ExecuTorch's own OpenVINO partitioner and by ours."""
    import nncf  # noqa: F401  (pinned in requirements.txt; ExecuTorch's partitioner imports it)
    from executorch.backends.openvino.partitioner import OpenvinoPartitioner as ExecutorchsPartitioner
    from executorch.exir.backend.backend_details import CompileSpec

    torch.manual_seed(5)
    model = SmallNet().eval()
    x = torch.randn(1, 3, 12, 12)
    folder = tmp_path_factory.mktemp("two_delegates")
    exported = torch.export.export(model, (x,))
    from executorch.exir import to_edge_transform_and_lower

    theirs = to_edge_transform_and_lower(exported, partitioner=[ExecutorchsPartitioner([CompileSpec("device", b"CPU")])])
    assert theirs.exported_program().graph_module.lowered_module_0.backend_id == "OpenvinoBackend"
    (folder / "executorchs.pte").write_bytes(theirs.to_executorch().buffer)
    (folder / "ours.pte").write_bytes(lower(model, (x,)))
    with torch.no_grad():
        torch.save((x, model(x)), folder / "x_expected.pt")
    return folder


def _user_chosen_path() -> str:
    """The pip runtime by a path of the user's own, not the string ExecuTorch would set (a copy
    elsewhere would be hundreds of MB; a symbolic link breaks the runtime's $ORIGIN for ExecuTorch's
    delegate, which dlopens the given path as it is)."""
    runtime = openvino_discovery.find_pip_runtime()
    return str(runtime.parent / ".." / runtime.parent.name / runtime.name)


CASES = {
    # name: what OPENVINO_LIB_PATH is when the process starts
    "unset": None,
    "exported_with_executorchs_value": "executorch",  # the value ExecuTorch would set: the reported bug
    "exported_with_a_path_of_the_users": "user",
}


@pytest.mark.parametrize("order", ["ours_first", "executorch_first"])
@pytest.mark.parametrize("case", list(CASES))
def test_both_delegates_run_their_programs_in_one_process(programs, case, order):
    executorchs_value = openvino_discovery.executorch_auto_path()
    start = {None: None, "executorch": executorchs_value, "user": None}[CASES[case]]
    if CASES[case] == "user":
        start = _user_chosen_path()
        assert start != executorchs_value
    package = str(Path(executorch_openvino.__file__).resolve().parents[1])
    env = {k: v for k, v in os.environ.items() if k not in ("OPENVINO_LIB_PATH", "PYTHONPATH")}
    env["PYTHONPATH"] = package
    if start is not None:
        env["OPENVINO_LIB_PATH"] = start
    done = subprocess.run([sys.executable, "-c", _BOTH_DELEGATES, str(programs), order], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    seen, outputs = report["seen"], {name: torch.tensor(value) for name, value in report["outputs"].items()}

    # Our import changes nothing; ExecuTorch's bindings set the variable only when it was unset.
    expected_after_executorch = start if start is not None else executorchs_value
    if order == "ours_first":
        assert seen["after_ours"] == start
    else:
        assert seen["after_ours"] == seen["after_executorch"]
    assert seen["after_executorch"] == expected_after_executorch
    assert seen["at_end"] == expected_after_executorch

    # Both delegates are registered and each runs its program (ExecuTorch's computes in bf16 on
    # CPUs that have it, hence its wider bound).
    assert {"OpenvinoBackend", executorch_openvino.BACKEND_ID} <= set(report["backends"])
    _, expected = torch.load(programs / "x_expected.pt")
    assert_matches([outputs["ours.pte"]], [expected], rel_tol=1e-5)
    assert_matches([outputs["executorchs.pte"]], [expected], rel_tol=5e-2)
    # Ours opened what the variable names when it is set (the user's own path included).
    assert report["ours"] == expected_after_executorch
