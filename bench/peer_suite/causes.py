"""Why each failure and skip of our flow in ExecuTorch's backend operator suite happens, as found by
reproducing it: the report (run.py) puts the explanation beside the case. Keys are fnmatch patterns
over the report's case ids (`<test module>::<test>[<parameters without the flow>]`); the first that
matches wins. A value is (kind, explanation); kind None keeps the kind the record gives."""

from __future__ import annotations

import fnmatch
from typing import Optional

CAUSES = {
    "test_median::*with_indices": (None, (
        "ExecuTorch's emitter cannot write a program whose output is a `torch.return_types.median` named tuple "
        "(no pytree serialized name is registered for it): the lowering itself finished, every node delegated. "
        "The same model returning `(values, indices)` as a tuple lowers and runs equal to eager "
        "(tests/python/fx_passes/test_exact_ops.py::test_median). The other flows never reach the emitter: "
        "they leave median.dim outside and the suite skips the case.")),
    "*::*_edge_cases*": (None, (
        "the suite skips its NaN / infinity cases for every backend. Ours are held to eager's NaN and "
        "infinities by tests/python (lowering.assert_matches checks where eager has them; "
        "test_median_of_a_row_with_nan_is_nan, test_trunc_is_eagers_bit_for_bit).")),
    "test_*pool*::test_*pool*_padding": (None, (
        "eager PyTorch refuses the case (padding larger than half the kernel): an invalid test.")),
    "test_linear::*": (None, (
        "eager PyTorch refuses the case (the input has 64 features, the layer takes 67): an invalid test.")),
    "test_conv3d::*": (None, (
        "the suite's runner skips every graph holding a 3-d convolution, delegated or not (ours delegated it); "
        "the same variants are run against eager by tests/python/models/test_suite_skips.py.")),
    "test_convtranspose3d::*": (None, (
        "the suite's runner skips every graph holding a 3-d transposed convolution, delegated or not (ours "
        "delegated it); the same variants are run against eager by tests/python/models/test_suite_skips.py.")),
    "*::*inplace*": (None, (
        "the suite skips in-place activations for every backend; in-place activations on an intermediate "
        "value are run against eager by tests/python/models/test_suite_skips.py.")),
    "test_threshold::test_threshold_f32_all_params": (None, (
        "the suite skips in-place activations for every backend (this case sets inplace=True); "
        "tests/python/models/test_suite_skips.py runs an in-place threshold against eager.")),
}

# Passes with something left outside our delegate, and why (the report prints them beside the case).
UNDELEGATED = {
    "test_trunc::*": ("at the checkout the report names, OpenVINO's frontend had no rule for trunc; it is "
                      "delegated since (fx_passes/ops/trunc.py)."),
    "test_mean::test_mean_output_dtype": ("a mean asked for in float64 stays on ExecuTorch's kernels: "
                                          "OpenVINO's CPU plugin computes float64 in float32."),
}

def _first_match(table: dict, case: str):
    return next((value for pattern, value in table.items() if fnmatch.fnmatchcase(case, pattern)), None)


def cause(case: str) -> Optional[tuple]:
    """(kind or None, explanation) of a failure or skip of ours, or None when none is written."""
    return _first_match(CAUSES, case)


def why_outside(case: str) -> Optional[str]:
    """Why a passing case left something outside our delegate, or None when that is not explained."""
    return _first_match(UNDELEGATED, case)


# Printed under "What could not run here" when the suite's models/ do not import.
UNRUNNABLE = (
    "models/ were therefore run by no flow. Neither package is installed beside torch 2.13.0+cpu, and PyPI's "
    "(the only registry this machine reaches) cannot be: its torchvision 0.28.0, the release built for torch "
    "2.13.0, fails on import with `RuntimeError: operator torchvision::nms does not exist`, because its _C.so "
    "needs `libc10_cuda.so` (PyPI's Linux wheels are CUDA builds; this torch has no CUDA libraries, and the CPU "
    "builds are on PyTorch's own index, out of reach); its newest torchaudio, 2.11.1, fails with `OSError: Could "
    "not load this library: .../torchaudio/lib/_torchaudio.so` for the same missing `libc10_cuda.so`."
)

KIND_NOTES = (
    "Kinds: 'wrong result' = the delegate's output differs from eager beyond the tolerance; 'lowering error' = "
    "partitioning or preprocess raised; 'runtime error' = the program failed (or killed the process) when run; "
    "'to_executorch / serialize error' = the lowered program could not be emitted; 'not delegated' = the suite "
    "skipped the case because ops it left outside the delegate have no portable kernel; \"suite's own limitation\" "
    "= eager PyTorch or torch.export already fails on the case (before any backend stage); \"flow's skip list\" = "
    "the flow's own skip_patterns; 'test error' = the test body failed outside the suite's runner."
)
