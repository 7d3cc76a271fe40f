"""The quantized models the tests run, each recipe lowered once per process, and the accuracy
each CPU class may show (docs/quantization.md).

A case holds everything needed to run it anywhere: the .pte, the IR our blob carries with the
properties the delegate compiles it with, the inputs, and the references (the quantized model in
PyTorch, the float model, and the same quantizer without the overflow fix). The checks take a
CpuReport, measured where the case ran, so one set of expectations serves every CPU: OpenVINO
computes int8 exactly with VNNI or AMX, and saturates 16-bit sums without them unless the weights
are within +-64 (executorch_openvino.runtime.cpu_capabilities).

Errors are max |y - reference| / max |reference| per input (the reference's output scale).
"""

from __future__ import annotations

import functools
import statistics
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

import numpy as np
import torch
from torch import nn

import executorch_openvino
from executorch.exir import to_edge_transform_and_lower
from executorch_openvino.container import compile_specs
from executorch_openvino.container.blob import parse_blob
from executorch_openvino.quantization import compress_weights_int8, quantize_pt2e
from lowering import delegate_calls, outside_ops

try:
    import nncf  # noqa: F401  (the recipes' quantizer; a missing one must fail, not skip)
except ImportError as error:  # pragma: no cover
    raise ImportError("the quantized tests need NNCF: pip install nncf==3.4.0") from error

INPUTS_PER_CHECK = 20

# ---------------------------------------------------------------------------------------------
# Bounds, relative to the reference's output scale. "measured": over 3 seeds x 150 or more inputs
# on an AMX CPU, and per CPU class (AMX, AVX-512 VNNI, AVX-512 without VNNI, AVX2) by
# tests/int8_cpu_classes/int8_cpu_classes.py; docs/quantization.md has both.

# Static int8 vs the quantized eager model where the kernels are exact (VNNI, AMX, or weights
# within +-64 anywhere): float rounding for almost every input (measured median 9e-8); now and
# then an activation lies on a rounding boundary and one quantization step differs.
STATIC_TYPICAL = 1e-5
STATIC_WORST = 2.5e-2  # measured: 7.8e-3
STATIC_VS_FLOAT = 0.1  # the quantization's own error (measured: 4.3e-2)
# Full-range int8 weights where 16-bit sums saturate (AVX2, AVX-512 without VNNI), vs the
# quantized model: measured median 7.3e-2 (NNCF) / 1.8e-2 (XNNPACK), worst 1.03e-1.
SATURATED_TYPICAL = 0.15
SATURATED_WORST = 0.2
SATURATED_VS_FLOAT = 0.25  # measured: 1.1e-1
# What the overflow fix may cost against the float model: the fixed model's median error over the
# same quantizer's full-range model's, in PyTorch (measured: 1.05x NNCF, 1.23x XNNPACK).
OVERFLOW_FIX_COST = 1.5

# int8 weights: with OpenVINO's dynamic quantization of the activations (where the CPU plugin
# applies it), vs weights-only arithmetic (everywhere else, or DYNAMIC_QUANTIZATION_GROUP_SIZE=0).
WEIGHTS_DYNAMIC_WORST = 4e-2  # measured: 1.2e-2
WEIGHTS_ONLY_WORST = 2e-3  # measured: 4.0e-4
WEIGHTS_VS_FLOAT = 5e-2  # measured: 1.5e-2


def relative_errors(outputs, references) -> List[float]:
    return [float(np.abs(y - r).max() / np.abs(r).max()) for y, r in zip(outputs, references)]


def expected_static(overflow_safe: bool, report) -> tuple:
    """(typical, worst, vs_float) bounds for a static int8 case on the CPU `report` describes."""
    if overflow_safe or not report.needs_overflow_fix:
        return STATIC_TYPICAL, STATIC_WORST, STATIC_VS_FLOAT
    return SATURATED_TYPICAL, SATURATED_WORST, SATURATED_VS_FLOAT


# ---------------------------------------------------------------------------------------------
# Models


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


def cnn_input(generator: torch.Generator) -> torch.Tensor:
    return torch.randn(1, 3, 32, 32, generator=generator)


def mlp_input(generator: torch.Generator) -> torch.Tensor:
    return torch.randn(4, 512, generator=generator)


@functools.lru_cache(maxsize=None)
def float_cnn() -> nn.Module:
    torch.manual_seed(0)
    return SmallCNN().eval()


@functools.lru_cache(maxsize=None)
def float_mlp() -> nn.Module:
    torch.manual_seed(0)
    return LinearStack().eval()


def inputs(make_input: Callable, seed: int = 1, count: int = INPUTS_PER_CHECK) -> List[torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return [make_input(generator) for _ in range(count)]


# ---------------------------------------------------------------------------------------------
# Recipes


def xnnpack_quantizer():
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )

    return XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))


def _executorch_openvino_quantizer(model, example, calibration, fold: bool):
    """ExecuTorch's own OpenVINO recipe (NNCF's quantize_pt2e with OpenVINOQuantizer; its
    quantize_model leaves the weights float behind quantize -> dequantize, fold=False). NNCF fixes
    the overflow of the first convolution only."""
    from executorch.backends.openvino.quantizer import OpenVINOQuantizer
    from nncf.experimental.torch.fx import quantize_pt2e as nncf_quantize_pt2e

    quantized = nncf_quantize_pt2e(
        torch.export.export(model, example).module(),
        OpenVINOQuantizer(),
        calibration_dataset=nncf.Dataset([(x,) for x in calibration]),
        subset_size=len(calibration),
        fold_quantize=fold,
    )
    return torch.export.export(quantized, example)


@dataclass(frozen=True)
class StaticRecipe:
    make: Callable  # (model, example, calibration) -> ExportedProgram
    overflow_safe: bool  # every int8 weight within +-64
    full_range_twin: Optional[str] = None  # the same quantizer without the overflow fix


STATIC_RECIPES: Dict[str, StaticRecipe] = {
    "nncf": StaticRecipe(lambda m, e, c: quantize_pt2e(m, e, c), True, "nncf_full_range"),
    "nncf_full_range": StaticRecipe(lambda m, e, c: quantize_pt2e(m, e, c, overflow_fix="disable"), False),
    "xnnpack": StaticRecipe(lambda m, e, c: quantize_pt2e(m, e, c, quantizer=xnnpack_quantizer()), True,
                            "xnnpack_full_range"),
    "xnnpack_full_range": StaticRecipe(
        lambda m, e, c: quantize_pt2e(m, e, c, quantizer=xnnpack_quantizer(), overflow_fix="disable"), False
    ),
    "executorch_openvino_quantizer": StaticRecipe(
        lambda m, e, c: _executorch_openvino_quantizer(m, e, c, fold=True), False
    ),
    "executorch_openvino_quantizer_unfolded": StaticRecipe(
        lambda m, e, c: _executorch_openvino_quantizer(m, e, c, fold=False), False
    ),
}

WEIGHT_RECIPES = {"int8_asym": False, "int8_sym": True}  # name -> symmetric


# ---------------------------------------------------------------------------------------------
# Lowered cases


@dataclass
class Case:
    name: str
    quantized: torch.export.ExportedProgram  # the quantized model (PyTorch's reference)
    pte: bytes
    delegates: list  # the lowered modules of the program, in graph order
    outside_ops: List[str]
    ir_xml: bytes  # of the first delegate
    ir_weights: bytes
    properties: Dict[str, str]  # what the delegate compiles the IR with at load time
    inputs: List[torch.Tensor]
    quantized_outputs: List[np.ndarray]
    float_outputs: List[np.ndarray]
    extra: Dict[str, object] = field(default_factory=dict)


def lower(exported, **partitioner_args):
    """(the lowered edge program's delegates, what stayed outside, the .pte)."""
    partitioner = executorch_openvino.OpenvinoPartitioner(**partitioner_args)
    edge = to_edge_transform_and_lower(exported, partitioner=[partitioner])
    graph_module = edge.exported_program().graph_module
    delegates = [getattr(graph_module, call.args[0].target) for call in delegate_calls(graph_module.graph)]
    return delegates, outside_ops(graph_module.graph), edge.to_executorch().buffer


def _case(name: str, quantized, float_model: nn.Module, samples: List[torch.Tensor], **partitioner_args) -> Case:
    delegates, outside, pte = lower(quantized, **partitioner_args)
    blob = parse_blob(delegates[0].processed_bytes)
    options = compile_specs.from_compile_specs(delegates[0].compile_specs)
    with torch.no_grad():
        reference = quantized.module()
        quantized_outputs = [reference(x).numpy() for x in samples]
        float_outputs = [float_model(x).numpy() for x in samples]
    return Case(
        name, quantized, pte, delegates, outside, bytes(blob.ir_xml), bytes(blob.ir_weights),
        compile_specs.load_time_properties(options.device, options.properties, options.precision), samples, quantized_outputs,
        float_outputs,
    )


@functools.lru_cache(maxsize=None)
def static_case(recipe: str) -> Case:
    generator = torch.Generator().manual_seed(0)
    calibration = [cnn_input(generator) for _ in range(32)]
    quantized = STATIC_RECIPES[recipe].make(float_cnn(), (calibration[0],), calibration)
    return _case(recipe, quantized, float_cnn(), inputs(cnn_input))


@functools.lru_cache(maxsize=None)
def compressed_mlp(recipe: str) -> torch.export.ExportedProgram:
    example = (mlp_input(torch.Generator().manual_seed(0)),)
    return compress_weights_int8(float_mlp(), example, symmetric=WEIGHT_RECIPES[recipe])


@functools.lru_cache(maxsize=None)
def weights_case(recipe: str, weights_only: bool = False) -> Case:
    """The compressed MLP lowered with OpenVINO's defaults, or with its dynamic quantization of
    the activations switched off (weights-only arithmetic)."""
    options = {"compile_options": {"DYNAMIC_QUANTIZATION_GROUP_SIZE": 0}} if weights_only else {}
    return _case(weights_case_name(recipe, weights_only), compressed_mlp(recipe), float_mlp(), inputs(mlp_input),
                 **options)


def weights_case_name(recipe: str, weights_only: bool) -> str:
    return recipe + ("_weights_only" if weights_only else "")


def median(values) -> float:
    return statistics.median(values)


# ---------------------------------------------------------------------------------------------
# What each CPU allows, given the outputs computed there


def assert_bit_identical(ours: List[np.ndarray], native: List[np.ndarray], name: str) -> None:
    """The delegate's contract on every CPU: native OpenVINO's results on the same IR with the
    same properties, bit for bit."""
    assert len(ours) == len(native), name
    for i, (a, b) in enumerate(zip(ours, native)):
        np.testing.assert_array_equal(a, b, err_msg=f"{name}, input {i}")


def assert_static_accuracy(recipe: str, ours: List[np.ndarray], cpu) -> None:
    """The static case's outputs `ours`, computed on the CPU `cpu` describes, within that CPU's
    bounds; full-range weights visibly lose precision where the probe says sums saturate; and the
    overflow fix costs at most OVERFLOW_FIX_COST against the float model."""
    case, spec = static_case(recipe), STATIC_RECIPES[recipe]
    typical, worst, vs_float_bound = expected_static(spec.overflow_safe, cpu)
    vs_quantized = relative_errors(ours, case.quantized_outputs)
    assert median(vs_quantized) <= typical and max(vs_quantized) <= worst, (cpu.summary(), vs_quantized)
    vs_float = relative_errors(ours, case.float_outputs)
    assert max(vs_float) <= vs_float_bound, vs_float
    # Quantization shows: the float model's results are not what runs.
    assert median(vs_float) > 1e-3, vs_float
    if not spec.overflow_safe and cpu.needs_overflow_fix:
        # What the probe predicts shows in a real model.
        assert median(vs_quantized) > 10 * STATIC_TYPICAL, (cpu.summary(), vs_quantized)
    if spec.full_range_twin:
        twin = static_case(spec.full_range_twin)
        own = median(relative_errors(twin.quantized_outputs, twin.float_outputs))
        assert median(vs_float) <= OVERFLOW_FIX_COST * own, (median(vs_float), own)


def assert_weights_accuracy(recipe: str, ours_default: List[np.ndarray], ours_weights_only: List[np.ndarray],
                            cpu) -> None:
    """The compressed MLP's outputs with OpenVINO's defaults and with weights-only arithmetic."""
    default, weights_only = weights_case(recipe), weights_case(recipe, True)
    exact = relative_errors(ours_weights_only, weights_only.quantized_outputs)
    assert max(exact) <= WEIGHTS_ONLY_WORST, exact
    errors = relative_errors(ours_default, default.quantized_outputs)
    if cpu.dynamic_quantization:
        assert max(errors) <= WEIGHTS_DYNAMIC_WORST, errors
        assert median(errors) > 2 * max(exact), (errors, exact)  # the on-the-fly quantization shows
    else:
        assert max(errors) <= WEIGHTS_ONLY_WORST, (cpu.summary(), errors)
    assert max(relative_errors(ours_default, default.float_outputs)) <= WEIGHTS_VS_FLOAT
