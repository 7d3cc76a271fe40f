"""How the shipped library is linked: ExecuTorch's shared runtime and nothing of OpenVINO."""

from __future__ import annotations

import os
import re
import subprocess

import pytest


def _dynamic_section(library_path) -> str:
    return subprocess.run(["readelf", "-d", str(library_path)], check=True, capture_output=True, text=True).stdout


def _needed(library_path) -> list[str]:
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", _dynamic_section(library_path))


def test_needs_executorchs_shared_runtime_and_nothing_else_of_executorch(library_path):
    needed = _needed(library_path)
    assert "libexecutorch.so" in needed
    assert [n for n in needed if n.startswith("libexecutorch") and n != "libexecutorch.so"] == []


def test_has_no_link_dependency_on_openvino(library_path):
    assert [n for n in _needed(library_path) if "openvino" in n or "tbb" in n] == []


def test_soname_runpath_and_nodelete(library_path):
    section = _dynamic_section(library_path)
    assert "Library soname: [libexecutorch_openvino.so]" in section
    runpath = re.search(r"\(RUNPATH\)\s+Library runpath: \[([^\]]+)\]", section)
    assert runpath, "expected DT_RUNPATH (not DT_RPATH)"
    # One relative entry: installed, the library sits in site-packages/executorch_openvino/lib/
    # beside site-packages/executorch/lib/; the build tree mirrors that layout.
    assert runpath.group(1) == "$ORIGIN/../../executorch/lib"
    assert (library_path.parent / "../../executorch/lib/libexecutorch.so").resolve().is_file()
    assert re.search(r"\(FLAGS_1\)\s+Flags:.*NODELETE", section), "the library must be linked with -z nodelete"


def test_exports_the_backend_class_and_c_entry_points_only(library_path):
    symbols = subprocess.run(
        ["nm", "-DC", "--defined-only", str(library_path)], check=True, capture_output=True, text=True
    ).stdout.splitlines()
    names = [line.split(" ", 2)[2] for line in symbols if line.count(" ") >= 2]
    for expected in (
        "executorch_openvino::OpenvinoDelegateBackend::init(",
        "executorch_openvino::OpenvinoDelegateBackend::execute(",
        "executorch_openvino::OpenvinoDelegateBackend::destroy(",
        "executorch_openvino::OpenvinoDelegateBackend::is_available() const",
        "vtable for executorch_openvino::OpenvinoDelegateBackend",
        "executorch_openvino_backend_id",
        "executorch_openvino_last_error",
    ):
        assert any(name.startswith(expected) for name in names), f"{expected} is not exported"
    stray = [n for n in names if "executorch_openvino" not in n]
    assert stray == [], f"unexpected exported symbols: {stray[:5]}"


@pytest.mark.parametrize("needed_by_name", ["libopenvino", "libtbb"])
def test_loading_the_library_loads_no_openvino(library_path, needed_by_name):
    # Loading (and thereby registering) must not pull in OpenVINO: it is opened only when a program
    # that uses the delegate is loaded.
    script = (
        "import ctypes, sys; ctypes.CDLL(sys.argv[1]); "
        "maps = open('/proc/self/maps').read(); print(sys.argv[2] in maps)"
    )
    result = subprocess.run(
        ["python3", "-c", script, str(library_path), needed_by_name], capture_output=True, text=True
    )
    # Plain python3 may lack libexecutorch.so on its search path; the venv's RUNPATH entry finds it.
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_with_nothing_configured_the_library_finds_the_openvino_package_beside_it(library_path):
    # As installed in site-packages (the build tree mirrors it under build/site/): with no
    # OPENVINO_LIB_PATH and no path handed over, the system's bare name fails here and the
    # openvino pip package beside ours is found.
    script = (
        "import ctypes, sys; lib = ctypes.CDLL(sys.argv[1]); "
        "lib.executorch_openvino_describe_runtime.restype = ctypes.c_char_p; "
        "print(lib.executorch_openvino_describe_runtime().decode())"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENVINO_LIB_PATH"}
    result = subprocess.run(["python3", "-c", script, str(library_path)], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    described = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    assert described["loaded"] == "1", result.stdout
    assert "/openvino/libs/libopenvino_c.so." in described["library"]
