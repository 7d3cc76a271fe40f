"""A start a user does not notice: `--help` and argument errors without torch or ExecuTorch in the
process, `import executorch_openvino` without them (the library loads once ExecuTorch's runtime is
imported), the runner's console script becoming the C++ binary without them, and third-party
start-up noise hidden one known message at a time, never ours. (Times were measured by a
retired study, bench/results/startup-2026-12-01.md, not here.)"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import executorch_openvino
from executorch_openvino.runtime import after_import
from executorch_openvino.cli import _third_party_noise

PACKAGE = str(Path(executorch_openvino.__file__).resolve().parents[1])
HEAVY = ("torch", "executorch", "numpy", "openvino")

# Runs the command line as `python -m executorch_openvino` does, then reports what was imported.
_COMMAND_LINE = r"""
import json, runpy, sys
sys.argv = ["executorch-openvino"] + sys.argv[1:]
try:
    runpy.run_module("executorch_openvino", run_name="__main__", alter_sys=True)
    status = 0
except SystemExit as exit_:
    status = exit_.code
print(json.dumps({"status": status, "modules": sorted({name.split(".")[0] for name in sys.modules})}), file=sys.stderr)
"""


def _python(*args: str, **env_overrides: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=PACKAGE, **env_overrides)
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=300)


def _command_line(*args: str) -> tuple:
    done = _python("-c", _COMMAND_LINE, *args)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["status"], set(report["modules"]), done


@pytest.mark.parametrize("args, status, shown", [
    (["--help"], 0, "doctor"),
    (["bench", "--help"], 0, "--option KEY=VALUE"),
    (["run", "--help"], 0, "--option KEY=VALUE"),
    (["bench"], 2, "the following arguments are required: MODEL.pte"),
    (["run", "model.pte", "--option", "num_threads"], 2, "is not KEY=VALUE"),
    (["bench", "model.pte", "--backends", "gpu"], 2, "choose from ours, fast, native"),
    (["no-such-command"], 2, "invalid choice"),
])
def test_help_and_argument_errors_import_neither_torch_nor_executorch(args, status, shown):
    got, modules, done = _command_line(*args)
    assert got == status, done.stdout + done.stderr
    assert shown in done.stdout + done.stderr
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


def test_importing_the_package_imports_nothing_heavy_and_the_library_follows_executorch():
    probe = (
        "import json, sys\n"
        "import executorch_openvino\n"
        "before = sorted({n.split('.')[0] for n in sys.modules} & set(sys.argv[1:]))\n"
        "loaded_before = executorch_openvino.runtime.library.loaded() is not None\n"
        "from executorch.runtime import Runtime\n"
        "print(json.dumps({'before': before, 'loaded_before': loaded_before,\n"
        "  'registered': executorch_openvino.BACKEND_ID in Runtime.get().backend_registry.registered_backend_names,\n"
        "  'waiting': executorch_openvino.runtime.after_import.waiting_for()}))\n"
    )
    done = _python("-c", probe, *HEAVY)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"before": [], "loaded_before": False, "registered": True, "waiting": []}


def test_importing_executorchs_llm_runner_alone_loads_the_library_too():
    """ExecuTorch's LLM runner module links the same runtime as its bindings: our library follows
    whichever of the two is imported first, and then waits for neither."""
    probe = (
        "import json\n"
        "import executorch_openvino\n"
        "import executorch.extension.llm.runner\n"
        "print(json.dumps({'loaded': executorch_openvino.runtime.library.loaded() is not None,\n"
        "  'waiting': executorch_openvino.runtime.after_import.waiting_for()}))\n"
    )
    done = _python("-c", probe)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["loaded"]
    library = executorch_openvino.runtime.library
    assert not {library.EXECUTORCH_BINDINGS, library.EXECUTORCH_LLM_RUNNER} & set(report["waiting"]), report


def test_the_runner_console_script_becomes_the_cpp_binary_without_torch():
    # The console script's code, run as pip's wrapper runs it; -X importtime lists every import on
    # stderr as it happens, so what the process imported before exec() is on record.
    script = "import sys; from executorch_openvino.cli.runner import main; sys.exit(main())"
    done = _python("-X", "importtime", "-c", script, "--help")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("usage: executorch-openvino-run MODEL.pte")  # the C++ runner's own text
    imported = {line.split("|")[-1].strip().split(".")[0] for line in done.stderr.splitlines() if "|" in line}
    assert "executorch_openvino" in imported
    assert not imported & set(HEAVY), sorted(imported & set(HEAVY))


# --- after_import ---------------------------------------------------------------------------------


def test_a_function_waits_for_its_module_and_runs_right_after_it_is_imported(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "awaited_module.py").write_text("import sys\nsys.modules[__name__].ready = True\n")
    (tmp_path / "failing_first.py").write_text("import os\nif not os.environ.get('LET_IT_IMPORT'): raise ImportError('not yet')\n")
    calls = []
    after_import.call_after_import("awaited_module", lambda: calls.append(sys.modules["awaited_module"].ready))
    after_import.call_after_import("failing_first", lambda: calls.append("failing_first"))
    assert calls == [] and {"awaited_module", "failing_first"} <= set(after_import.waiting_for())

    import awaited_module  # noqa: F401

    assert calls == [True]
    with pytest.raises(ImportError):
        import failing_first  # noqa: F401
    assert calls == [True] and "failing_first" in after_import.waiting_for()  # still waiting
    monkeypatch.setenv("LET_IT_IMPORT", "1")
    import failing_first  # noqa: F401,F811

    assert calls == [True, "failing_first"]
    after_import.call_after_import("awaited_module", lambda: calls.append("again"))  # imported: runs now
    assert calls[-1] == "again"
    for name in ("awaited_module", "failing_first"):
        monkeypatch.delitem(sys.modules, name)


# --- third-party noise ------------------------------------------------------------------------------


def test_only_the_known_third_party_messages_are_hidden(caplog):
    torchao = logging.getLogger("torchao")
    ours = logging.getLogger("executorch_openvino.cli")
    with caplog.at_level(logging.WARNING), _third_party_noise.known_messages_hidden():
        torchao.warning("Failed to load /site-packages/torchao/_C_mxfp8.cpython-310-x86_64-linux-gnu.so: nope")
        torchao.warning("Failed to load something else")
        ours.warning("Failed to load /site-packages/torchao/_C_mxfp8.so: ours is never hidden")
        with warnings.catch_warnings(record=True) as caught:  # records what the filters in force let through
            warnings.warn("`isinstance(treespec, LeafSpec)` is deprecated, use ...", FutureWarning)
            warnings.warn("a FutureWarning of the user's model", FutureWarning)
    shown = [record.getMessage() for record in caplog.records]
    assert shown == ["Failed to load something else", "Failed to load /site-packages/torchao/_C_mxfp8.so: ours is never hidden"]
    assert [str(w.message) for w in caught] == ["a FutureWarning of the user's model"]
    # Outside the block nothing is hidden.
    with caplog.at_level(logging.WARNING):
        torchao.warning("Failed to load /site-packages/torchao/_C_x.so: shown again")
    assert caplog.records[-1].getMessage().endswith("shown again")


def test_native_lines_written_to_descriptor_2_are_filtered_by_pattern(capfd):
    with _third_party_noise.native_stderr_filtered():
        os.write(2, b"[cpuinfo_utils.cpp:71] Reading file /sys/devices/soc0/image_version\n")
        os.write(2, b"[method.cpp:90] Backend X is not available.\n")
        os.write(2, b"[cpuinfo_utils.cpp:125] CPU info and manual query on # of cpus dont match.\nlast")
    err = capfd.readouterr().err
    assert err == "[method.cpp:90] Backend X is not available.\nlast"
