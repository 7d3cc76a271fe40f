"""The command line (`python -m executorch_openvino`, `executorch-openvino`): export a model defined
in a .py file, run the .pte and compare with eager PyTorch, time it against native OpenVINO, check
the installation with doctor, and the errors and exit codes of wrong arguments.

Most commands run in-process through executorch_openvino.cli.main; export and doctor also run in a
subprocess, as a user would start them."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

import executorch_openvino
from executorch_openvino import cli
from executorch_openvino.cli import cmake_package, doctor
from executorch_openvino.runtime.precision import default_precision
from lowering import assert_matches

REPO = Path(__file__).resolve().parents[3]

MODELS = textwrap.dedent(
    """
    import torch


    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
            self.fc = torch.nn.Linear(4, 5)

        def forward(self, x):
            return self.fc(torch.relu(self.conv(x)).mean((2, 3)))


    class HalfDelegated(torch.nn.Module):
        def forward(self, x, y):
            return torch.relu(x) + y, x.double().sum()


    def make():
        torch.manual_seed(0)
        return Tiny()


    def half_delegated():
        return HalfDelegated(), (torch.randn(2, 3), torch.randn(2, 3))


    def not_a_module():
        return 42
    """
)


def _subprocess(*args: str, **env_overrides: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "python")] + [p for p in [env.get("PYTHONPATH")] if p])
    env.update(env_overrides)
    return subprocess.run([sys.executable, "-m", "executorch_openvino", *args], env=env, capture_output=True,
                          text=True, timeout=300)


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"cli_test_models_{path.parent.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _assert_close(actual: np.ndarray, expected: np.ndarray) -> None:
    """Element by element, each held to its own size (lowering.assert_matches), dtype and shape too."""
    assert_matches([torch.from_numpy(actual)], [torch.from_numpy(expected)])


@pytest.fixture(scope="module")
def models_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("models") / "tiny_models.py"
    path.write_text(MODELS)
    return path


@pytest.fixture(scope="module")
def exported(models_file, tmp_path_factory):
    """`export models.py:make --out tiny.pte --example-input 1,3,8,8:float32`, in a subprocess."""
    out = tmp_path_factory.mktemp("export") / "tiny.pte"
    result = _subprocess("export", f"{models_file}:make", "--out", str(out), "--example-input", "1,3,8,8:float32")
    return out, result


# What export shows of its steps, in order, on a terminal: its own, and the lowering's stages inside
# them (executorch_openvino.lowering_progress).
EXPORT_STEPS = ("torch.export", "lowering to executorch_openvino", "decompositions and edge passes", "partitioning",
                "conversion", "IR passes", "writing the delegate blob", "writing ")


def test_export_in_a_subprocess_writes_the_pte_and_reports_the_delegation(exported):
    """Piped (no terminal), export prints its results and nothing else: no steps (they go to a
    terminal only, cli/progress.py) and no third-party lines (cli/_third_party_noise.py). Guards
    steps printed wherever stderr goes, and a message of torch or torchao let through."""
    out, result = exported
    assert result.returncode == 0, result.stdout + result.stderr
    assert out.is_file() and out.stat().st_size > 0
    assert result.stderr == ""
    assert result.stdout.splitlines() == [
        "model: Tiny, inputs [1,3,8,8] float32 (example inputs from --example-input)", f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB)",
        "delegated 5 of 5 operators (100 %) in 1 partition(s)"], result.stdout


def test_export_with_v_shows_the_steps_and_the_third_party_lines_in_a_pipe_too(models_file, tmp_path):
    """Guards -v losing what it shows: the steps, and the libraries' own messages (torch's
    FutureWarning on every lowering, here; its logs go through logging's INFO level)."""
    result = _subprocess("-v", "export", f"{models_file}:make", "--out", str(tmp_path / "tiny.pte"),
                         "--example-input", "1,3,8,8:float32")
    assert result.returncode == 0, result.stdout + result.stderr
    for step in EXPORT_STEPS:
        assert re.search(rf"^ *{step}.*\.\.\.", result.stderr, re.M), result.stderr
    theirs = [line for line in result.stderr.splitlines()
              if "Warning" in line and "executorch_openvino" not in line]
    assert theirs, result.stderr


def test_export_on_a_terminal_shows_each_step_and_stage_with_its_duration(models_file, tmp_path):
    """stderr a pseudo-terminal, stdout a pipe: the steps and the lowering's stages on the terminal,
    in order, each with its duration, and the results alone on stdout. Guards a stage left
    unannounced (or announced out of order) by the partitioner or preprocess, and steps on stdout."""
    import pty

    controller, terminal = pty.openpty()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "python")] + [p for p in [env.get("PYTHONPATH")] if p])
    out = tmp_path / "tiny.pte"
    process = subprocess.Popen([sys.executable, "-m", "executorch_openvino", "export", f"{models_file}:make", "--out",
                                str(out), "--example-input", "1,3,8,8:float32"], env=env, stdout=subprocess.PIPE,
                               stderr=terminal)
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal closed: the process ended
            break
        if not chunk:
            break
        shown += chunk
    stdout, _ = process.communicate(timeout=300)
    os.close(controller)
    assert process.returncode == 0, stdout.decode() + shown.decode()
    lines = shown.decode().replace("\r\n", "\n").splitlines()
    found = [next((i for i, line in enumerate(lines) if re.match(rf"^ *{step}.*\.\.\. \d+\.\d s$", line)), None)
             for step in EXPORT_STEPS[2:]]
    assert None not in found and found == sorted(found), lines
    assert re.search(r"^lowering to executorch_openvino .*: \d+\.\d s$", "\n".join(lines), re.M), lines
    assert " ... " not in stdout.decode() and "delegated 5 of 5 operators" in stdout.decode()


def test_export_names_the_operators_left_outside_and_why(models_file, tmp_path, capsys):
    out = tmp_path / "half.pte"
    assert cli.main(["export", f"{models_file}:half_delegated", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "example inputs from the factory" in printed
    assert "delegated 2 of 4 operators (50 %) in 1 partition(s)" in printed
    assert "aten.sum.dim_IntList: dtype torch.float64 is not exchanged with OpenVINO" in printed

    # bench: native OpenVINO needs one partition covering the whole method; here it says why not.
    assert cli.main(["bench", str(out), "--iterations", "2", "--warmup", "1"]) == 0
    printed = capsys.readouterr().out
    assert "| native OpenVINO (same IR and properties) | – | – | – | – | – | – |" in printed
    assert "operator call(s) on ExecuTorch's kernels" in printed


def test_run_writes_outputs_that_match_eager(exported, models_file, tmp_path, capsys):
    pte, _ = exported
    model = _load(models_file).make().eval()

    # Default inputs: deterministic values of the declared shape, written next to the outputs.
    assert cli.main(["run", str(pte), "--output-dir", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "input 0: [1,3,8,8] float32, default values" in printed
    assert re.search(r"^output 0: \[1,5\] float32  \[", printed, re.M), printed
    x = np.load(tmp_path / "out" / "input_0.npy")
    with torch.no_grad():
        expected = model(torch.from_numpy(x)).numpy()
    _assert_close(np.load(tmp_path / "out" / "output_0.npy"), expected)

    # Inputs from a .npy file (float64 is converted to the declared float32).
    given = np.random.default_rng(1).standard_normal((1, 3, 8, 8))
    np.save(tmp_path / "x.npy", given)
    assert cli.main(["run", str(pte), "--input", str(tmp_path / "x.npy"), "--output-dir", str(tmp_path / "given")]) == 0
    assert "(converted from float64)" in capsys.readouterr().out
    with torch.no_grad():
        expected = model(torch.from_numpy(given).float()).numpy()
    _assert_close(np.load(tmp_path / "given" / "output_0.npy"), expected)


def test_export_with_external_weights_writes_a_data_file_that_run_loads(models_file, tmp_path, capsys):
    pte = tmp_path / "tiny.pte"
    assert cli.main(["export", f"{models_file}:make", "--out", str(pte), "--example-input", "1,3,8,8:float32",
                     "--external-weights", "tiny_weights"]) == 0
    data = tmp_path / "tiny_weights.ptd"
    assert f"wrote {data}" in capsys.readouterr().out and data.is_file()
    model = _load(models_file).make().eval()
    assert cli.main(["run", str(pte), "--data", str(data), "--output-dir", str(tmp_path / "out")]) == 0
    with torch.no_grad():
        expected = model(torch.from_numpy(np.load(tmp_path / "out" / "input_0.npy"))).numpy()
    _assert_close(np.load(tmp_path / "out" / "output_0.npy"), expected)
    capsys.readouterr()
    assert cli.main(["run", str(pte)]) == 1  # without its data file: refused, saying how to load it
    assert "loaded without named data" in capsys.readouterr().err
    assert cli.main(["run", str(pte), "--data", str(tmp_path / "missing.ptd")]) == 2


def test_run_refuses_inputs_that_do_not_fit(exported, tmp_path, capsys):
    pte, _ = exported
    np.save(tmp_path / "wrong.npy", np.zeros((1, 3, 8, 9), np.float32))
    assert cli.main(["run", str(pte), "--input", str(tmp_path / "wrong.npy")]) == 2
    assert "shape [1,3,8,9], but input 0 of the method is [1,3,8,8] float32" in capsys.readouterr().err
    assert cli.main(["run", str(pte), "--method", "nope"]) == 2
    assert "has no method 'nope'; its methods: forward" in capsys.readouterr().err
    assert cli.main(["run", str(tmp_path / "missing.pte")]) == 2


def test_run_applies_options_to_the_programs_it_loads_and_only_to_them(exported, capsys):
    pte, _ = exported
    assert cli.main(["run", str(pte), "--option", "num_threads=1", "--option", "performance_hint=throughput"]) == 0
    printed = capsys.readouterr().out
    assert "options: num_threads=1, performance_hint=throughput" in printed
    model_line = next(line for line in printed.splitlines() if line.startswith("executorch_openvino model: CPU"))
    assert "INFERENCE_NUM_THREADS=1" in model_line and "PERFORMANCE_HINT=THROUGHPUT" in model_line
    assert executorch_openvino.get_options()["num_threads"] is None  # removed when the command ends
    assert cli.main(["run", str(pte), "--option", "numthreads=1"]) == 2
    assert "unknown option 'numthreads'" in capsys.readouterr().err


def test_precision_is_a_flag_of_export_and_of_the_commands_that_load(models_file, tmp_path, capsys):
    from executorch_openvino.container import delegate_blobs

    out = tmp_path / "fast.pte"
    assert cli.main(["export", f"{models_file}:make", "--out", str(out), "--example-input", "1,3,8,8:float32",
                     "--precision", "FAST"]) == 0
    found = delegate_blobs(out)
    assert found
    specs = {spec.key: bytes(spec.value).decode() for ours in found for spec in ours.delegate.compile_specs}
    assert specs["precision"] == "fast" and "INFERENCE_PRECISION_HINT" not in specs, specs
    capsys.readouterr()
    assert cli.main(["run", str(out)]) == 0
    assert f"INFERENCE_PRECISION_HINT={default_precision('CPU')}" in capsys.readouterr().out
    assert cli.main(["run", str(out), "--precision", "exact"]) == 0
    printed = capsys.readouterr().out
    assert "options: precision=exact" in printed and "INFERENCE_PRECISION_HINT=f32" in printed
    assert executorch_openvino.get_options()["precision"] is None  # removed when the command ends
    for command in (["run", str(out)], ["export", f"{models_file}:make", "--out", str(out)]):
        assert cli.main(command + ["--precision", "quick"]) == 2
        assert "'quick': choose exact (f32, eager's results) or fast" in capsys.readouterr().err


def test_bench_prints_the_table_with_native_openvino(exported, capsys):
    pte, _ = exported
    assert cli.main(["bench", str(pte), "--iterations", "5"]) == 0
    printed = capsys.readouterr().out
    assert "| backend | calls | median ms | p90 ms | ratio to native | per round | max \\|diff\\| vs executorch_openvino |" in printed
    number = r"\d+\.\d{3}"
    assert re.search(rf"^\| executorch_openvino \(executorch.runtime\) \| 5 \| {number} \| {number} \| {number}× \| "
                     rf"{number} \[{number}–{number}\]× \| \(reference\) \|$", printed, re.M), printed
    assert re.search(rf"^\| native OpenVINO \(same IR and properties\) \| 5 \| {number} \| {number} \| 1\.000× \| "
                     r"1\.000 \[1\.000–1\.000\]× \| \d\.\de[+-]\d\d \|$", printed, re.M), printed
    assert "XNNPACK (executorch.runtime): n/a: pass --model MODULE:FACTORY" in printed


def test_bench_plot_without_matplotlib_says_so_and_succeeds(exported, tmp_path, capsys, monkeypatch):
    pte, _ = exported
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now raises ImportError
    plot = tmp_path / "bench.png"
    assert cli.main(["bench", str(pte), "--iterations", "2", "--warmup", "0", "--plot", str(plot)]) == 0
    printed = capsys.readouterr().out
    assert "| native OpenVINO" in printed
    assert "matplotlib is not installed" in printed
    assert not plot.exists()


def test_doctor_in_the_source_tree_says_it_is_one_and_passes(capsys):
    assert cli.main(["doctor", "--skip", "cmake"]) == 0
    printed = capsys.readouterr().out
    for check in ("ExecuTorch", "OpenVINO runtime", "OpenVINO devices", "delegate library", "backend registered"):
        assert re.search(rf"^OK +{check} ", printed, re.M), printed
    assert re.search(r"^SKIP +CMake package", printed, re.M)
    assert "all checks OK" in printed

    status = cli.main(["doctor"])
    printed = capsys.readouterr().out
    if cmake_package.cmake_config().is_file():  # an installed wheel
        assert status == 0 and re.search(r"^OK +CMake package", printed, re.M)
    else:  # this checkout (PYTHONPATH=python): what it is, not a failure
        assert status == 0, printed
        assert re.search(r"^INFO +CMake package +none in a source checkout .*pip install \.", printed, re.M), printed
        assert "executorch-openvino (a source checkout, " in printed
        assert "all checks OK" in printed


def test_doctor_fails_for_an_installed_wheel_without_its_cmake_package(capsys, monkeypatch, tmp_path):
    # A wheel installed without share/cmake (a broken or hand-made install) is a failure with the fix.
    monkeypatch.setattr(doctor, "_our_version", lambda: "1.2.3")
    monkeypatch.setattr(doctor, "cmake_config", lambda: tmp_path / "executorch_openvinoConfig.cmake")
    assert cli.main(["doctor"]) == 1
    printed = capsys.readouterr().out
    assert re.search(r"^FAIL +CMake package .*executorch_openvinoConfig\.cmake does not exist .*"
                     r"fix: install the wheel \(pip install \.\)", printed, re.M), printed
    assert "1 check(s) FAILED: CMake package" in printed


def test_doctor_in_a_subprocess_names_a_missing_openvino_runtime_and_the_fix():
    result = _subprocess("doctor", "--skip", "cmake", OPENVINO_LIB_PATH="/nonexistent")
    assert result.returncode != 0
    line = next((l for l in result.stdout.splitlines() if l.startswith("FAIL") and "OpenVINO runtime" in l), None)
    assert line is not None, result.stdout + result.stderr
    assert "/nonexistent" in line and "fix: set OPENVINO_LIB_PATH" in line
    assert re.search(r"^OK +delegate library", result.stdout, re.M)
    assert "FAILED: OpenVINO runtime" in result.stdout


@pytest.mark.parametrize("where", ["not beside the library", "a broken file named by the variable"])
def test_doctor_in_a_subprocess_fails_naming_an_unusable_state_helper_and_the_fix(library_path, tmp_path, where):
    # Rollback, save_state and paged attention need libexecutorch_openvino_state; doctor opens it and
    # probes it with the runtime loaded, and says where it looked and what to do.
    if where == "not beside the library":  # a copy of the library in a folder without the helper
        (tmp_path / "lib").mkdir()
        copy = tmp_path / "lib" / library_path.name
        shutil.copy(library_path, copy)
        helper = tmp_path / "lib" / "libexecutorch_openvino_state.so"
        env = {"EXECUTORCH_OPENVINO_LIBRARY": str(copy), "EXECUTORCH_OPENVINO_STATE_LIBRARY": ""}
        fix = "fix: rebuild (make build) or reinstall the wheel, which put libexecutorch_openvino_state beside"
    else:
        helper = tmp_path / "libexecutorch_openvino_state.so"
        helper.write_bytes(b"not a shared library\n" * 8)
        env = {"EXECUTORCH_OPENVINO_LIBRARY": str(library_path), "EXECUTORCH_OPENVINO_STATE_LIBRARY": str(helper)}
        fix = "fix: point EXECUTORCH_OPENVINO_STATE_LIBRARY at the libexecutorch_openvino_state built with this library"
    result = _subprocess("doctor", "--skip", "cmake", **env)
    assert result.returncode == 1, result.stdout + result.stderr
    line = next((l for l in result.stdout.splitlines() if re.match(r"^FAIL +state helper ", l)), None)
    assert line is not None, result.stdout + result.stderr
    assert f"the state helper {helper} could not be opened" in line and fix in line, line
    assert re.search(r"^OK +delegate library", result.stdout, re.M)
    # A library copied alone has no generation engine beside it either: that line fails too.
    assert re.search(r"^\d check\(s\) FAILED: state helper(, generation engine)?$", result.stdout, re.M), result.stdout


def test_doctor_in_a_subprocess_exits_0_when_all_checks_pass():
    result = _subprocess("doctor", "--skip", "cmake")
    assert result.returncode == 0, result.stdout + result.stderr
    # Ten checks pass (the CPU line is WARN where int8 sums saturate, which does not fail doctor).
    assert result.stdout.count("\nOK ") + result.stdout.count("\nWARN ") == 10, result.stdout
    assert re.search(r"^OK +generation engine +\S+libexecutorch_openvino_generation.so; structured output by "
                     r"llguidance", result.stdout, re.M), result.stdout
    # What the checks are of: the packages it runs with first, then this package's own.
    theirs, ours = result.stdout.split("Packages it runs with (not part of executorch-openvino):\n")[1].split(
        "\nexecutorch-openvino (")
    assert [re.match(r"^\w+ +(.+?)  ", line).group(1) for line in theirs.splitlines()] == \
        ["ExecuTorch", "OpenVINO runtime", "OpenVINO devices", "CPU for OpenVINO", "precision=fast"]
    # What precision=fast computes in here, as OpenVINO says.
    fast = default_precision("CPU")
    assert re.search(r"^INFO +precision=fast +CPU: " + ("f32, the same as exact" if fast == "f32" else
                                                         f"{fast} instead of exact's f32"), result.stdout, re.M)
    assert "delegate library" in ours and "CMake package" in ours
    # torchao's "Failed to load ..." lines (ExecuTorch imports it) are hidden, and doctor says so;
    # -v shows them and says whose they are.
    assert "Failed to load" not in result.stdout + result.stderr
    verbose = _subprocess("-v", "doctor", "--skip", "cmake")
    assert verbose.returncode == 0, verbose.stdout + verbose.stderr
    assert "not from executorch-openvino" in verbose.stdout
    if "Failed to load" in verbose.stderr and "torchao" in verbose.stderr:  # this torchao is noisy
        assert "start-up message(s) of torchao and torch, which ExecuTorch imports, were hidden" in result.stdout
    # The state helper beside the library, opened and probed with the runtime loaded.
    assert re.search(r"^OK +state helper +\S+/libexecutorch_openvino_state\.so \(built for OpenVINO \S+; a probe "
                     r"model's variable read back", result.stdout, re.M), result.stdout
    # Where ExecuTorch's own OpenVINO delegate is loaded (as in Python), it keeps its id.
    assert re.search(r"^OK +OpenvinoBackend name +held by .*libexecutorch_backend_openvino", result.stdout, re.M)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("no_such_module_xyz:make", "cannot import module 'no_such_module_xyz': ModuleNotFoundError"),
        ("{models}:missing", "has no attribute 'missing'"),
        ("{models}", "is not MODULE:FACTORY"),
        ("{folder}/absent.py:make", "absent.py: no such file"),
        ("{models}:not_a_module", "returned a int; expected a torch.nn.Module"),
        ("{models}:make", "pass one --example-input SHAPE:DTYPE per input"),
    ],
)
def test_a_bad_model_argument_is_a_clear_error_with_status_2(models_file, tmp_path, capsys, spec, message):
    spec = spec.format(models=models_file, folder=models_file.parent)
    assert cli.main(["export", spec, "--out", str(tmp_path / "x.pte")]) == 2
    error = capsys.readouterr().err
    assert error.startswith("executorch-openvino export: error: ") and message in error, error
    assert not (tmp_path / "x.pte").exists()


def test_bad_options_are_usage_errors(models_file, tmp_path, capsys):
    out = str(tmp_path / "x.pte")
    assert cli.main(["export", f"{models_file}:make", "--out", out, "--compile-option", "lower_case=1"]) == 2
    assert "unknown compile option 'lower_case'" in capsys.readouterr().err
    assert cli.main(["export", f"{models_file}:make", "--out", out, "--example-input", "1,3,x:float32"]) == 2
    assert "comma-separated integers" in capsys.readouterr().err
    assert cli.main(["export", f"{models_file}:make", "--out", out, "--example-input", "1,3:complex7"]) == 2
    assert "unknown dtype 'complex7'" in capsys.readouterr().err
    assert cli.main(["export", f"{models_file}:make"]) == 2  # argparse: --out is required
    assert "--out" in capsys.readouterr().err
    assert cli.main([]) == 2  # no command: the help
    assert "doctor" in capsys.readouterr().err


def test_cmake_prefix_path_prints_the_package_folder(capsys):
    import executorch_openvino

    status = cli.main(["--cmake-prefix-path"])
    captured = capsys.readouterr()
    assert captured.out.strip() == str(Path(executorch_openvino.__file__).resolve().parent)
    config = Path(captured.out.strip()) / "share" / "cmake" / "executorch_openvino" / "executorch_openvinoConfig.cmake"
    if config.is_file():
        assert status == 0
    else:
        assert status == 1 and "exists only in an installed wheel" in captured.err


def test_verbose_is_accepted_before_and_after_the_command():
    parser = cli.build_parser()
    assert parser.parse_args(["-v", "run", "x.pte"]).verbose is True
    assert parser.parse_args(["run", "x.pte", "-v"]).verbose is True
    assert parser.parse_args(["run", "x.pte"]).verbose is False


def test_bench_plot_draws_a_png(exported, tmp_path, capsys):
    import matplotlib  # noqa: F401  (pinned in requirements.txt; optional for users: the [plot] extra)
    pte, _ = exported
    plot = tmp_path / "bench.png"
    assert cli.main(["bench", str(pte), "--iterations", "2", "--warmup", "0", "--plot", str(plot)]) == 0
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_doctor_fails_the_generation_engine_line_without_llguidance(tmp_path):
    """Structured output and text from a tokenizer.json need llguidance: with its module unimportable
    (a shadowing package that raises, the fault a missing install gives), doctor's generation line
    fails, naming why and the pip command, and the other lines stay OK. A doctor that only loaded the
    engine library would pass this line (tried: the check without the constraint)."""
    shadow = tmp_path / "llguidance"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise ImportError('llguidance is not installed (shadowed by the test)')\n")
    result = _subprocess("doctor", "--skip", "cmake",
                         PYTHONPATH=os.pathsep.join([str(tmp_path), str(REPO / "python"), os.environ.get("PYTHONPATH", "")]))
    assert result.returncode == 1, result.stdout + result.stderr
    line = next((l for l in result.stdout.splitlines() if re.match(r"^FAIL +generation engine ", l)), None)
    assert line is not None, result.stdout + result.stderr
    assert "structured output needs llguidance" in line and "fix: pip install llguidance==1.9.1" in line, line
    assert "1 check(s) FAILED: generation engine" in result.stdout
