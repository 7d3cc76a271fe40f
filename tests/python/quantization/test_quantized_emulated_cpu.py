"""The quantized cases of test_quantized.py on an AVX2 CPU without VNNI, emulated by QEMU
(tests/python/emulated_cpu.py), whatever this machine's CPU is: there OpenVINO's int8 kernels sum
u8 x s8 products in 16 bits, which saturates with full-range weights. The cases are made here,
then run there in one process (the delegate through executorch.runtime, and native OpenVINO), and
checked here against the same expectations as on this CPU, keyed by what the probe measured there.
"""

from __future__ import annotations

import pytest

import emulated_cpu
import quantized_cases as cases
import quantized_runs

STATIC = list(cases.STATIC_RECIPES)
WEIGHTS = [(recipe, weights_only) for recipe in cases.WEIGHT_RECIPES for weights_only in (False, True)]
# The MLP's float arithmetic is slow to emulate (about 2 s per input): fewer inputs for those.
WEIGHTS_INPUTS = 5


def _all_cases():
    """(name, case, how many of its inputs run there)."""
    yield from ((name, cases.static_case(name), cases.INPUTS_PER_CHECK) for name in STATIC)
    for recipe, weights_only in WEIGHTS:
        case = cases.weights_case(recipe, weights_only)
        yield case.name, case, WEIGHTS_INPUTS


@pytest.fixture(scope="module")
def emulated(tmp_path_factory, library_path):
    """(the CpuReport measured on the emulated CPU, name -> (ours, native) outputs there, the int8
    probe's ratios there by weight)."""
    folder = tmp_path_factory.mktemp("emulated_avx2")
    quantized_runs.write_cases(folder, list(_all_cases()))
    quantized_runs.run_cases_elsewhere(folder, library_path, prefix=emulated_cpu.command())
    return quantized_runs.read_results(folder)


def test_the_emulated_cpu_is_avx2_without_vnni(emulated):
    report, _, probe = emulated
    assert report.instruction_set_class == "AVX2", report
    assert report.int8_integer and report.int8_saturates and report.needs_overflow_fix, report
    assert not report.dynamic_quantization, report
    assert "BF16" not in report.optimization_capabilities, report
    # The overflow fix's premise, there: weights up to 64 are exact, one more saturates.
    assert probe[64] == pytest.approx(1.0, abs=1e-6), probe
    assert probe[65] < 0.999 and probe[127] < 0.6, probe


@pytest.mark.parametrize("name", STATIC + [cases.weights_case_name(r, w) for r, w in WEIGHTS])
def test_delegate_equals_native_openvino_there(name, emulated):
    _, outputs, _ = emulated
    ours, native = outputs[name]
    assert len(ours) == (cases.INPUTS_PER_CHECK if name in STATIC else WEIGHTS_INPUTS)
    cases.assert_bit_identical(ours, native, name)


@pytest.mark.parametrize("recipe", STATIC)
def test_static_cnn_accuracy_there(recipe, emulated):
    report, outputs, _ = emulated
    cases.assert_static_accuracy(recipe, outputs[recipe][0], report)


@pytest.mark.parametrize("recipe", cases.WEIGHT_RECIPES)
def test_int8_weights_accuracy_there(recipe, emulated):
    report, outputs, _ = emulated
    cases.assert_weights_accuracy(recipe, outputs[cases.weights_case_name(recipe, False)][0],
                                  outputs[cases.weights_case_name(recipe, True)][0], report)
