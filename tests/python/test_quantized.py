"""Quantized models through the delegate (docs/quantization.md): the quantization survives
lowering, OpenVINO runs it with integer kernels, and results stay within the documented bounds.

Recipes:
  static int8 PT2E of a CNN    NNCF with ExecuTorch's OpenVINOQuantizer (int8 weights folded, and
                               unfolded as ExecuTorch's own quantize_model does it), and torchao's
                               prepare_pt2e / convert_pt2e with XNNPACKQuantizer
  int8 weight compression      nncf.compress_weights (asymmetric and symmetric) of a 4 x 512 MLP

For each: the program is one delegate call of ours with nothing left outside (the quantize and
dequantize ops are inside it); the IR in our blob holds FakeQuantize and int8 / uint8 weight
constants; compiling that IR on CPU with the program's compile properties gives a runtime graph
whose convolutions / fully connected layers run in u8 / i8; and outputs through executorch.runtime
match the quantized eager model (the graph after convert_pt2e / compress_weights, in PyTorch).

Errors are max |ours - reference| / max |reference| per input (the reference's output scale).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Dict, List

import numpy as np
import pytest
import torch
from torch import nn

import executorch_openvino
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime
from executorch_openvino import compile_specs
from executorch_openvino.blob import parse_blob
from executorch_openvino.op_support import op_name
from executorch_openvino.quantization import compress_weights_int8, quantize_pt2e
from lowering import delegate_calls, outside_ops

try:
    import nncf  # noqa: F401  (the recipes' quantizer; a missing one must fail, not skip)
except ImportError as error:  # pragma: no cover
    raise ImportError("tests/python/test_quantized.py needs NNCF: pip install nncf==3.4.0") from error

import openvino as ov

INTEGER_PRECISIONS = {"u8", "i8"}

# The documented bounds (docs/quantization.md), relative to the reference's output scale; the
# measurements are over 450 (static) and 600 (weights) in-distribution inputs, 3 seeds each.
# Static int8 vs the quantized eager model: bit-exact up to float rounding for almost every input;
# now and then an activation lies on a rounding boundary and one quantization step differs.
STATIC_TYPICAL = 1e-5  # the median over the inputs (measured: 7e-8)
STATIC_WORST = 2.5e-2  # every input (measured: 7.8e-3)
STATIC_VS_FLOAT = 0.1  # the quantization's own error, not the delegate's (measured: 4.3e-2)
# int8 weights: OpenVINO's CPU plugin also quantizes the activations of those layers on the fly
# (DYNAMIC_QUANTIZATION_GROUP_SIZE, 32 by default); with it off, only float rounding differs.
WEIGHTS_DYNAMIC_WORST = 4e-2  # measured: 1.2e-2
WEIGHTS_ONLY_WORST = 2e-3  # measured: 4.0e-4
WEIGHTS_VS_FLOAT = 5e-2  # measured: 1.5e-2

INPUTS_PER_CHECK = 20


# ---------------------------------------------------------------------------------------------
# Models and lowering


class SmallCNN(nn.Module):
    """Convolutions (one strided, one with batch norm), a residual add, pooling and a classifier."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1, stride=2)
        self.conv3 = nn.Conv2d(32, 32, 3, padding=1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.conv2(x))
        x = torch.relu(self.conv3(x)) + x
        return self.fc(x.mean((2, 3)))


class LinearStack(nn.Module):
    """Four 512-wide Linear layers with GELU between them: where the weights are the bulk."""

    def __init__(self, width: int = 512) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(4))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = nn.functional.gelu(x)
        return x


def _cnn_input(generator: torch.Generator) -> torch.Tensor:
    return torch.randn(1, 3, 32, 32, generator=generator)


def _mlp_input(generator: torch.Generator) -> torch.Tensor:
    return torch.randn(4, 512, generator=generator)


@dataclass
class Lowered:
    delegates: list  # the lowered modules of the program, in graph order
    outside_ops: List[str]
    method: object
    program: object  # kept alive with its method

    def run(self, x: torch.Tensor) -> torch.Tensor:
        (out,) = self.method.execute([x])
        return out


def lower(exported, **partitioner_args) -> Lowered:
    partitioner = executorch_openvino.OpenvinoPartitioner(**partitioner_args)
    edge = to_edge_transform_and_lower(exported, partitioner=[partitioner])
    graph_module = edge.exported_program().graph_module
    delegates = [getattr(graph_module, call.args[0].target) for call in delegate_calls(graph_module.graph)]
    outside = outside_ops(graph_module.graph)
    program = Runtime.get().load_program(edge.to_executorch().buffer)
    return Lowered(delegates, outside, program.load_method("forward"), program)


def relative_errors(lowered: Lowered, reference: Callable, make_input: Callable, seed: int = 1) -> List[float]:
    generator = torch.Generator().manual_seed(seed)
    errors = []
    for _ in range(INPUTS_PER_CHECK):
        x = make_input(generator)
        with torch.no_grad():
            expected = reference(x)
        errors.append(((lowered.run(x) - expected).abs().max() / expected.abs().max()).item())
    return errors


# ---------------------------------------------------------------------------------------------
# The IR in our blob, and what OpenVINO's CPU plugin makes of it


def read_ir(lowered_module) -> ov.Model:
    blob = parse_blob(lowered_module.processed_bytes)
    weights = ov.Tensor(np.frombuffer(blob.ir_weights, dtype=np.uint8).copy())
    return ov.Core().read_model(blob.ir_xml.decode(), weights)


def op_types(model: ov.Model) -> Counter:
    return Counter(op.get_type_name() for op in model.get_ops())


def constant_types(model: ov.Model, min_elements: int = 1) -> Counter:
    """Element types of the IR's constants with at least `min_elements` elements (the weights)."""
    return Counter(
        op.get_output_element_type(0).get_type_name()
        for op in model.get_ops()
        if op.get_type_name() == "Constant" and math.prod(op.get_output_shape(0)) >= min_elements
    )


def runtime_precisions(lowered_module) -> Dict[str, set]:
    """layer type -> runtime precisions, from compiling the stored IR on CPU with the properties
    the delegate compiles it with at load time (the program's and the library's defaults)."""
    options = compile_specs.from_compile_specs(lowered_module.compile_specs)
    assert options.device == "CPU"
    properties = compile_specs.load_time_properties(options.device, options.properties)
    compiled = ov.Core().compile_model(read_ir(lowered_module), "CPU", properties)
    precisions: Dict[str, set] = {}
    for op in compiled.get_runtime_model().get_ops():
        info = op.get_rt_info()
        precisions.setdefault(info["layerType"].astype(str), set()).add(info["runtimePrecision"].astype(str))
    return precisions


# ---------------------------------------------------------------------------------------------
# Static int8 PT2E quantization of a CNN


def _xnnpack_quantizer():
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )

    return XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))


def _nncf_unfolded(model, example, calibration):
    """ExecuTorch's own OpenVINO recipe (its quantize_model): the weights stay float behind a
    quantize -> dequantize pair, and the delegate quantizes them."""
    from executorch.backends.openvino.quantizer import OpenVINOQuantizer
    from nncf.experimental.torch.fx import quantize_pt2e as nncf_quantize_pt2e

    quantized = nncf_quantize_pt2e(
        torch.export.export(model, example).module(),
        OpenVINOQuantizer(),
        calibration_dataset=nncf.Dataset([(x,) for x in calibration]),
        subset_size=len(calibration),
        fold_quantize=False,
    )
    return torch.export.export(quantized, example)


STATIC_RECIPES = {
    "nncf_openvino_quantizer": lambda model, example, calibration: quantize_pt2e(model, example, calibration),
    "nncf_openvino_quantizer_unfolded": _nncf_unfolded,
    "torchao_xnnpack_quantizer": lambda model, example, calibration: quantize_pt2e(
        model, example, calibration, quantizer=_xnnpack_quantizer()
    ),
}


@pytest.fixture(scope="module")
def float_cnn() -> nn.Module:
    torch.manual_seed(0)
    return SmallCNN().eval()


@pytest.fixture(scope="module")
def static_cnn(float_cnn):
    """recipe -> (quantized ExportedProgram, Lowered), each made once."""
    generator = torch.Generator().manual_seed(0)
    calibration = [_cnn_input(generator) for _ in range(32)]
    example = (calibration[0],)
    cache = {}

    def get(recipe: str):
        if recipe not in cache:
            quantized = STATIC_RECIPES[recipe](float_cnn, example, calibration)
            cache[recipe] = (quantized, lower(quantized))
        return cache[recipe]

    return get


@pytest.mark.parametrize("recipe", STATIC_RECIPES)
def test_static_cnn_is_one_delegate_call_with_the_quantize_ops_inside(recipe, static_cnn):
    quantized, lowered = static_cnn(recipe)
    graph_ops = {op_name(n.target) for n in quantized.graph.nodes if n.op == "call_function"}
    assert "quantized_decomposed.dequantize_per_tensor.default" in graph_ops, "the recipe did not quantize"
    assert [d.backend_id for d in lowered.delegates] == [executorch_openvino.BACKEND_ID]
    assert lowered.outside_ops == []


@pytest.mark.parametrize("recipe", STATIC_RECIPES)
def test_static_cnn_ir_keeps_the_quantization(recipe, static_cnn):
    _, lowered = static_cnn(recipe)
    model = read_ir(lowered.delegates[0])
    types = op_types(model)
    # Activations: a FakeQuantize before each of the 3 convolutions, the add and the classifier.
    assert types["FakeQuantize"] >= 5, types
    # The 4 weight tensors are stored as int8 and no float copy is left, also when the recipe left
    # the weights' quantize to us (the unfolded one).
    weights = constant_types(model, min_elements=10 * 32)  # the smallest weight tensor, the classifier's
    assert weights == Counter({"i8": 4}), weights


@pytest.mark.parametrize("recipe", STATIC_RECIPES)
def test_static_cnn_runs_with_integer_kernels(recipe, static_cnn):
    _, lowered = static_cnn(recipe)
    precisions = runtime_precisions(lowered.delegates[0])
    assert precisions["Convolution"] <= INTEGER_PRECISIONS, precisions
    assert precisions["FullyConnected"] <= INTEGER_PRECISIONS, precisions


@pytest.mark.parametrize("recipe", STATIC_RECIPES)
def test_static_cnn_matches_the_quantized_model(recipe, static_cnn, float_cnn):
    quantized, lowered = static_cnn(recipe)
    vs_quantized = relative_errors(lowered, quantized.module(), _cnn_input)
    assert statistics.median(vs_quantized) <= STATIC_TYPICAL, vs_quantized
    assert max(vs_quantized) <= STATIC_WORST, vs_quantized
    vs_float = relative_errors(lowered, float_cnn, _cnn_input)
    assert max(vs_float) <= STATIC_VS_FLOAT, vs_float
    # Quantization shows: the float model's results are not what runs.
    assert statistics.median(vs_float) > 1e-3, vs_float


def test_static_cnn_split_around_a_skipped_op_keeps_its_pairs(static_cnn):
    """Pooling left to ExecuTorch: two partitions, each with its quantize -> dequantize pairs whole."""
    quantized, _ = static_cnn("torchao_xnnpack_quantizer")
    lowered = lower(quantized, skip_ops=["aten.mean.dim"])
    assert lowered.outside_ops == ["aten.mean.dim"]
    assert [d.backend_id for d in lowered.delegates] == [executorch_openvino.BACKEND_ID] * 2
    assert all(op_types(read_ir(d))["FakeQuantize"] > 0 for d in lowered.delegates)
    assert runtime_precisions(lowered.delegates[0])["Convolution"] <= INTEGER_PRECISIONS
    vs_quantized = relative_errors(lowered, quantized.module(), _cnn_input)
    assert statistics.median(vs_quantized) <= STATIC_TYPICAL and max(vs_quantized) <= STATIC_WORST, vs_quantized


def test_static_cnn_integers_crossing_to_executorch(static_cnn):
    """Dequantize left to ExecuTorch's quantized kernels: our partitions hand out the int8
    activations themselves (quantize computed as arithmetic, not FakeQuantize)."""
    import executorch.kernels.quantized  # noqa: F401  (ExecuTorch's out variants of dequantize)

    quantized, _ = static_cnn("torchao_xnnpack_quantizer")
    lowered = lower(quantized, skip_ops=["quantized_decomposed.dequantize_per_tensor"])
    assert set(lowered.outside_ops) == {"quantized_decomposed.dequantize_per_tensor.default"}
    irs = [read_ir(d) for d in lowered.delegates]
    # The partitions end in a quantize whose int8 values leave our delegate; with no dequantize
    # beside them, no quantize became a FakeQuantize.
    assert sum(ir.outputs[0].get_element_type() == ov.Type.i8 for ir in irs) >= 4
    assert all(op_types(ir)["FakeQuantize"] == 0 for ir in irs)
    vs_quantized = relative_errors(lowered, quantized.module(), _cnn_input)
    assert max(vs_quantized) <= STATIC_WORST, vs_quantized


# ---------------------------------------------------------------------------------------------
# int8 weight compression of a linear-heavy model


@pytest.fixture(scope="module")
def float_mlp() -> nn.Module:
    torch.manual_seed(0)
    return LinearStack().eval()


@pytest.fixture(scope="module")
def compressed_mlp(float_mlp):
    """symmetric -> (compressed ExportedProgram, Lowered with the default compile options), made once each."""
    example = (_mlp_input(torch.Generator().manual_seed(0)),)
    compressed = {symmetric: compress_weights_int8(float_mlp, example, symmetric=symmetric) for symmetric in (False, True)}
    return {symmetric: (program, lower(program)) for symmetric, program in compressed.items()}


@pytest.mark.parametrize("symmetric", [False, True], ids=["int8_asym", "int8_sym"])
def test_int8_weights_stay_int8_and_run_with_integer_kernels(symmetric, compressed_mlp, float_mlp):
    _, lowered = compressed_mlp[symmetric]
    assert [d.backend_id for d in lowered.delegates] == [executorch_openvino.BACKEND_ID]
    assert lowered.outside_ops == []
    (delegate,) = lowered.delegates
    weights = constant_types(read_ir(delegate), min_elements=512 * 512)
    assert weights == Counter({"u8" if not symmetric else "i8": 4}), weights
    # The blob holds a quarter of the float weights' bytes (plus scales, zero points and biases).
    float_bytes = sum(p.numel() * p.element_size() for p in float_mlp.parameters())
    assert len(parse_blob(delegate.processed_bytes).ir_weights) < 0.3 * float_bytes
    assert runtime_precisions(delegate)["FullyConnected"] <= INTEGER_PRECISIONS


@pytest.mark.parametrize("symmetric", [False, True], ids=["int8_asym", "int8_sym"])
def test_int8_weights_match_the_compressed_model(symmetric, compressed_mlp, float_mlp):
    compressed, default = compressed_mlp[symmetric]
    reference = compressed.module()
    # OpenVINO's default: the activations of those layers are quantized on the fly as well.
    default_errors = relative_errors(default, reference, _mlp_input)
    assert max(default_errors) <= WEIGHTS_DYNAMIC_WORST, default_errors
    assert max(relative_errors(default, float_mlp, _mlp_input)) <= WEIGHTS_VS_FLOAT
    # Weights-only arithmetic when asked for: the compressed model's results to float rounding.
    weights_only = lower(compressed, compile_options={"DYNAMIC_QUANTIZATION_GROUP_SIZE": 0})
    errors = relative_errors(weights_only, reference, _mlp_input)
    assert max(errors) <= WEIGHTS_ONLY_WORST, errors
    # And the on-the-fly activation quantization is what the default adds (it is really on).
    assert statistics.median(default_errors) > 2 * max(errors)


# ---------------------------------------------------------------------------------------------
# The helpers' contract


def test_helpers_accept_an_exported_program(float_mlp):
    example = (_mlp_input(torch.Generator().manual_seed(0)),)
    exported = torch.export.export(float_mlp, example)
    compressed = compress_weights_int8(exported)  # example inputs taken from the program
    dtypes = {t.dtype for t in compressed.constants.values()} | {t.dtype for t in compressed.state_dict.values()}
    assert torch.uint8 in dtypes


def test_quantize_pt2e_needs_calibration_data(float_cnn):
    example = (_cnn_input(torch.Generator().manual_seed(0)),)
    with pytest.raises(ValueError, match="calibration_data is empty"):
        quantize_pt2e(float_cnn, example, [])
    with pytest.raises(ValueError, match="example_inputs"):
        quantize_pt2e(float_cnn, None, [example])
