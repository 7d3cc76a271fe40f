"""A pytest plugin that runs ExecuTorch's backend operator suite (executorch.backends.test.suite,
shipped in the executorch wheel) with the flows chosen in $PEER_SUITE_FLOWS (comma-separated,
default ours only): ours, `executorch_openvino` (our partitioner), and any flow ExecuTorch's suite
defines by its name (`openvino`, `xnnpack`, `portable`, ...).

The suite's conftest builds its flows from `flow.all_flows()` when it is imported; this plugin is
loaded first (`-p`) and replaces that function, so the installed package stays untouched. It also
opens the suite's test session with the seed $PEER_SUITE_SEED (default 1): without a session the
suite draws a new random seed for every case, so two flows would see different inputs; with it a
case's inputs are the same for every flow and every run.

When $PEER_SUITE_RECORD is set, one JSON line is appended to it when a test starts ("start") and
one when it ends ("end": flow, outcome, skip reason, and every subtest's result, error, lowering
time, delegated and undelegated ops), and a "meta" line at the session's end names the library
that held each backend id in ExecuTorch's registry (who ran the programs).
"""

from __future__ import annotations

import json
import os
import time

import pytest

import executorch_openvino
import executorch.backends.test.suite.flow as suite_flow
from executorch.backends.test.harness import Tester
from executorch.backends.test.harness.stages import Partition, StageType, ToEdgeTransformAndLower
from executorch.backends.test.suite import reporting

OURS = "executorch_openvino"
DEFAULT_SEED = 1


class OurTester(Tester):
    """The suite's tester with our partitioner in both lowering stages."""

    def __init__(self, module, example_inputs, dynamic_shapes=None):
        stages = Tester.default_stage_classes() | {
            StageType.PARTITION: lambda: Partition(partitioner=executorch_openvino.OpenvinoPartitioner()),
            StageType.TO_EDGE_TRANSFORM_AND_LOWER: lambda: ToEdgeTransformAndLower(
                default_partitioner_cls=executorch_openvino.OpenvinoPartitioner
            ),
        }
        super().__init__(module, example_inputs, stage_classes=stages, dynamic_shapes=dynamic_shapes)


OUR_FLOW = suite_flow.TestFlow(OURS, backend=OURS, tester_factory=OurTester)
_suite_flows = suite_flow.all_flows


def chosen_flows(names: str) -> dict:
    """The flows named in `names` (comma-separated), in that order; ExecuTorch's are built only when
    one of them is asked for (building them imports every backend the wheel has)."""
    wanted = [name.strip() for name in names.split(",") if name.strip()] or [OURS]
    theirs = _suite_flows() if any(name != OURS for name in wanted) else {}
    unknown = [name for name in wanted if name != OURS and name not in theirs]
    if unknown:
        raise pytest.UsageError(f"unknown flow(s) {', '.join(unknown)}; ExecuTorch's suite has: "
                                f"{', '.join(sorted(theirs))} (and ours, {OURS})")
    return {name: OUR_FLOW if name == OURS else theirs[name] for name in wanted}


FLOWS = chosen_flows(os.environ.get("PEER_SUITE_FLOWS", OURS))
suite_flow.all_flows = lambda: dict(FLOWS)

if reporting.get_active_test_session() is None:
    reporting.begin_test_session(None, seed=int(os.environ.get("PEER_SUITE_SEED", DEFAULT_SEED)))


def _write(line: dict) -> None:
    record = os.environ.get("PEER_SUITE_RECORD")
    if record:
        with open(record, "a") as out:
            out.write(json.dumps(line) + "\n")


def _flow_of(item) -> str | None:
    flow = getattr(item, "callspec", None) and item.callspec.params.get("test_runner")
    return getattr(flow, "name", None)


def _case(item, flow: str | None) -> str:
    """The test's id without its flow: the same string for every flow."""
    name = item.name
    if flow and "[" in name:
        base, params = name[:-1].split("[", 1)
        parts = params.split("-")
        if flow in parts:
            parts.remove(flow)
        name = f"{base}[{'-'.join(parts)}]" if parts else base
    module = item.nodeid.split("::")[0].rsplit("/", 1)[-1].removesuffix(".py")
    return f"{module}::{name}"


def _text(error) -> str:
    if error is None:
        return ""
    text = f"{type(error).__name__}: {error}"
    cause = error.__cause__ or error.__context__
    if cause is not None and str(cause) and str(cause) not in text:
        text += f" <- {type(cause).__name__}: {cause}"
    return text[:1500]


def _subtest(summary) -> dict:
    errors = [{"max": stats.error_max, "mae": stats.error_mae, "sqnr": stats.sqnr}
              for stats in summary.tensor_error_statistics or []]
    return {
        "index": summary.subtest_index,
        "result": summary.result.name,
        "error": _text(summary.error),
        "lower_seconds": summary.lower_time.total_seconds() if summary.lower_time else None,
        "delegated": dict(summary.delegated_op_counts or {}),
        "undelegated": dict(summary.undelegated_op_counts or {}),
        "output_errors": errors,
    }


def pytest_collection_modifyitems(config, items):
    """With $PEER_SUITE_RESUME, the tests the record already has an end for are left out (a restart
    after a case that killed the process, or a resumed run)."""
    record = os.environ.get("PEER_SUITE_RECORD")
    if not (os.environ.get("PEER_SUITE_RESUME") and record and os.path.exists(record)):
        return
    done = set()
    with open(record) as lines:
        for line in lines:
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if row.get("kind") == "end":
                done.add(row["nodeid"])
    kept = [item for item in items if item.nodeid not in done]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if item.nodeid in done])
        items[:] = kept


def pytest_collectreport(report):
    if report.failed:
        text = report.longreprtext or ""
        errors = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
        _write({"kind": "collect_error", "nodeid": report.nodeid, "error": (errors[-1] if errors else text[-300:])})


def pytest_runtest_logstart(nodeid, location):
    _write({"kind": "start", "nodeid": nodeid, "time": time.time()})


_started = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _started[item.nodeid] = time.perf_counter()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    # A test ends at its call, or at its setup when that was skipped or failed.
    if call.when == "call" or (call.when == "setup" and report.outcome != "passed"):
        flow = _flow_of(item)
        state = report.outcome
        if hasattr(report, "wasxfail"):
            state = "xfailed" if report.outcome == "skipped" else "xpassed"
        reason = ""
        if report.outcome == "skipped" and isinstance(report.longrepr, tuple):
            reason = str(report.longrepr[2]).removeprefix("Skipped: ")
        elif report.outcome == "failed":
            reason = (report.longreprtext or "").strip().splitlines()[-1:] or [""]
            reason = reason[0][:500]
        runner = getattr(item, "funcargs", {}).get("test_runner")
        _write({
            "kind": "end",
            "nodeid": item.nodeid,
            "test": item.name,
            "case": _case(item, flow),
            "flow": flow,
            "phase": call.when,
            "outcome": state,
            "reason": reason[:1500],
            "seconds": time.perf_counter() - _started.get(item.nodeid, time.perf_counter()),
            "subtests": [_subtest(summary) for summary in getattr(runner, "_results", [])],
        })


def pytest_sessionfinish(session, exitstatus):
    from executorch_openvino.runtime import library

    holders = {}
    for backend in ("OpenvinoBackend", executorch_openvino.BACKEND_ID, "XnnpackBackend"):
        try:
            holders[backend] = library.backend_library(backend) or ""
        except Exception as error:  # the library did not load: say why instead
            holders[backend] = f"unknown ({error})"
    session_state = reporting.get_active_test_session()
    _write({"kind": "meta", "flows": list(FLOWS), "holders": holders,
            "seed": session_state.seed if session_state else None, "exitstatus": int(exitstatus)})
