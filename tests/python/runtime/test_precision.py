"""precision="exact" | "fast": chosen at export, overridden at load, each the same as native OpenVINO
compiled with the same properties. What "fast" computes in depends on the processor: the tests ask
OpenVINO (runtime/precision.py) and expect its answer, f32 (no bf16 / f16 hardware, as here on
AVX-512 VNNI without bf16) or bf16 / f16."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from executorch.exir import to_edge_transform_and_lower
from executorch.exir.lowered_backend_module import LoweredBackendModule

import executorch_openvino
from executorch_openvino.container import compile_specs
from executorch_openvino.container.blob import parse_blob
from executorch_openvino.runtime.precision import default_precision
from lowering import assert_matches, load_forward

pytestmark = pytest.mark.usefixtures("clean_options")

FAST_ON_THIS_CPU = default_precision("CPU")
# How far from eager each output element may be (lowering.assert_matches: of its own size, plus that
# of the output's mean |eager|): f32; bf16 keeps 8 bits of mantissa, f16 11.
EXACT_REL_TOL = 1e-5
FAST_REL_TOL = EXACT_REL_TOL if FAST_ON_THIS_CPU == "f32" else 5e-2


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up, self.down = torch.nn.Linear(64, 256), torch.nn.Linear(256, 64)

    def forward(self, x):
        return self.down(torch.nn.functional.gelu(self.up(x)))


def _lowered(**partitioner_options):
    torch.manual_seed(0)
    model = Mlp().eval()
    x = torch.randn(8, 64)
    edge = to_edge_transform_and_lower(torch.export.export(model, (x,)),
                                       partitioner=[executorch_openvino.OpenvinoPartitioner(**partitioner_options)])
    (module,) = [m for _, m in edge.exported_program().graph_module.named_children()
                 if isinstance(m, LoweredBackendModule)]
    return model, x, edge.to_executorch().buffer, module


@pytest.fixture(scope="module")
def exact():
    return _lowered(precision="exact")


@pytest.fixture(scope="module")
def fast():
    return _lowered(precision="fast")


def _run(pte, x):
    method = load_forward(pte)
    (out,) = method.execute([x])
    (model,) = [m for m in executorch_openvino.compiled_models() if m["users"] and m["device"] == "CPU"]
    return out, model


def _native(module: LoweredBackendModule, x: torch.Tensor, properties) -> np.ndarray:
    import openvino as ov

    blob = parse_blob(module.processed_bytes)
    core = ov.Core()
    model = core.read_model(model=blob.ir_xml, weights=ov.Tensor(np.frombuffer(blob.ir_weights, np.uint8)))
    return core.compile_model(model, "CPU", properties)(x.numpy())[0]


def test_openvino_says_what_fast_is_on_this_cpu():
    assert FAST_ON_THIS_CPU in ("f32", "bf16", "f16")


def test_exact_is_f32_and_fast_the_cpus_default_each_equal_to_native_openvino(exact, fast):
    for (model, x, pte, module), word, hint in ((exact, "exact", "f32"), (fast, "fast", FAST_ON_THIS_CPU)):
        options = compile_specs.from_compile_specs(module.compile_specs)
        assert options.precision == word and "INFERENCE_PRECISION_HINT" not in options.properties
        out, compiled = _run(pte, x)
        assert compiled["INFERENCE_PRECISION_HINT"] == hint, compiled
        properties = compile_specs.load_time_properties("CPU", options.properties, options.precision)
        assert ("INFERENCE_PRECISION_HINT" in properties) == (word == "exact")
        native = _native(module, x, properties)
        np.testing.assert_array_equal(out.numpy(), native, err_msg=f"precision={word} differs from native OpenVINO")
        del out


def test_fast_differs_from_exact_only_where_the_cpu_has_a_faster_precision(exact, fast):
    model, x, _, _ = exact
    with torch.no_grad():
        expected = model(x)
    exact_out, _ = _run(exact[2], x)
    fast_out, _ = _run(fast[2], x)
    assert_matches([exact_out], [expected], rel_tol=EXACT_REL_TOL)
    if FAST_ON_THIS_CPU == "f32":
        assert torch.equal(fast_out, exact_out)
    else:  # off by about 1e-2 relative, and not identical
        assert not torch.equal(fast_out, exact_out)
        assert_matches([fast_out], [expected], rel_tol=FAST_REL_TOL)


def test_a_load_chooses_again_over_the_programs_precision(exact, fast):
    executorch_openvino.set_options(precision="fast")
    assert executorch_openvino.get_options()["precision"] == "fast"
    _, compiled = _run(exact[2], exact[1])
    assert compiled["INFERENCE_PRECISION_HINT"] == FAST_ON_THIS_CPU
    executorch_openvino.set_options(precision="EXACT")
    assert executorch_openvino.get_options()["precision"] == "exact"
    _, compiled = _run(fast[2], fast[1])
    assert compiled["INFERENCE_PRECISION_HINT"] == "f32"
    # The explicit hint wins over the word within one channel.
    executorch_openvino.set_options(precision="fast", inference_precision="f32")
    _, compiled = _run(exact[2], exact[1])
    assert compiled["INFERENCE_PRECISION_HINT"] == "f32"


def test_a_program_precompiled_at_fast_is_imported_at_fast():
    model, x, pte, module = _lowered(precision="fast", precompile=["CPU"])
    out, compiled = _run(pte, x)
    assert compiled["source"] == "precompiled" and compiled["INFERENCE_PRECISION_HINT"] == FAST_ON_THIS_CPU
    # What it computes is native OpenVINO's compilation of its IR at fast, and near eager.
    options = compile_specs.from_compile_specs(module.compile_specs)
    native = _native(module, x, compile_specs.load_time_properties("CPU", options.properties, "fast"))
    np.testing.assert_array_equal(out.numpy(), native, err_msg="the precompiled model differs from native OpenVINO")
    with torch.no_grad():
        expected = model(x)
    assert_matches([out], [expected], rel_tol=FAST_REL_TOL)


@pytest.mark.parametrize("arguments, message", [
    (dict(precision="fp16"), r"precision takes 'exact' \(f32, eager's results\) or 'fast'"),
    (dict(precision="fast", compile_options={"INFERENCE_PRECISION_HINT": "bf16"}),
     r"precision='fast' and compile option INFERENCE_PRECISION_HINT both choose the precision"),
])
def test_a_bad_precision_is_refused_at_export(arguments, message):
    with pytest.raises(ValueError, match=message):
        executorch_openvino.OpenvinoPartitioner(**arguments)


def test_a_bad_precision_is_refused_at_load_naming_the_two_words():
    with pytest.raises(executorch_openvino.OptionError, match=r"option 'precision' = 'quick': expected exact"):
        executorch_openvino.set_options(precision="quick")
    assert executorch_openvino.get_options()["precision"] is None
