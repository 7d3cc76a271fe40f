"""tests/peer_suite/causes.py excuses a case of ExecuTorch's operator suite only for the kinds of
outcome its cause names: a skip explained as the suite's own limitation stays excused, the same case
producing a wrong result (or crashing) is not, in make test's slice (causes.excuse) and in the
report (run.py)."""

from __future__ import annotations

import fnmatch
import sys
from pathlib import Path

import pytest

PEER_SUITE = Path(__file__).resolve().parents[3] / "tests" / "peer_suite"
sys.path.insert(0, str(PEER_SUITE))
import causes  # noqa: E402
import run  # noqa: E402

LINEAR = "test_linear::test_linear_no_bias"  # excused: eager PyTorch refuses the suite's case


def _subtest(result: str, error: str = "", errors=()) -> dict:
    return {"index": 0, "result": result, "error": error, "lower_seconds": 0.1, "delegated": {"aten::mm": 1},
            "undelegated": {}, "output_errors": list(errors)}


def _end(case: str, outcome: str, subtests=(), reason: str = "") -> dict:
    return {"kind": "end", "nodeid": f"operators/{case.split('::')[0]}.py::{case.split('::')[1]}",
            "test": case.split("::")[1], "case": case, "flow": run.OURS, "phase": "call", "outcome": outcome,
            "reason": reason, "seconds": 1.0, "subtests": list(subtests)}


def _refused(case: str) -> dict:
    return _end(case, "skipped", reason="RuntimeError: mat1 and mat2 shapes cannot be multiplied (16x64 and 67x43)")


def _mismatch(case: str) -> dict:
    return _end(case, "failed", [_subtest("OUTPUT_MISMATCH_FAIL", "AssertionError: outputs differ",
                                          [{"max": 0.5, "mae": 0.1, "sqnr": 12.0}])])


def _crashed(case: str) -> dict:
    return _end(case, "crashed", reason="the pytest process died (return code -11)")


def test_a_skip_its_cause_names_is_excused_and_a_mismatch_of_the_same_case_is_not():
    assert causes.kind_of(_refused(LINEAR)) == causes.SUITE_LIMITATION
    assert causes.excuse(_refused(LINEAR)) is not None
    assert causes.kind_of(_mismatch(LINEAR)) == causes.WRONG_RESULT
    assert causes.excuse(_mismatch(LINEAR)) is None
    assert causes.excuse(_crashed(LINEAR)) is None


@pytest.mark.parametrize("pattern", list(causes.CAUSES))
def test_every_cause_names_known_kinds_and_excuses_no_other(pattern):
    kinds, explanation = causes.CAUSES[pattern]
    assert kinds and set(kinds) <= set(causes.OUTCOME_KINDS), kinds
    assert explanation
    case = pattern.replace("*", "x")  # a case the pattern matches
    assert fnmatch.fnmatchcase(case, pattern)
    for kind in causes.OUTCOME_KINDS:
        assert (causes.cause(case, kind) is not None) == (kind in kinds), kind
    if causes.WRONG_RESULT not in kinds:
        assert causes.excuse(_mismatch(case)) is None


def test_the_report_leaves_a_mismatch_of_an_excused_case_unexplained():
    rows = [{"kind": "command", "command": "run.py", "checkout": "abc1234", "versions": "torch x"},
            {"kind": "process", "flow": run.OURS, "attempt": 1, "start": 0.0},
            {"kind": "process_end", "flow": run.OURS, "attempt": 1, "end": 1.0, "seconds": 1.0, "returncode": 1},
            _mismatch(LINEAR), _refused("test_linear::test_linear_batch_sizes"),
            {"kind": "machine", "machine": "a machine"}]
    text = run.report(rows, None, "run.py")
    (mismatch,) = [line for line in text.splitlines() if line.startswith(f"| `{LINEAR}` |")]
    assert "| wrong result |" in mismatch
    assert "not yet explained (causes.py explains only suite's own limitation for this case)" in mismatch
    (refused,) = [line for line in text.splitlines() if line.startswith("| `test_linear::test_linear_batch_sizes` |")]
    assert "| suite's own limitation |" in refused and "eager PyTorch refuses the case" in refused
    assert "1 of them not yet explained in tests/peer_suite/causes.py." in text
