"""Quantized models through the delegate on this machine's CPU (docs/quantization.md): the
quantization survives lowering, OpenVINO runs it with integer kernels, the delegate computes
exactly what native OpenVINO computes on the same IR and properties, and the accuracy is what this
CPU's class allows.

Recipes (tests/python/quantized_cases.py):
  static int8 PT2E of a CNN    executorch_openvino.quantization.quantize_pt2e with NNCF and with
                               XNNPACKQuantizer, each with the overflow fix (the default) and
                               without; ExecuTorch's own OpenVINOQuantizer flow, folded and not
  int8 weight compression      nncf.compress_weights (asymmetric and symmetric) of a 4 x 512 MLP

Expectations depend on the CPU only through executorch_openvino.runtime.cpu_capabilities.describe(),
which asks OpenVINO (a probe model) whether int8 sums saturate and whether it quantizes
activations on the fly. test_quantized_emulated_cpu.py runs the same cases on an emulated AVX2
CPU, so both worlds are checked on any machine.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import openvino as ov
import pytest
import torch

import executorch_openvino
from executorch_openvino.runtime import cpu_capabilities
from executorch_openvino.container.blob import parse_blob
from executorch_openvino.fx_graph import op_name
from executorch_openvino.quantization import OverflowSafeQuantizer, compress_weights_int8, quantize_pt2e
import quantized_cases as cases
from quantized_runs import run_native, run_ours, runtime_layers

INTEGER_PRECISIONS = {"u8", "i8"}


@pytest.fixture(scope="module")
def cpu():
    return cpu_capabilities.describe()


def read_ir(case_or_delegate) -> ov.Model:
    if isinstance(case_or_delegate, cases.Case):
        xml, weights = case_or_delegate.ir_xml, case_or_delegate.ir_weights
    else:
        blob = parse_blob(case_or_delegate.processed_bytes)
        xml, weights = bytes(blob.ir_xml), bytes(blob.ir_weights)
    return ov.Core().read_model(xml.decode(), ov.Tensor(np.frombuffer(weights, dtype=np.uint8).copy()))


def op_types(model: ov.Model) -> Counter:
    return Counter(op.get_type_name() for op in model.get_ops())


def weight_constants(model: ov.Model, min_elements: int):
    """The IR's constants with at least `min_elements` elements (the weights)."""
    return [op for op in model.get_ops()
            if op.get_type_name() == "Constant" and math.prod(op.get_output_shape(0)) >= min_elements]


def precisions(case: cases.Case) -> dict:
    layers = runtime_layers(case.ir_xml, case.ir_weights, case.properties)
    return {kind: {precision for precision, _ in found} for kind, found in layers.items()}


# ---------------------------------------------------------------------------------------------
# Static int8 PT2E quantization of a CNN


@pytest.mark.parametrize("recipe", cases.STATIC_RECIPES)
def test_static_cnn_is_one_delegate_call_with_the_quantize_ops_inside(recipe):
    case = cases.static_case(recipe)
    graph_ops = {op_name(n.target) for n in case.quantized.graph.nodes if n.op == "call_function"}
    assert "quantized_decomposed.dequantize_per_tensor.default" in graph_ops, "the recipe did not quantize"
    assert [d.backend_id for d in case.delegates] == [executorch_openvino.BACKEND_ID]
    assert case.outside_ops == []


@pytest.mark.parametrize("recipe", cases.STATIC_RECIPES)
def test_static_cnn_ir_keeps_the_quantization_and_the_weight_range(recipe):
    case = cases.static_case(recipe)
    model = read_ir(case)
    # Activations: a FakeQuantize before each of the 3 convolutions, the add and the classifier.
    assert op_types(model)["FakeQuantize"] >= 5, op_types(model)
    # The 4 weight tensors are stored as int8 and no float copy is left, also when the recipe left
    # the weights' quantize to us (the unfolded one).
    weights = weight_constants(model, min_elements=10 * 32)  # the smallest weight tensor, the classifier's
    assert Counter(op.get_output_element_type(0).get_type_name() for op in weights) == Counter({"i8": 4})
    largest = [int(np.abs(op.get_data().astype(np.int32)).max()) for op in weights]
    if cases.STATIC_RECIPES[recipe].overflow_safe:
        assert max(largest) <= cpu_capabilities.SAFE_INT8_WEIGHT, largest
    else:  # the full range, at least in the layers after the first
        assert sum(magnitude > cpu_capabilities.SAFE_INT8_WEIGHT for magnitude in largest) >= 2, largest


@pytest.mark.parametrize("recipe", ["nncf", "executorch_openvino_quantizer"])
def test_lowering_warns_about_full_range_int8_weights(recipe, caplog):
    """At export, whatever the exporting CPU: a static int8 model whose weights would saturate on
    CPUs without VNNI is named in a warning; one made with the overflow fix is not."""
    case = cases.static_case(recipe)
    caplog.clear()  # what making the case logged
    with caplog.at_level("WARNING", logger="executorch_openvino.ir_passes.int8_range_check"):
        cases.lower(case.quantized)
    warnings = [r.getMessage() for r in caplog.records if r.name == "executorch_openvino.ir_passes.int8_range_check"]
    if cases.STATIC_RECIPES[recipe].overflow_safe:
        assert warnings == []
    else:
        assert len(warnings) == 1 and "3 of 4 int8 weight tensors use the full int8 range" in warnings[0], warnings
        assert "OverflowSafeQuantizer" in warnings[0]


@pytest.mark.parametrize("recipe", cases.STATIC_RECIPES)
def test_static_cnn_runs_with_integer_kernels(recipe, cpu):
    assert cpu.int8_integer, f"OpenVINO ran the probe without int8 kernels here: {cpu}"
    found = precisions(cases.static_case(recipe))
    assert found["Convolution"] <= INTEGER_PRECISIONS, found
    assert found["FullyConnected"] <= INTEGER_PRECISIONS, found


@pytest.mark.parametrize("recipe", cases.STATIC_RECIPES)
def test_static_cnn_equals_native_openvino(recipe):
    case = cases.static_case(recipe)
    native = run_native(case.ir_xml, case.ir_weights, case.properties, case.inputs)
    cases.assert_bit_identical(run_ours(case.pte, case.inputs), native, recipe)


@pytest.mark.parametrize("recipe", cases.STATIC_RECIPES)
def test_static_cnn_accuracy_on_this_cpu(recipe, cpu):
    case = cases.static_case(recipe)
    cases.assert_static_accuracy(recipe, run_ours(case.pte, case.inputs), cpu)


def test_static_cnn_split_around_a_skipped_op_keeps_its_pairs(cpu):
    """Pooling left to ExecuTorch: two partitions, each with its quantize -> dequantize pairs whole."""
    case = cases.static_case("xnnpack")
    delegates, outside, pte = cases.lower(case.quantized, skip_ops=["aten.mean.dim"])
    assert outside == ["aten.mean.dim"]
    assert [d.backend_id for d in delegates] == [executorch_openvino.BACKEND_ID] * 2
    assert all(op_types(read_ir(d))["FakeQuantize"] > 0 for d in delegates)
    vs_quantized = cases.relative_errors(run_ours(pte, case.inputs), case.quantized_outputs)
    assert cases.median(vs_quantized) <= cases.STATIC_TYPICAL and max(vs_quantized) <= cases.STATIC_WORST, vs_quantized


def _crossing_errors(case):
    """Each input's error of a program whose partitions hand their int8 values to ExecuTorch's
    dequantize, against the quantized eager model."""
    import executorch.kernels.quantized  # noqa: F401  (ExecuTorch's out variants of dequantize)

    delegates, outside, pte = cases.lower(case.quantized, skip_ops=["quantized_decomposed.dequantize_per_tensor"])
    assert set(outside) == {"quantized_decomposed.dequantize_per_tensor.default"}
    return delegates, cases.relative_errors(run_ours(pte, case.inputs), case.quantized_outputs)


def test_static_cnn_integers_crossing_to_executorch(cpu):
    """Dequantize left to ExecuTorch's quantized kernels: our partitions hand out the int8
    activations themselves (quantize computed as arithmetic, not FakeQuantize), the same integers
    the quantized eager model computes for almost every input."""
    case = cases.static_case("xnnpack")
    delegates, vs_quantized = _crossing_errors(case)
    irs = [read_ir(d) for d in delegates]
    # The partitions end in a quantize whose int8 values leave our delegate; with no dequantize
    # beside them, no quantize became a FakeQuantize.
    assert sum(ir.outputs[0].get_element_type() == ov.Type.i8 for ir in irs) >= 4
    assert all(op_types(ir)["FakeQuantize"] == 0 for ir in irs)
    typical, worst, _ = cases.expected_static(cases.STATIC_RECIPES["xnnpack"].overflow_safe, cpu)
    assert cases.median(vs_quantized) <= typical, (cpu.summary(), vs_quantized)  # measured: 0
    assert max(vs_quantized) <= worst, (cpu.summary(), vs_quantized)  # measured: 6.0e-3


def test_a_quantize_off_by_one_zero_point_fails_the_crossing_check(monkeypatch, cpu):
    """The check above can fail: integers one zero point off (every activation a step higher) are
    far from eager's in the typical input (measured median 7.8e-2), though inside the worst bound."""
    from executorch_openvino.fx_passes import quantize_ops

    spell_out = quantize_ops._spell_out_quantize

    def one_off(graph_module, node):
        args = list(node.args)
        if isinstance(args[2], int):  # quantize_per_tensor(x, scale, zero_point, qmin, qmax, dtype)
            args[2] += 1
            node.args = tuple(args)
        return spell_out(graph_module, node)

    monkeypatch.setattr(quantize_ops, "_spell_out_quantize", one_off)
    typical, _, _ = cases.expected_static(cases.STATIC_RECIPES["xnnpack"].overflow_safe, cpu)
    _, vs_quantized = _crossing_errors(cases.static_case("xnnpack"))
    assert cases.median(vs_quantized) > 100 * typical, vs_quantized


# ---------------------------------------------------------------------------------------------
# int8 weight compression of a linear-heavy model


@pytest.mark.parametrize("recipe", cases.WEIGHT_RECIPES)
def test_int8_weights_stay_int8_and_run_with_integer_kernels(recipe):
    case = cases.weights_case(recipe)
    assert [d.backend_id for d in case.delegates] == [executorch_openvino.BACKEND_ID]
    assert case.outside_ops == []
    weights = weight_constants(read_ir(case), min_elements=512 * 512)
    expected = "i8" if cases.WEIGHT_RECIPES[recipe] else "u8"
    assert Counter(op.get_output_element_type(0).get_type_name() for op in weights) == Counter({expected: 4})
    # The blob holds a quarter of the float weights' bytes (plus scales, zero points and biases).
    float_bytes = sum(p.numel() * p.element_size() for p in cases.float_mlp().parameters())
    assert len(case.ir_weights) < 0.3 * float_bytes
    assert precisions(case)["FullyConnected"] <= INTEGER_PRECISIONS


@pytest.mark.parametrize("weights_only", [False, True], ids=["openvino_defaults", "weights_only"])
@pytest.mark.parametrize("recipe", cases.WEIGHT_RECIPES)
def test_int8_weights_equal_native_openvino(recipe, weights_only):
    case = cases.weights_case(recipe, weights_only)
    native = run_native(case.ir_xml, case.ir_weights, case.properties, case.inputs)
    cases.assert_bit_identical(run_ours(case.pte, case.inputs), native, case.name)


@pytest.mark.parametrize("recipe", cases.WEIGHT_RECIPES)
def test_int8_weights_accuracy_on_this_cpu(recipe, cpu):
    default, weights_only = cases.weights_case(recipe), cases.weights_case(recipe, True)
    cases.assert_weights_accuracy(recipe, run_ours(default.pte, default.inputs),
                                  run_ours(weights_only.pte, weights_only.inputs), cpu)


# ---------------------------------------------------------------------------------------------
# The helpers' contract


def test_helpers_accept_an_exported_program():
    example = (cases.mlp_input(torch.Generator().manual_seed(0)),)
    exported = torch.export.export(cases.float_mlp(), example)
    compressed = compress_weights_int8(exported)  # example inputs taken from the program
    dtypes = {t.dtype for t in compressed.constants.values()} | {t.dtype for t in compressed.state_dict.values()}
    assert torch.uint8 in dtypes


def test_quantize_pt2e_checks_its_arguments():
    example = (cases.cnn_input(torch.Generator().manual_seed(0)),)
    with pytest.raises(ValueError, match="calibration_data is empty"):
        quantize_pt2e(cases.float_cnn(), example, [])
    with pytest.raises(ValueError, match="example_inputs"):
        quantize_pt2e(cases.float_cnn(), None, [example])
    with pytest.raises(ValueError, match="overflow_fix must be one of enable, first_layer_only, disable"):
        quantize_pt2e(cases.float_cnn(), example, [example], overflow_fix="on")


def _weight_specs(quantizer) -> dict:
    """convolution / linear node name -> (quant_min, quant_max) of its weight's spec."""
    graph_module = torch.export.export(cases.float_cnn(), (torch.zeros(1, 3, 32, 32),)).module()
    annotated = quantizer.annotate(quantizer.transform_for_annotation(graph_module))
    weighted = {torch.ops.aten.conv2d.default, torch.ops.aten.linear.default}
    specs = {}
    for node in annotated.graph.nodes:
        annotation = node.meta.get("quantization_annotation")
        if node.target in weighted and annotation is not None and node.args[1] in annotation.input_qspec_map:
            spec = annotation.input_qspec_map[node.args[1]]
            specs[node.name] = (spec.quant_min, spec.quant_max)
    return specs


def test_overflow_safe_quantizer_narrows_the_weights_it_should():
    full = _weight_specs(cases.xnnpack_quantizer())
    assert set(full.values()) == {(-127, 127)}, full
    assert set(full) == {"conv2d", "conv2d_1", "conv2d_2", "linear"}, full
    every = _weight_specs(OverflowSafeQuantizer(cases.xnnpack_quantizer()))
    assert every == {name: (-63, 63) for name in full}
    first = _weight_specs(OverflowSafeQuantizer(cases.xnnpack_quantizer(), "first_layer_only"))
    assert first == {**full, "conv2d": (-63, 63)}
    assert _weight_specs(OverflowSafeQuantizer(cases.xnnpack_quantizer(), "disable")) == full
