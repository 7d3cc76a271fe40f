"""Why each failure and skip of our flow in ExecuTorch's backend operator suite happens, as found by
reproducing it: the report (run.py) puts the explanation beside the case, and make test's slice of
the suite (tests/python/models/test_peer_suite.py) lets a case fail or skip only when one explains it.

Keys are fnmatch patterns over the report's case ids (`<test module>::<test>[<parameters without the
flow>]`). A value is (the outcome kinds it excuses, explanation): a cause explains a case only when
the case ended in one of those kinds (kind_of, in the report's words), so a cause written for a skip
or a refusal never excuses a wrong result or a crash of the same case. The first entry whose pattern
matches the case and that names its kind wins."""

from __future__ import annotations

import fnmatch
from typing import Optional, Tuple

# The kinds of outcome of a case that did not pass (kind_of), in the report's order.
WRONG_RESULT = "wrong result"
RUNTIME_ERROR = "runtime error"
SERIALIZE_ERROR = "to_executorch / serialize error"
NOT_DELEGATED = "not delegated"
SUITE_LIMITATION = "suite's own limitation"
OUTCOME_KINDS = (WRONG_RESULT, RUNTIME_ERROR, "timeout", "lowering error", SERIALIZE_ERROR, "quantize error",
                 "test error", NOT_DELEGATED, SUITE_LIMITATION, "flow's skip list")

# What a failed subtest's result says went wrong (the suite's TestResult names).
KINDS = {
    "OUTPUT_MISMATCH_FAIL": WRONG_RESULT,
    "LOWER_FAIL": "lowering error",
    "PTE_RUN_FAIL": RUNTIME_ERROR,
    "PTE_LOAD_FAIL": RUNTIME_ERROR,
    "QUANTIZE_FAIL": "quantize error",
    "UNKNOWN_FAIL": SERIALIZE_ERROR,
}
# The suite skips a case that leaves one of these outside the delegate (runner.UNSUPPORTED_PORTABLE_OPS).
try:
    from executorch.backends.test.suite.runner import UNSUPPORTED_PORTABLE_OPS as PORTABLE_MISSING
except ImportError:
    PORTABLE_MISSING = set()


def failing_subtest(test: dict):
    for subtest in test["subtests"]:
        if subtest["result"] not in ("SUCCESS", "SUCCESS_UNDELEGATED"):
            return subtest
    return None


def kind_of(test: dict) -> str:
    """What happened to a test (a record's "end" row) that did not pass, in the report's words."""
    outcome, subtest = test["outcome"], failing_subtest(test)
    if outcome in ("crashed", "timeout"):
        return RUNTIME_ERROR if outcome == "crashed" else "timeout"
    if outcome == "skipped":
        if test.get("phase") == "setup":
            return "flow's skip list"
        if subtest is not None and subtest["result"] == "SKIPPED" and not subtest["error"]:
            if set(subtest["undelegated"]) & PORTABLE_MISSING:
                return NOT_DELEGATED  # ops left outside the delegate that ExecuTorch's portable kernels lack
            return SUITE_LIMITATION  # the suite skips every 3-d convolution, delegated or not
        return SUITE_LIMITATION  # eager or torch.export fails on the case, before any backend stage
    if subtest is not None:
        return KINDS.get(subtest["result"], subtest["result"])
    return "test error"  # the test body failed outside the suite's runner


CAUSES = {  # pattern: (the kinds it excuses, explanation)
    "test_median::*with_indices": ((SERIALIZE_ERROR,), (
        "ExecuTorch's emitter cannot write a program whose output is a `torch.return_types.median` named tuple "
        "(no pytree serialized name is registered for it): the lowering itself finished, every node delegated. "
        "The same model returning `(values, indices)` as a tuple lowers and runs equal to eager "
        "(tests/python/fx_passes/test_exact_ops.py::test_median). The other flows never reach the emitter: "
        "they leave median.dim outside and the suite skips the case.")),
    "*::*_edge_cases*": ((SUITE_LIMITATION,), (
        "the suite skips its NaN / infinity cases for every backend. Ours are held to eager's NaN and "
        "infinities by tests/python (lowering.assert_matches checks where eager has them; "
        "test_median_of_a_row_with_nan_is_nan, test_trunc_is_eagers_bit_for_bit).")),
    "test_*pool*::test_*pool*_padding": ((SUITE_LIMITATION,), (
        "eager PyTorch refuses the case (padding larger than half the kernel): an invalid test.")),
    "test_linear::*": ((SUITE_LIMITATION,), (
        "eager PyTorch refuses the case (the input has 64 features, the layer takes 67): an invalid test.")),
    "test_conv3d::*": ((SUITE_LIMITATION,), (
        "the suite's runner skips every graph holding a 3-d convolution, delegated or not (ours delegated it); "
        "the same variants are run against eager by tests/python/models/test_suite_skips.py.")),
    "test_convtranspose3d::*": ((SUITE_LIMITATION,), (
        "the suite's runner skips every graph holding a 3-d transposed convolution, delegated or not (ours "
        "delegated it); the same variants are run against eager by tests/python/models/test_suite_skips.py.")),
    "*::*inplace*": ((SUITE_LIMITATION,), (
        "the suite skips in-place activations for every backend; in-place activations on an intermediate "
        "value are run against eager by tests/python/models/test_suite_skips.py.")),
    "test_threshold::test_threshold_f32_all_params": ((SUITE_LIMITATION,), (
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


def cause(case: str, kind: str) -> Optional[str]:
    """The explanation of a failure or skip of ours that ended in `kind`, or None when no entry both
    matches the case and names that kind."""
    return next((explanation for pattern, (kinds, explanation) in CAUSES.items()
                 if kind in kinds and fnmatch.fnmatchcase(case, pattern)), None)


def excuse(test: dict) -> Optional[str]:
    """cause() of a record's "end" row that did not pass: its case and kind_of."""
    return cause(test["case"], kind_of(test))


def kinds_explained(case: str) -> Tuple[str, ...]:
    """Every kind some entry matching `case` excuses (to say so when the case ended otherwise)."""
    return tuple(dict.fromkeys(kind for pattern, (kinds, _) in CAUSES.items()
                               if fnmatch.fnmatchcase(case, pattern) for kind in kinds))


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
