"""The names users import keep working: the package's API and the modules the docs name."""

from __future__ import annotations

import importlib

import pytest

import executorch_openvino

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
    "executorch_openvino.lowering_progress": ["listening"],
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


def test_a_name_that_never_existed_is_still_an_attribute_error():
    with pytest.raises(AttributeError):
        executorch_openvino.no_such_thing  # noqa: B018
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("executorch_openvino.no_such_module")
