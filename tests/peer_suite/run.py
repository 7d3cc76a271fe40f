"""ExecuTorch's backend operator suite (shipped in the executorch wheel) run with several flows on
the same cases: ours (`executorch_openvino`) beside ExecuTorch's own `openvino` and `xnnpack` flows
by default. The report gives each flow's pass / fail / skip / xfail counts, every failure and skip of
ours with its kind and cause (causes.py; a cause explains only the kinds of outcome it names), and
the cases on which the flows disagree.

  .venv/bin/python tests/peer_suite/run.py [-k EXPRESSION] [--flows executorch_openvino,openvino,xnnpack]
      [--suites operators,models] [--seed N] [--timeout SECONDS] [--record PATH [--resume]] [--results-dir DIR]
  .venv/bin/python tests/peer_suite/run.py --from-record PATH    (the report again from a run's record)

Each flow runs in a pytest process of its own (flow_plugin.py). A case that kills its process, or
runs longer than --timeout, is recorded as crashed / timed out and the process starts again after
it. The whole suite takes about 25 minutes a flow on 2 cores (`make test-peer-suite`). Report:
bench/results/peer-suite-<date>.md; the raw record beside it (peer-suite-<date>.jsonl.tmp, not kept in git)
unless --record says where. Not part of make test (too slow): its slice, tests/python/models/test_peer_suite.py,
is, and the cases it found wrong are pinned by tests/python.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(REPO / "python"), str(HERE)]  # the package, causes
from executorch_openvino.benchmark import machine  # noqa: E402

import causes  # noqa: E402
from causes import PORTABLE_MISSING, failing_subtest, kind_of  # noqa: E402

OURS = "executorch_openvino"
DEFAULT_FLOWS = f"{OURS},openvino,xnnpack"
SUITES = ("operators", "models")

FAILED = ("failed", "crashed", "timeout", "xfailed", "xpassed")


def say(text: str) -> None:
    print(text, flush=True)


def _versions() -> str:
    return ", ".join(f"{name} {version}" for name, version in machine.versions("executorch", "torch", "openvino").items())


def markdown_row(*cells) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def table_head(columns, align: str = "") -> list:
    rules = {"l": "---", "r": "---:", "c": ":---:"}
    return [markdown_row(*columns), markdown_row(*(rules[letter] for letter in align.ljust(len(columns), "l")))]


def print_and_save(text: str, directory: Path, name: str) -> None:
    print("\n" + text, flush=True)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text(text)


# --- running -------------------------------------------------------------------------------------

def read_record(record: Path) -> list:
    if not record.exists():
        return []
    rows = []
    for line in record.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:  # a line cut short by a killed process
            pass
    return rows


def append(record: Path, line: dict) -> None:
    with open(record, "a") as out:
        out.write(json.dumps(line) + "\n")


def dangling(rows: list) -> tuple:
    """The test that started last and has not ended (its nodeid and start time), or (None, None)."""
    ended = {row["nodeid"] for row in rows if row["kind"] == "end"}
    for row in reversed(rows):
        if row["kind"] == "start":
            return (None, None) if row["nodeid"] in ended else (row["nodeid"], row["time"])
    return None, None


def run_flow(flow: str, targets: list, args, record: Path) -> None:
    """One flow's pytest process, started again after every case that kills it or hangs."""
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "python"), str(HERE)]),
                       PEER_SUITE_RECORD=str(record), PEER_SUITE_FLOWS=flow, PEER_SUITE_SEED=str(args.seed),
                       PEER_SUITE_RESUME="1")
    log_path = record.parent / f"{record.stem}.{flow}.log.tmp"  # *.tmp: not kept in git
    command = [sys.executable, "-m", "pytest", "-p", "flow_plugin", "-p", "no:cacheprovider", "-p", "no:logging",
               *targets, "-q", "--show-capture=no", "-rN", "--continue-on-collection-errors"]
    if args.expression:
        command += ["-k", args.expression]
    for attempt in range(1, 200):
        started = time.time()
        append(record, {"kind": "process", "flow": flow, "attempt": attempt, "start": started})
        with open(log_path, "a") as log:
            child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment, cwd=REPO,
                                     start_new_session=True)
            killed = None
            while child.poll() is None:
                time.sleep(5)
                nodeid, since = dangling(read_record(record))
                if nodeid and time.time() - since > args.timeout:
                    os.killpg(child.pid, signal.SIGKILL)
                    child.wait()
                    killed = nodeid
        rows = read_record(record)
        append(record, {"kind": "process_end", "flow": flow, "attempt": attempt, "end": time.time(),
                        "seconds": time.time() - started, "returncode": child.returncode})
        nodeid, _ = dangling(rows)
        if nodeid is None:
            return  # the process ended by itself with every test it started ended
        outcome = "timeout" if killed else "crashed"
        reason = (f"killed after {args.timeout} s" if killed
                  else f"the pytest process died (return code {child.returncode}); last log lines: "
                       + " | ".join(log_path.read_text().strip().splitlines()[-3:])[-600:])
        append(record, {"kind": "end", "nodeid": nodeid, "test": nodeid.split("::")[-1], "flow": flow,
                        "case": case_of(nodeid, flow), "outcome": outcome, "reason": reason, "subtests": [],
                        "phase": "call", "seconds": None})
        say(f"{flow}: {nodeid} {outcome}; starting again after it")


def case_of(nodeid: str, flow: str) -> str:
    module, name = nodeid.split("::")[0].rsplit("/", 1)[-1].removesuffix(".py"), nodeid.split("::")[-1]
    if "[" in name:
        base, params = name[:-1].split("[", 1)
        parts = [part for part in params.split("-")]
        if flow in parts:
            parts.remove(flow)
        name = f"{base}[{'-'.join(parts)}]" if parts else base
    return f"{module}::{name}"


# --- reading the record ----------------------------------------------------------------------------

def short_error(test: dict) -> str:
    subtest = failing_subtest(test)
    text = (subtest["error"] if subtest and subtest["error"] else "") or test.get("reason", "")
    if subtest and subtest["result"] == "SKIPPED" and not subtest["error"]:
        left = sorted(set(subtest["undelegated"]) & PORTABLE_MISSING)
        text = ("left undelegated, no portable kernel: " + ", ".join(left) if left
                else "the suite skips 3-d convolutions (its portable kernels lack them), delegated or not")
    if test.get("phase") == "setup":
        text = test.get("reason", "")
    text = " ".join(text.split())
    if subtest and subtest["output_errors"] and subtest["result"] == "OUTPUT_MISMATCH_FAIL":
        worst = max((e["max"] or 0.0) for e in subtest["output_errors"])
        text = f"max abs error {worst:.3g}; " + text
    return cell(text, 220)


def cell(text: str, limit: int) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cause_of(case: str, kind: str) -> str:
    """causes.py's explanation of a case that ended in `kind`, or "not yet explained" (saying which
    kinds causes.py does explain for the case, when it explains others)."""
    explanation = causes.cause(case, kind)
    if explanation is not None:
        return explanation
    others = causes.kinds_explained(case)
    return "not yet explained" + (f" (causes.py explains only {', '.join(others)} for this case)" if others else "")


def short_outcome(test) -> str:
    if test is None:
        return "—"
    if test["outcome"] == "passed":
        return "pass" if delegated(test) else "pass (nothing delegated)"
    if test["outcome"] == "skipped":
        return f"skip ({kind_of(test)})"
    return f"{test['outcome'].replace('failed', 'fail')} ({kind_of(test)})"


def delegated(test: dict) -> bool:
    return any(subtest["result"] == "SUCCESS" for subtest in test["subtests"])


def verdict(test) -> str:
    if test is None:
        return "absent"
    if test["outcome"] == "passed":
        return "pass"
    return "skip" if test["outcome"] == "skipped" else "fail"


# --- the report ------------------------------------------------------------------------------------

def report(rows: list, args, command_line: str) -> str:
    metas = [row for row in rows if row["kind"] == "meta"]
    ends = [row for row in rows if row["kind"] == "end"]
    flows = list(dict.fromkeys(row["flow"] for row in rows if row["kind"] == "process"))
    tests = {flow: {} for flow in flows}
    for row in ends:
        tests.setdefault(row["flow"], {})[row["case"]] = row  # a later end (after a restart) wins
    collect_errors = {row["nodeid"]: row["error"] for row in rows if row["kind"] == "collect_error"}
    seconds = collections.defaultdict(float)
    for row in rows:
        if row["kind"] == "process_end":
            seconds[row["flow"]] += row["seconds"]
    cases = sorted(set().union(*[set(by_case) for by_case in tests.values()])) if tests else []
    first = min((row["start"] for row in rows if row["kind"] == "process"), default=None)
    stamp = datetime.datetime.fromtimestamp(first) if first else datetime.datetime.now()
    seeds = {meta.get("seed") for meta in metas}
    holders = metas[-1]["holders"] if metas else {}
    command_row = next((row for row in rows if row["kind"] == "command"), {})
    ended_on = next((row["machine"] for row in reversed(rows) if row["kind"] == "machine"), None)

    lines = [
        f"# ExecuTorch's backend operator suite: our flow beside ExecuTorch's, {stamp:%Y-%m-%d %H:%M}",
        "",
        f"- command: `{command_line}`",
        f"- flows: {', '.join(flows)}; seed {', '.join(map(str, sorted(s for s in seeds if s is not None))) or '?'} "
        "(the suite's test session opened by flow_plugin.py, so every flow sees the same inputs for a case)",
        f"- run time: {', '.join(f'{flow} {seconds[flow] / 60:.0f} min' for flow in flows)} "
        f"({sum(seconds.values()) / 60:.0f} min in all)",
        f"- checkout {command_row.get('checkout') or machine.commit(REPO)}; "
        f"{command_row.get('versions') or _versions()}",
        f"- {ended_on or machine.text(machine.describe())}",
        "",
        "## What ran the programs",
        "",
    ]
    for backend, holder in holders.items():
        lines.append(f"- `{backend}`: {holder or 'registered by no library'}")
    lines += [
        "",
        "ExecuTorch's `openvino` flow lowers with ExecuTorch's own OpenVINO partitioner, whose programs name "
        "the backend `OpenvinoBackend`; they ran on the library named above for that id (our library takes "
        "that name only when no one holds it). Ours ran on `ExecutorchOpenvinoBackend`.",
        "",
    ]
    if collect_errors:
        lines += ["## What could not run here", ""]
        for nodeid, error in sorted(collect_errors.items()):
            lines.append(f"- `{nodeid.rsplit('/', 2)[-2] + '/' + nodeid.rsplit('/', 1)[-1]}` (every flow): "
                         f"cannot be imported: `{error}`")
        lines += ["", causes.UNRUNNABLE, ""]

    # Counts.
    lines += ["## Counts per flow", "",
              f"Over the same {len(cases)} cases (test x parameters; a flow's id removed). A test passes when every "
              "subtest's delegate output equals eager PyTorch within the suite's tolerance (atol 0.1, rtol 0.04); "
              "'nothing delegated' counts the passes where the flow's partitioner took no node (the program ran on "
              "ExecuTorch's portable kernels).", ""]
    lines += table_head(["flow", "cases", "pass", "of which nothing delegated", "fail", "skip", "xfail",
                                 "crashed / timeout"], "lrrrrrrr")
    for flow in flows:
        outcomes = collections.Counter(test["outcome"] for test in tests[flow].values())
        undelegated = sum(1 for test in tests[flow].values() if test["outcome"] == "passed" and not delegated(test))
        lines.append(markdown_row(flow, len(tests[flow]), outcomes["passed"], undelegated, outcomes["failed"],
                                 outcomes["skipped"], outcomes["xfailed"] + outcomes["xpassed"],
                                 outcomes["crashed"] + outcomes["timeout"]))
    kinds = sorted({kind_of(test) for flow in flows for test in tests[flow].values() if test["outcome"] != "passed"})
    lines += ["", "Failures and skips by kind:", ""]
    lines += table_head(["flow", *kinds], "l" + "r" * len(kinds))
    for flow in flows:
        counted = collections.Counter(kind_of(test) for test in tests[flow].values() if test["outcome"] != "passed")
        lines.append(markdown_row(flow, *(counted[kind] for kind in kinds)))
    lines += ["", causes.KIND_NOTES, ""]

    # Ours: every failure and skip.
    if OURS in tests:
        ours = tests[OURS]
        bad = {case: test for case, test in ours.items() if test["outcome"] != "passed"}
        lines += [f"## Every failure and skip of ours ({len(bad)})", ""]
        if bad:
            lines += table_head(["test", "kind", "error (short)", "cause"])
            unexplained = 0
            for case, test in sorted(bad.items(), key=lambda item: (kind_order(kind_of(item[1])), item[0])):
                kind = kind_of(test)
                explanation = cause_of(case, kind)
                unexplained += explanation.startswith("not yet explained")
                lines.append(markdown_row(f"`{case}`", kind, short_error(test), explanation))
            if unexplained:
                lines += ["", f"{unexplained} of them not yet explained in tests/peer_suite/causes.py."]
        else:
            lines.append("None.")
        partial = {case: test for case, test in ours.items()
                   if test["outcome"] == "passed" and undelegated_ops(test)}
        if partial:
            lines += ["", f"Passed with something left outside our delegate ({len(partial)}):", ""]
            lines += table_head(["test", "left outside", "why"])
            for case, test in sorted(partial.items()):
                why = causes.why_outside(case) or "not yet explained"
                lines.append(markdown_row(f"`{case}`", ", ".join(sorted(undelegated_ops(test))), why))
        lines += accuracy(tests, flows)
        lines.append("")

    # Per case.
    others = [flow for flow in flows if flow != OURS]
    if OURS in tests and others:
        lines += ["## Per case: where the flows disagree", ""]
        for other in others:
            worse = [case for case in cases if verdict(tests[OURS].get(case)) == "fail"
                     and verdict(tests[other].get(case)) == "pass"]
            better = [case for case in cases if verdict(tests[other].get(case)) == "fail"
                      and verdict(tests[OURS].get(case)) == "pass"]
            lines.append(f"- ours fails, {other} passes: {len(worse)}"
                         + (f" ({', '.join(f'`{case}`' for case in worse)})" if worse else ""))
            lines.append(f"- {other} fails, ours passes: {len(better)}")
        lines += ["", "Every case whose verdict (pass / fail / skip) differs between two flows:", ""]
        lines += table_head(["case", *flows])
        for case in cases:
            if len({verdict(tests[flow].get(case)) for flow in flows}) > 1:
                lines.append(markdown_row(f"`{case}`", *(short_outcome(tests[flow].get(case)) for flow in flows)))
        lines.append("")

    # Other flows' failures, for reference.
    for other in others:
        bad = {case: test for case, test in tests[other].items() if test["outcome"] in FAILED}
        if bad:
            lines += [f"<details><summary>{other}: its {len(bad)} failures</summary>", ""]
            lines += table_head(["test", "kind", "error (short)"])
            for case, test in sorted(bad.items()):
                lines.append(markdown_row(f"`{case}`", kind_of(test), short_error(test)))
            lines += ["", "</details>", ""]

    # Lowering time.
    lines += ["## Lowering time", ""]
    lines += table_head(["flow", "subtests lowered", "median s", "max s", "slowest tests (s, sum of subtests)"],
                                "lrrrl")
    for flow in flows:
        lowering = [s["lower_seconds"] for test in tests[flow].values() for s in test["subtests"]
                    if s["lower_seconds"] is not None]
        per_test = {case: sum(s["lower_seconds"] or 0.0 for s in test["subtests"]) for case, test in tests[flow].items()}
        slowest = sorted(per_test.items(), key=lambda item: -item[1])[:4]
        lines.append(markdown_row(flow, len(lowering), f"{statistics.median(lowering):.2f}" if lowering else "—",
                                 f"{max(lowering):.1f}" if lowering else "—",
                                 ", ".join(f"{case.split('::')[-1]} {value:.0f}" for case, value in slowest)))
    return "\n".join(lines) + "\n"


def accuracy(tests: dict, flows: list) -> list:
    """How close each flow's delegated outputs came to eager's, beyond the suite's pass / fail: over
    every output of every subtest that ran a delegate, the largest absolute error and the lowest SQNR."""
    lines = ["", "## How close to eager", "",
             "Every output of every subtest that ran something delegated and passed, against eager PyTorch on the "
             "same inputs: how many were bit-identical, and the worst absolute error and SQNR (dB) any case had.", ""]
    lines += table_head(["flow", "outputs", "bit-identical", "largest abs error", "in", "lowest SQNR",
                                 "in"], "lrrrlrl")
    for flow in flows:
        errors = [(error, case) for case, test in tests[flow].items() if test["outcome"] == "passed"
                  for subtest in test["subtests"] if subtest["result"] == "SUCCESS"
                  for error in subtest["output_errors"]]
        if not errors:
            continue
        identical = sum((error["max"] or 0.0) == 0.0 for error, _ in errors)
        worst, worst_case = max(errors, key=lambda item: item[0]["max"] or 0.0)
        finite = [(error, case) for error, case in errors if error["sqnr"] not in (None, float("inf"))]
        lowest, lowest_case = min(finite, key=lambda item: item[0]["sqnr"]) if finite else ({"sqnr": None}, "—")
        lines.append(markdown_row(flow, len(errors), identical, f"{worst['max'] or 0.0:.3g}", f"`{worst_case}`",
                                 "—" if lowest["sqnr"] is None else f"{lowest['sqnr']:.1f}", f"`{lowest_case}`"))
    return lines


def kind_order(kind: str) -> int:
    order = causes.OUTCOME_KINDS
    return order.index(kind) if kind in order else len(order)


def undelegated_ops(test: dict) -> set:
    return {op for subtest in test["subtests"] for op in subtest["undelegated"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", dest="expression", help="pytest -k expression selecting cases")
    parser.add_argument("--flows", default=DEFAULT_FLOWS,
                        help=f"comma-separated flows: {OURS} (ours) and any of ExecuTorch's suite "
                             f"(openvino, openvino_int8, xnnpack, portable, ...); default {DEFAULT_FLOWS}")
    parser.add_argument("--suites", default=",".join(SUITES), help="the suite's folders to run (default %(default)s)")
    parser.add_argument("--seed", type=int, default=1, help="the suite's input seed (default %(default)s)")
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="seconds a test may run before its process is killed (default %(default)s)")
    parser.add_argument("--record", type=Path, help="the raw record (JSON lines; default beside the report, .jsonl.tmp)")
    parser.add_argument("--resume", action="store_true", help="keep --record's tests and run only the others")
    parser.add_argument("--from-record", type=Path, help="write the report from this record; run nothing")
    parser.add_argument("--results-dir", type=Path, default=REPO / "bench" / "results", help="where the report goes")
    args = parser.parse_args()
    directory = args.results_dir
    command_line = "tests/peer_suite/run.py " + " ".join(sys.argv[1:])

    if args.from_record:
        rows = read_record(args.from_record)
        stamp = min((row["start"] for row in rows if row["kind"] == "process"), default=time.time())
        name = f"peer-suite-{datetime.date.fromtimestamp(stamp).isoformat()}.md"
        first_command = next((row["command"] for row in rows if row["kind"] == "command"), command_line)
        print_and_save(report(rows, args, first_command), directory, name)
        return 0

    import executorch.backends.test.suite as suite

    targets = [str(Path(suite.__file__).parent / name) for name in args.suites.split(",") if name]
    record = args.record or directory / f"peer-suite-{datetime.date.today().isoformat()}.jsonl.tmp"
    record.parent.mkdir(parents=True, exist_ok=True)
    if record.exists() and not args.resume:
        record.unlink()
    if not args.resume:
        # What ran is written down now: a report written later from the record names it, not the
        # checkout of that moment.
        append(record, {"kind": "command", "command": command_line, "checkout": machine.commit(REPO),
                        "versions": _versions()})
    for flow in [name.strip() for name in args.flows.split(",") if name.strip()]:
        say(f"{flow}: running")
        run_flow(flow, targets, args, record)
    append(record, {"kind": "machine", "machine": machine.text(machine.describe())})  # its load at the run's end
    rows = read_record(record)
    first_command = next((row["command"] for row in rows if row["kind"] == "command"), command_line)
    print_and_save(report(rows, args, first_command), directory, f"peer-suite-{datetime.date.today().isoformat()}.md")
    ours = [row for row in rows if row["kind"] == "end" and row["flow"] == OURS and row["outcome"] in FAILED]
    return 1 if ours else 0


if __name__ == "__main__":
    sys.exit(main())
