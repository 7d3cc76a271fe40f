"""The installed artefact is what is tested: build the wheel, install it into a virtual environment
made here with its pinned dependencies, and use it from there as a user would (Python, a C++
application built with CMake against the installed packages only, the runner, the command line),
then check what ships as a release pipeline would."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
TORCH_PIN = "torch==2.13.0"  # the CPU build on this machine (an unpinned torch pulls a CUDA build)

# Everything the wheel may contain besides the Python modules of the package.
EXPECTED_NATIVE_FILES = {
    "executorch_openvino/lib/libexecutorch_openvino.so",
    "executorch_openvino/lib/libexecutorch_openvino_state.so",
    "executorch_openvino/lib/libexecutorch_openvino_generation.so",
    "executorch_openvino/bin/executorch-openvino-run",
    "executorch_openvino/include/executorch_openvino/backend.h",
    "executorch_openvino/include/executorch_openvino/generation.h",
    "executorch_openvino/share/cmake/executorch_openvino/executorch_openvinoConfig.cmake",
    "executorch_openvino/share/cmake/executorch_openvino/executorch_openvinoConfigVersion.cmake",
}
METADATA_FILES = {"METADATA", "WHEEL", "RECORD", "entry_points.txt"}
# The one file outside the package: optimum-cli's plug-in module registering the openvino recipes.
OPTIMUM_PLUGIN = "optimum/commands/register/register_executorch_openvino.py"


def run(command, **kwargs) -> subprocess.CompletedProcess:
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    return subprocess.run([str(c) for c in command], **kwargs)


def ok(command, **kwargs) -> str:
    result = run(command, **kwargs)
    assert result.returncode == 0, f"{command} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    ok([sys.executable, "-m", "pip", "wheel", REPO, "--no-build-isolation", "--no-deps", "-q", "-w", out])
    (built,) = out.glob("executorch_openvino-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A new virtual environment with the wheel and its pinned dependencies (and CMake to build the
    C++ example). Runs from a folder outside the repository, with a clean environment."""
    folder = tmp_path_factory.mktemp("venv") / "env"
    ok([sys.executable, "-m", "venv", folder])
    ok([folder / "bin/python", "-m", "pip", "install", "-q", "--disable-pip-version-check",
        TORCH_PIN, f"{wheel}[openvino]", "cmake>=3.28", "ninja"], timeout=1800)
    return folder


def clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "OPENVINO_LIB_PATH", "EXECUTORCH_OPENVINO_LIBRARY", "LD_LIBRARY_PATH")}
    env.update(extra)
    return env


def site_packages(venv: Path) -> Path:
    return Path(ok([venv / "bin/python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip())


_EXPORT_AND_RUN = textwrap.dedent(
    """
    import sys, numpy as np, torch
    import executorch_openvino
    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime

    assert executorch_openvino.__file__.startswith(sys.argv[2]), executorch_openvino.__file__
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 4)).eval()
    x = torch.randn(1, 3, 16, 16)
    lowered = to_edge_transform_and_lower(torch.export.export(model, (x,)),
                                          partitioner=[executorch_openvino.OpenvinoPartitioner()])
    open(sys.argv[1] + "/model.pte", "wb").write(lowered.to_executorch().buffer)
    ours = Runtime.get().load_program(sys.argv[1] + "/model.pte").load_method("forward").execute([x])[0]
    eager = model(x).detach()
    assert (ours - eager).abs().max().item() <= 1e-4, (ours, eager)
    np.save(sys.argv[1] + "/x.npy", x.numpy())
    x.numpy().tofile(sys.argv[1] + "/x.bin")
    np.save(sys.argv[1] + "/expected.npy", eager.numpy())
    print("python path OK")
    """
)


@pytest.fixture(scope="module")
def exported(venv, tmp_path_factory) -> Path:
    """A .pte exported and run through executorch.runtime from the installed packages."""
    folder = tmp_path_factory.mktemp("model")
    out = ok([venv / "bin/python", "-c", _EXPORT_AND_RUN, folder, site_packages(venv)], cwd=folder, env=clean_env())
    assert "python path OK" in out
    return folder


def test_a_model_runs_through_executorch_runtime_and_matches_eager(exported):
    assert (exported / "model.pte").is_file()


def test_the_cpp_example_builds_against_the_installed_packages_and_matches_eager(venv, exported, tmp_path):
    prefix = ok([venv / "bin/python", "-m", "executorch_openvino", "--cmake-prefix-path"], env=clean_env()).strip()
    assert prefix.startswith(str(site_packages(venv)))
    source = tmp_path / "app"  # a copy: nothing may point into the source tree
    shutil.copytree(REPO / "examples" / "cpp", source)
    build = tmp_path / "build"
    ok([venv / "bin/cmake", "-S", source, "-B", build, "-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={venv / 'bin/ninja'}",
        f"-DCMAKE_PREFIX_PATH={prefix}"], env=clean_env())
    ok([venv / "bin/cmake", "--build", build], env=clean_env())
    cache = (build / "CMakeCache.txt").read_text()
    assert str(REPO) not in cache, "the example was configured with a path into the source tree"
    out = ok([build / "run_pte", exported / "model.pte", exported / "x.bin", tmp_path / "out.bin"], env=clean_env())
    assert "forward:" in out
    got = np.fromfile(tmp_path / "out.bin", dtype=np.float32)
    expected = np.load(exported / "expected.npy").reshape(-1)
    assert np.abs(got - expected).max() <= 1e-4
    # The generation example, linked to executorch_openvino::generation from the installed wheel, loads the
    # engine and says why this program is not a language model's.
    refused = run([build / "generate", exported / "model.pte", "--ids", "1 2 3"], env=clean_env())
    assert refused.returncode == 1 and "is not a language model's method" in refused.stderr, refused.stderr


def test_the_runner_runs_the_same_program_and_matches(venv, exported, tmp_path):
    out = ok([venv / "bin/executorch-openvino-run", exported / "model.pte", "--input", exported / "x.npy",
              "--output-dir", tmp_path, "--iterations", "5"], env=clean_env())
    for label in ("load", "first", "p50", "p90", "p99"):
        assert label in out.lower(), out
    got = np.load(tmp_path / "output0.npy")
    assert np.abs(got - np.load(exported / "expected.npy")).max() <= 1e-4


def test_the_wheel_holds_exactly_the_expected_files(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    unexpected = []
    for name in names:
        top, _, rest = name.partition("/")
        if top.endswith(".dist-info"):
            ok_name = rest in METADATA_FILES or rest.startswith("licenses/")
        else:
            ok_name = name in EXPECTED_NATIVE_FILES or name == OPTIMUM_PLUGIN or (
                top == "executorch_openvino" and name.endswith(".py") and "__pycache__" not in name
            )
        if not ok_name:
            unexpected.append(name)
    assert unexpected == []
    assert EXPECTED_NATIVE_FILES | {OPTIMUM_PLUGIN} <= set(names)
    requires = [line for line in zipfile.ZipFile(wheel).read(
        next(n for n in names if n.endswith("METADATA"))).decode().splitlines() if line.startswith("Requires-Dist")]
    assert "Requires-Dist: executorch==1.5.1" in requires
    assert "Requires-Dist: optimum-executorch==1.1.0; extra == \"optimum\"" in requires


def test_the_optimum_cli_plugin_is_harmless_without_optimum_executorch(venv):
    # optimum-cli imports every module of its register namespace at start-up: without
    # optimum-executorch (this environment) ours must import cleanly and register no command.
    out = ok([venv / "bin/python", "-c", "import importlib, sys; sys.modules.pop('optimum', None); "
              "m = importlib.import_module('optimum.commands.register.register_executorch_openvino'); "
              "print(m.REGISTER_COMMANDS)"], env=clean_env())
    assert out.strip() == "[]"


def _dynamic(path: Path) -> str:
    return ok(["readelf", "-d", path])


def test_the_installed_library_links_right_and_is_small(venv):
    library = site_packages(venv) / "executorch_openvino/lib/libexecutorch_openvino.so"
    section = _dynamic(library)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", section)
    assert "libexecutorch.so" in needed
    assert [n for n in needed if "openvino" in n or (n.startswith("libexecutorch") and n != "libexecutorch.so")] == []
    runpath = re.search(r"\(RUNPATH\)\s+Library runpath: \[([^\]]+)\]", section).group(1)
    assert all(entry.startswith("$ORIGIN") for entry in runpath.split(":")), runpath
    stripped = library.parent / "stripped.so"
    ok(["strip", "-o", stripped, library])
    size = stripped.stat().st_size
    stripped.unlink()
    print(f"\nstripped size of libexecutorch_openvino.so: {size / 1024:.0f} KiB")
    assert size < 1024 * 1024


def test_the_state_helper_links_the_openvino_package_beside_it_and_opens(venv):
    """libexecutorch_openvino_state, the one file that links OpenVINO (its C++ runtime, for the
    variable state and the paged-attention rewrite its C API lacks): found through the openvino package
    beside ours, opened, and speaking the interface version of src/openvino_state/state_abi.h."""
    helper = site_packages(venv) / "executorch_openvino/lib/libexecutorch_openvino_state.so"
    section = _dynamic(helper)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", section)
    assert [n for n in needed if n.startswith("libopenvino")] and not [n for n in needed if "executorch" in n], needed
    runpath = re.search(r"\(RUNPATH\)\s+Library runpath: \[([^\]]+)\]", section).group(1)
    assert runpath == "$ORIGIN/../../openvino/libs", runpath
    header = (REPO / "src/openvino_state/state_abi.h").read_text()
    expected = re.search(r"#define EOV_STATE_ABI_VERSION (\d+)", header).group(1)
    probe = (f"import ctypes; h = ctypes.CDLL({str(helper)!r}); "
             "print(h.eov_state_abi_version(), hasattr(h, 'eov_state_page_attention'))")
    version = ok([venv / "bin/python", "-c", probe], env=clean_env())
    assert version.split() == [expected, "True"], version


def test_the_backend_class_is_defined_in_exactly_one_library(venv):
    packages = site_packages(venv)
    definers = []
    for library in list((packages / "executorch").rglob("*.so")) + list((packages / "executorch_openvino").rglob("*.so")):
        symbols = run(["nm", "-DC", "--defined-only", library]).stdout
        if "executorch_openvino::OpenvinoDelegateBackend" in symbols:
            definers.append(library.relative_to(packages))
    assert definers == [Path("executorch_openvino/lib/libexecutorch_openvino.so")]


def test_doctor_is_all_ok_and_names_the_check_that_fails(venv):
    python = venv / "bin/python"
    healthy = run([python, "-m", "executorch_openvino", "doctor"], env=clean_env())
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr
    assert "FAIL" not in healthy.stdout
    broken = run([python, "-m", "executorch_openvino", "doctor"], env=clean_env(OPENVINO_LIB_PATH="/nonexistent"))
    assert broken.returncode != 0
    failing = [line for line in broken.stdout.splitlines() if "FAIL" in line]
    assert failing and any("OpenVINO" in line for line in failing), broken.stdout


def test_the_console_scripts_start_without_importing_torch(venv):
    # Each console script run as its wrapper runs it, with -X importtime listing every import
    # (the runner's is on record up to the moment it becomes the C++ binary).
    for script, expected in (("executorch-openvino", "doctor"), ("executorch-openvino-run", "usage: executorch-openvino-run"),
                             ("executorch-openvino-worker", "usage: executorch-openvino-worker")):
        done = run([venv / "bin/python", "-X", "importtime", venv / "bin" / script, "--help"], env=clean_env())
        assert done.returncode == 0, done.stdout + done.stderr
        assert expected in done.stdout, done.stdout
        imported = {line.split("|")[-1].strip().split(".")[0] for line in done.stderr.splitlines() if "|" in line}
        assert "executorch_openvino" in imported and not imported & {"torch", "executorch"}, sorted(imported)
