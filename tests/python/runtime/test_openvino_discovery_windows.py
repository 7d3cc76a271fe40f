"""The Python side's discovery of the pip-installed OpenVINO runtime, as it behaves on Windows, and
the `[openvino]` extra installing the runtime there.

Runs on Linux: `sys.platform` is patched to "win32" and the site-packages folder is a synthetic one
laid out like a Windows install (Lib\\site-packages\\openvino\\libs\\openvino_c.dll). The module is
loaded from its file, so these tests need neither the built library nor OpenVINO's Python module.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import sys
import tomllib
from pathlib import Path, PureWindowsPath

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[3]


def _load_openvino_runtime_module():
    path = REPO / "python" / "executorch_openvino" / "runtime" / "openvino_discovery.py"
    spec = importlib.util.spec_from_file_location("_eov_openvino_runtime_for_windows_tests", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


openvino_runtime = _load_openvino_runtime_module()


def _windows_site_packages(root: Path) -> Path:
    """A site-packages folder as pip lays out the openvino win_amd64 wheel (files are stand-ins)."""
    site = root / "Lib" / "site-packages"
    libs = site / "openvino" / "libs"
    libs.mkdir(parents=True)
    (site / "openvino" / "__init__.py").write_text("raise ImportError('a synthetic package, never imported')\n")
    for name in ("openvino_c.dll", "openvino.dll", "tbb12.dll", "openvino_intel_cpu_plugin.dll", "openvino_c.lib"):
        (libs / name).write_bytes(b"MZ stand-in")
    return site


@pytest.fixture
def on_windows(monkeypatch):
    monkeypatch.setattr(sys, "platform", "win32")


def test_finds_openvino_c_dll_in_the_libs_folder(tmp_path, on_windows):
    libs = _windows_site_packages(tmp_path) / "openvino" / "libs"
    # A Linux name in the same folder is not what Windows loads.
    (libs / "libopenvino_c.so.2641").write_bytes(b"\x7fELF")
    found = openvino_runtime.c_library_in(libs)
    assert found == libs / "openvino_c.dll"


def test_a_folder_without_openvino_c_dll_yields_nothing(tmp_path, on_windows):
    (tmp_path / "libopenvino_c.so.2641").write_bytes(b"\x7fELF")
    (tmp_path / "openvino.dll").write_bytes(b"MZ")
    assert openvino_runtime.c_library_in(tmp_path) is None
    assert openvino_runtime.c_library_in(tmp_path / "missing") is None


def test_find_pip_runtime_returns_openvino_libs_openvino_c_dll(tmp_path, monkeypatch, on_windows):
    site = _windows_site_packages(tmp_path)
    # The synthetic openvino package is the one importlib finds (nothing is imported).
    monkeypatch.delitem(sys.modules, "openvino", raising=False)
    monkeypatch.syspath_prepend(str(site))
    assert openvino_runtime.openvino_package_dir() == site / "openvino"
    found = openvino_runtime.find_pip_runtime()
    assert found is not None
    assert PureWindowsPath(*found.relative_to(site).parts) == PureWindowsPath(r"openvino\libs\openvino_c.dll")
    # ExecuTorch's bindings set OPENVINO_LIB_PATH only on Linux.
    assert openvino_runtime.executorch_auto_path() is None


def _openvino_extra() -> Requirement:
    with open(REPO / "pyproject.toml", "rb") as file:
        pyproject = tomllib.load(file)
    entries = pyproject["project"]["optional-dependencies"]["openvino"]
    requirements = [Requirement(entry) for entry in entries]
    matching = [requirement for requirement in requirements if requirement.name == "openvino"]
    assert len(matching) == 1, entries
    return matching[0]


def _environment(system: str, machine: str, sys_platform: str, os_name: str) -> dict:
    environment = default_environment()
    environment.update(
        platform_system=system,
        platform_machine=machine,
        sys_platform=sys_platform,
        os_name=os_name,
        python_version="3.11",
        python_full_version="3.11.9",
    )
    return environment


def test_the_openvino_extra_installs_the_runtime_on_windows_x64():
    requirement = _openvino_extra()
    assert requirement.marker is not None
    assert requirement.marker.evaluate(_environment("Windows", "AMD64", "win32", "nt"))
    # Still on Linux x86_64, and not where OpenVINO publishes no wheel (so the marker is not
    # trivially true).
    assert requirement.marker.evaluate(_environment("Linux", "x86_64", "linux", "posix"))
    assert not requirement.marker.evaluate(_environment("Linux", "aarch64", "linux", "posix"))
    assert not requirement.marker.evaluate(_environment("Windows", "ARM64", "win32", "nt"))


def test_the_openvino_extra_allows_the_version_the_windows_tests_run():
    # scripts/test_windows.sh runs the Windows loader tests against the win_amd64 wheel of the
    # openvino version installed here; the extra must accept that version.
    installed = importlib.metadata.version("openvino")
    assert _openvino_extra().specifier.contains(installed), (installed, str(_openvino_extra().specifier))
