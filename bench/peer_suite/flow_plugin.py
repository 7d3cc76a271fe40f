"""A pytest plugin that runs ExecuTorch's backend operator suite (executorch.backends.test.suite,
shipped in the executorch wheel) with a flow for our partitioner, and nothing else.

The suite's conftest builds its flows from `flow.all_flows()` when it is imported; this plugin is
loaded first (`-p`) and replaces that function, so the installed package stays untouched. Every
subtest's result and lowering time is appended as a JSON line to $PEER_SUITE_RECORD when set.
"""

from __future__ import annotations

import json
import os

import pytest

import executorch_openvino
import executorch.backends.test.suite.flow as suite_flow
from executorch.backends.test.harness import Tester
from executorch.backends.test.harness.stages import Partition, StageType, ToEdgeTransformAndLower

FLOW_NAME = "executorch_openvino"


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


OUR_FLOW = suite_flow.TestFlow(FLOW_NAME, backend=FLOW_NAME, tester_factory=OurTester)
suite_flow.all_flows = lambda: {FLOW_NAME: OUR_FLOW}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    record = os.environ.get("PEER_SUITE_RECORD")
    runner = getattr(item, "funcargs", {}).get("test_runner")
    if call.when != "call" or not record or runner is None:
        return
    report = outcome.get_result()
    with open(record, "a") as out:
        for summary in runner._results:
            out.write(json.dumps({
                "test": item.nodeid.split("::")[-1],
                "outcome": report.outcome,
                "subtest": summary.subtest_index,
                "result": summary.result.name,
                "lower_seconds": summary.lower_time.total_seconds() if summary.lower_time else None,
                "undelegated": dict(summary.undelegated_op_counts or {}),
                "error": str(summary.error)[:300] if summary.error else "",
            }) + "\n")
