"""The names users import keep working: the package's API, the modules the docs name, and, with a
DeprecationWarning, the flat module names of before the package was laid out as its pipeline (each
the very module at its new place, so state such as the loaded library is shared)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import executorch_openvino
from executorch_openvino import _moved

API = ["BACKEND_ID", "OpenvinoPartitioner", "ExecutorchOpenvinoBackend", "info", "set_options", "using_options",
       "get_options",
       "reset_options", "compiled_models", "OptionError", "DelegateError", "save_state", "restore_state",
       "forget_state", "StateError"]
DOCUMENTED = {
    "executorch_openvino.quantization": ["quantize_pt2e", "compress_weights_int8", "compress_weights_int4",
                                         "OverflowSafeQuantizer", "OVERFLOW_FIX_CHOICES"],
    "executorch_openvino.llm.export_llm": ["export_llm", "main"],
    "executorch_openvino.llm.hf_export": ["export_causal_lm", "static_cache_decoder"],
    "executorch_openvino.llm.runner_metadata": ["text_runner_metadata"],
    "executorch_openvino.container.blob": ["build_blob", "parse_blob"],
    "executorch_openvino.container": ["delegate_blobs", "DelegateBlob"],
    "executorch_openvino.runtime.cpu_capabilities": ["describe"],
    "executorch_openvino.cli": ["main"],
}


def test_the_api_is_the_package_namespace():
    assert sorted(executorch_openvino.__all__) == sorted(API)
    for name in API:
        assert getattr(executorch_openvino, name) is not None
    assert issubclass(executorch_openvino.DelegateError, RuntimeError)


@pytest.mark.parametrize("module", sorted(DOCUMENTED))
def test_documented_modules_hold_their_names(module):
    imported = importlib.import_module(module)
    missing = [name for name in DOCUMENTED[module] if not hasattr(imported, name)]
    assert missing == []


@pytest.mark.parametrize("old", sorted(_moved.MOVED))
def test_an_old_module_name_is_the_moved_module_with_a_warning(old):
    new = importlib.import_module(_moved.MOVED[old])
    short = old.rsplit(".", 1)[1]

    def forget():  # as in a process that never imported the old name
        sys.modules.pop(old, None)
        executorch_openvino.__dict__.pop(short, None)

    forget()
    with pytest.warns(DeprecationWarning, match=_moved.MOVED[old].replace(".", r"\.")):
        assert importlib.import_module(old) is new
    forget()
    with pytest.warns(DeprecationWarning):  # as an attribute of the package
        assert getattr(executorch_openvino, short) is new
    forget()


def test_an_old_name_with_from_import_works_in_a_fresh_process():
    code = ("import warnings; warnings.simplefilter('error', DeprecationWarning)\n"
            "try:\n    from executorch_openvino.blob import parse_blob\nexcept DeprecationWarning as w:\n"
            "    print('warned:', w)\n"
            "warnings.simplefilter('ignore')\n"
            "from executorch_openvino.blob import parse_blob\n"
            "from executorch_openvino.container.blob import parse_blob as new\n"
            "assert parse_blob is new; print('same')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "python")})
    assert result.returncode == 0, result.stderr
    assert "warned: executorch_openvino.blob moved to executorch_openvino.container.blob" in result.stdout
    assert result.stdout.strip().endswith("same")


def test_a_name_that_never_existed_is_still_an_attribute_error():
    with pytest.raises(AttributeError):
        executorch_openvino.no_such_thing  # noqa: B018
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("executorch_openvino.no_such_module")
