"""The state helper's paged-attention rewrite (src/openvino_state/paged_attention.cpp) on its own, through
its C interface (state_abi.h) and OpenVINO's C API, as the delegate calls it: a Hugging Face program's
grown IR is rewritten, its computed mask kept as the last output; the same IR with a mask that is more
than a causal mask (a bias, an inverted mask, numbers added as they are, another input, a different
mask on one attention) is left as it is, saying why. The model is never half rewritten: a model left
keeps its outputs."""

from __future__ import annotations

import ctypes
import re
from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from openvino import opset13 as ops

from executorch_openvino.container.ir_names import PAGED_MASK_OUTPUT as MASK_OUTPUT
from executorch_openvino.runtime import openvino_discovery
from llm_lowering import lowered

OK, LEFT = 0, 2


class _Paging(ctypes.Structure):
    _fields_ = [("cache_type", ctypes.c_char_p), ("block_size", ctypes.c_int32)]


@pytest.fixture(scope="module")
def rewrite(library_path):
    """page(model) -> (result code, the helper's reason, the rewritten model's output names)."""
    openvino_c = ctypes.CDLL(str(openvino_discovery.find_pip_runtime()), mode=ctypes.RTLD_GLOBAL)
    helper = ctypes.CDLL(str(Path(library_path).parent / "libexecutorch_openvino_state.so"))
    helper.eov_state_page_attention.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Paging), ctypes.c_char_p,
                                                ctypes.c_size_t]
    core = ctypes.c_void_p()
    assert openvino_c.ov_core_create(ctypes.byref(core)) == 0

    def page(model: ov.Model, folder: Path):
        xml = folder / "model.xml"
        ov.save_model(model, str(xml), compress_to_fp16=False)
        handle = ctypes.c_void_p()
        assert openvino_c.ov_core_read_model(core, str(xml).encode(), str(xml.with_suffix(".bin")).encode(),
                                             ctypes.byref(handle)) == 0
        try:
            error = ctypes.create_string_buffer(2048)
            code = helper.eov_state_page_attention(handle, ctypes.byref(_Paging(b"f32", 32)), error, len(error))
            count = ctypes.c_size_t()
            assert openvino_c.ov_model_outputs_size(handle, ctypes.byref(count)) == 0
            names = []
            for index in range(count.value):
                port, name = ctypes.c_void_p(), ctypes.c_char_p()
                assert openvino_c.ov_model_const_output_by_index(handle, ctypes.c_size_t(index), ctypes.byref(port)) == 0
                assert openvino_c.ov_port_get_any_name(port, ctypes.byref(name)) == 0
                names.append(name.value.decode())
                openvino_c.ov_output_const_port_free(port)
            return code, error.value.decode(), names
        finally:
            openvino_c.ov_model_free(handle)

    yield page
    openvino_c.ov_core_free(core)


def _grown():
    """A copy of the Hugging Face Llama's grown IR, its attentions, and the additive Select their mask
    comes through (one each)."""
    model = lowered("hf_static_cache").ir.clone()
    attentions = [n for n in model.get_ordered_ops() if n.get_type_name() == "ScaledDotProductAttention"]
    selects = {a.input_value(3).get_node().get_friendly_name(): a.input_value(3).get_node() for a in attentions}
    assert len(attentions) > 1 and all(s.get_type_name() == "Select" for s in selects.values())
    return model, attentions, list(selects.values())


def _constant(value):
    return ops.constant(np.array(value, np.float32)).output(0)


def test_a_causal_mask_the_model_computes_is_kept_as_its_last_output(rewrite, tmp_path):
    model, _, _ = _grown()
    outputs = len(model.outputs)
    code, why, names = rewrite(model, tmp_path)
    assert (code, why) == (OK, "")
    assert len(names) == outputs + 1 and names[-1] == MASK_OUTPUT


@pytest.mark.parametrize("change, reason", [
    # What the mask's Select adds, as found.
    ("bias", r"adds 0\.5 where attended and -inf where hidden, not 0 and -inf"),
    ("inverted", r"adds -inf where attended and 0 where hidden, not 0 and -inf"),
    ("as numbers", "converted to numbers"),
    ("another input", "depends on input 'window'"),
    # How many attentions read which mask, named; no guess at why they differ.
    ("one attention's own", r"^the (\d+) attentions read 2 different masks: (\d+) reads? \w+ '[^']+' "
                            r"\(boolean\[[^]]+\]\); 1 reads LogicalNot '[^']+' \(boolean\[[^]]+\]\)$"),
])
def test_a_mask_that_is_more_than_causal_leaves_the_model_as_it_is(rewrite, tmp_path, change, reason):
    model, attentions, selects = _grown()
    condition = selects[0].input_value(0)
    window = ops.parameter(ov.PartialShape([condition.get_partial_shape()[-1]]), ov.Type.boolean, name="window")
    anded = {}  # one and'ed mask for all attentions
    for select in selects if change != "one attention's own" else []:
        condition, attended, hidden = select.input_value(0), select.input_value(1), select.input_value(2)
        if change == "bias":  # 0.5 added where attended
            select.input(1).replace_source_output(_constant(0.5))
        elif change == "inverted":  # -inf where the mask is true
            select.input(1).replace_source_output(hidden)
            select.input(2).replace_source_output(attended)
        elif change == "as numbers":  # the booleans added as 1 and 0
            for attention in attentions:
                attention.input(3).replace_source_output(ops.convert(condition, ov.Type.f32).output(0))
        else:  # the mask over the whole context (before the grown rewrite's cut) and'ed with an input
            cut = condition.get_node()
            whole = cut.input_value(0)
            key = (whole.get_node().get_friendly_name(), whole.get_index())
            anded.setdefault(key, ops.logical_and(whole, window).output(0))
            cut.input(0).replace_source_output(anded[key])
    if change == "another input":
        window.output(0).set_names({"window"})
        model.add_parameters([window])
    elif change == "one attention's own":
        whole = condition.get_node().input_value(0)  # before the cut
        other = ops.select(ops.logical_not(whole), _constant(0.0), _constant(-np.inf))
        attentions[-1].input(3).replace_source_output(other.output(0))
    model.validate_nodes_and_infer_types()
    outputs = len(model.outputs)
    code, why, names = rewrite(model, tmp_path)
    found = re.search(reason, why)
    assert code == LEFT and found, why
    if change == "one attention's own":
        assert int(found.group(1)) == len(attentions) and int(found.group(2)) == len(attentions) - 1, why
    assert len(names) == outputs and MASK_OUTPUT not in names
