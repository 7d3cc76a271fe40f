"""A slice of ExecuTorch's backend operator suite (in the executorch wheel) run in make test through
tests/peer_suite/flow_plugin.py with our flow: the operators the suite once found wrong or left on
ExecuTorch's kernels (embedding_bag, median, round, trunc), the reductions ExecuTorch's own OpenVINO
flow fails at run time, and pooling. Each case must pass with nothing left outside our delegate, or
end in an outcome tests/peer_suite/causes.py explains for that case (a cause names the kinds of
outcome it excuses; the whole suite's report: bench/results/peer-suite-*.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import executorch.backends.test.suite as suite

REPO = Path(__file__).resolve().parents[3]
PLUGIN = REPO / "tests" / "peer_suite"
sys.path.insert(0, str(PLUGIN))
import causes  # noqa: E402

MODULES = ["test_embedding_bag", "test_median", "test_round", "test_trunc", "test_amax", "test_argmin", "test_mean",
           "test_avgpool2d", "test_transpose"]
# Left outside on purpose: a float64 mean (OpenVINO's CPU plugin computes float64 in float32).
MAY_STAY_OUTSIDE = {"test_mean::test_mean_output_dtype": {"aten::mean.dim"}}


def test_the_suites_cases_pass_delegated_or_have_a_known_cause(tmp_path, library_path):
    record = tmp_path / "record.jsonl"
    targets = [str(Path(suite.__file__).parent / "operators" / f"{name}.py") for name in MODULES]
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PLUGIN), *sys.path]),
                       PEER_SUITE_RECORD=str(record), PEER_SUITE_FLOWS="executorch_openvino")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "flow_plugin", "-p", "no:cacheprovider", *targets,
                           "-q", "-rN", "--show-capture=no"], capture_output=True, text=True, env=environment,
                          cwd=tmp_path, timeout=1500)
    ends = [row for row in map(json.loads, record.read_text().splitlines()) if row["kind"] == "end"]
    assert len(ends) >= 60, done.stdout[-3000:]  # the slice ran (the modules hold about 75 cases)
    problems = []
    for test in ends:
        case, outside = test["case"], {op for s in test["subtests"] for op in s["undelegated"]}
        if test["outcome"] != "passed" and causes.excuse(test) is None:  # no cause names this outcome
            problems.append(f"{case}: {test['outcome']} ({causes.kind_of(test)}): {test.get('reason', '')[:300]}"
                            f" {[s['error'][:300] for s in test['subtests'] if s['error']]}")
        elif test["outcome"] == "passed" and not outside <= MAY_STAY_OUTSIDE.get(case, set()):
            problems.append(f"{case}: passed, but left outside our delegate: {sorted(outside)}")
    assert not problems, "\n".join(problems)
    assert sum(test["outcome"] == "passed" for test in ends) >= 0.8 * len(ends)
