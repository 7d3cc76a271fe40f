"""`bench`: backends timed in interleaved rounds (the rounds themselves: tests/python/benchmark/), several
requests in flight in throughput mode, --option reaching ours and native OpenVINO
alike, the time-based mode, the JSON (the engine's run format) and CSV outputs, the printed table being
the engine's rendering of that run, XNNPACK lowered once and then taken from the cache, and every
backend's outputs checked against eager PyTorch."""

from __future__ import annotations

import csv
import json
import statistics
import subprocess
import sys
import textwrap

import pytest

import executorch_openvino
from executorch_openvino import benchmark, cli
from executorch_openvino.benchmark import backends as _bench_backends
from executorch_openvino.cli.bench import report as _bench_report
from executorch_openvino.runtime.precision import default_precision

# The factory bench's --model imports (a file, as a user's would be): the tests' SmallNet.
MODELS = textwrap.dedent(
    """
    import torch
    from lowering import SmallNet


    def make():
        torch.manual_seed(0)
        return SmallNet(), (torch.randn(1, 3, 12, 12),)
    """
)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """(the .pte, MODULE:FACTORY of the model it came from)."""
    folder = tmp_path_factory.mktemp("bench")
    (folder / "bench_models.py").write_text(MODELS)
    spec = f"{folder / 'bench_models.py'}:make"
    assert cli.main(["export", spec, "--out", str(folder / "small.pte")]) == 0
    return folder / "small.pte", spec


def _bench(capsys, *args) -> tuple:
    """Runs bench in-process, its steps shown as on a terminal (cli/progress.py); returns (its stdout
    then stderr, the JSON it wrote)."""
    from unittest import mock

    from executorch_openvino.cli import progress

    with mock.patch.object(progress, "steps_shown", lambda: True):
        status = cli.main(["bench", *map(str, args)])
    captured = capsys.readouterr()
    printed = captured.out + captured.err
    assert status == 0, printed
    json_path = next((args[i + 1] for i, a in enumerate(args) if a == "--json"), None)
    return printed, (json.loads(json_path.read_text()) if json_path is not None else None)


def _by_backend(run: dict) -> dict:
    return {row["variant"]: row for row in run["rows"]}


def _orders(run: dict) -> list:
    """Each round's order of the timed backends, from their turns."""
    timed = [key for key, row in _by_backend(run).items() if row["available"]]
    rounds = len(_by_backend(run)[timed[0]]["turn"])
    for r in range(rounds):  # each round's turns are one of each position
        assert sorted(_by_backend(run)[key]["turn"][r] for key in timed) == list(range(len(timed)))
    return [sorted(timed, key=lambda key: _by_backend(run)[key]["turn"][r]) for r in range(rounds)]


# --- the command, on a real model ---------------------------------------------------------------------


def test_every_backend_is_timed_in_rounds_checked_against_eager_and_xnnpack_is_lowered_once(model, tmp_path, capsys):
    pte, spec = model
    cache = tmp_path / "xnnpack-cache"
    args = [pte, "--model", spec, "-n", 6, "--rounds", 3, "--warmup", 1, "--xnnpack-cache", cache,
            "--json", tmp_path / "r.json", "--csv", tmp_path / "r.csv"]
    printed, report = _bench(capsys, *args)
    assert "lowering the model to XNNPACK" in printed and f"XNNPACK program: lowered now, cached as {cache}" in printed
    assert len(list(cache.glob("xnnpack-*.pte"))) == 1

    backends = _by_backend(report)
    assert list(backends) == ["ours", "fast", "native", "xnnpack", "eager"]
    settings = report["settings"]
    assert settings["reference"] == "eager" and settings["baseline"] == "native" and settings["rounds"] == 3
    # precision=fast is timed beside the rest only where it computes in another precision than f32.
    fast = backends["fast"]
    if default_precision("CPU") == "f32":
        assert not fast["available"] and "the same as this run on this machine: OpenVINO's CPU default precision " \
            "is f32" in fast["note"], fast
        assert "executorch_openvino, precision=fast: n/a: the same as this run" in printed
        del backends["fast"]
    else:
        assert fast["available"] and fast["properties"]["INFERENCE_PRECISION_HINT"] == default_precision("CPU")
        assert fast["max_abs_diff"] > 0, "precision=fast computed exactly what f32 did"
        backends.pop("fast")
    for key, entry in backends.items():
        assert entry["available"] and entry["calls"] == 6 and [len(r) for r in entry["latency_ms"]] == [2, 2, 2], entry
        assert entry["outputs_agree"] is True and entry["max_abs_diff"] <= 1e-4, entry
    native = next(line for line in printed.splitlines() if line.startswith("| native OpenVINO"))
    assert "| 1.000× | 1.000 [1.000–1.000]× |" in native, printed
    orders = _orders(report)
    assert len(orders) == 3 and len({tuple(o) for o in orders}) == 3
    timed = [key for key, entry in _by_backend(report).items() if entry["available"]]
    assert all(_by_backend(report)[key]["round_calls"] == [2, 2, 2] for key in timed)

    with open(tmp_path / "r.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    assert [row["backend"] for row in rows if row["backend"] != "fast"] == list(backends)
    assert list(rows[0]) == list(_bench_report.CSV_COLUMNS)
    ours = backends["ours"]["latency_ms"]
    assert float(rows[0]["median_ms"]) == pytest.approx(statistics.median([t for r in ours for t in r]))
    assert float(next(row for row in rows if row["backend"] == "native")["ratio"]) == 1.0

    # The second run takes the XNNPACK program from the cache.
    printed, _ = _bench(capsys, pte, "--model", spec, "-n", 2, "--rounds", 1, "--xnnpack-cache", cache)
    assert "lowering the model to XNNPACK" not in printed and f"XNNPACK program: the cache ({cache}" in printed


def test_options_reach_ours_and_native_alike_and_are_removed_afterwards(model, tmp_path, capsys):
    pte, _ = model
    _, report = _bench(capsys, pte, "--option", "num_threads=1", "--option", "inference_precision=f32",
                       "--backends", "ours,native", "-n", 4, "--rounds", 2, "--json", tmp_path / "r.json")
    assert report["settings"]["options"] == {"num_threads": "1", "inference_precision": "f32"}
    ours, native = (_by_backend(report)[key]["properties"] for key in ("ours", "native"))
    assert ours["INFERENCE_NUM_THREADS"] == "1" and ours["INFERENCE_PRECISION_HINT"] == "f32"
    for key in _bench_backends.REPORTED_PROPERTIES + ("EXECUTION_DEVICES", "device"):
        assert native[key] == ours[key], key
    assert executorch_openvino.get_options()["num_threads"] is None
    assert not _by_backend(report)["xnnpack"]["available"]


def test_throughput_mode_keeps_several_requests_in_flight_with_the_throughput_hint(model, tmp_path, capsys):
    pte, _ = model
    printed, report = _bench(capsys, pte, "--mode", "throughput", "--requests", 2, "--streams", 2, "-n", 8,
                             "--rounds", 2, "--json", tmp_path / "r.json")
    assert "| backend | requests | inferences/s | median latency ms | throughput / native's |" in printed
    settings = report["settings"]
    assert settings["mode"] == "throughput" and settings["requests"] == 2
    assert settings["options"] == {"num_streams": "2", "performance_hint": "THROUGHPUT"}
    for key in ("ours", "native"):
        entry = _by_backend(report)[key]
        assert entry["requests"] == 2 and entry["calls"] == 8 and entry["throughput_per_s"] > 0, entry
        assert entry["properties"]["PERFORMANCE_HINT"] == "THROUGHPUT" and entry["properties"]["NUM_STREAMS"] == "2"


def test_the_time_based_mode_times_each_backend_for_its_share(model, tmp_path, capsys):
    pte, _ = model
    _, report = _bench(capsys, pte, "-t", 0.3, "--rounds", 3, "--json", tmp_path / "r.json")
    assert report["settings"]["iterations"] is None and report["settings"]["seconds"] == 0.3
    # precision=fast is timed too where it is another precision on this CPU (asked of OpenVINO).
    timed = {"ours", "native"} | ({"fast"} if default_precision("CPU") != "f32" else set())
    orders = _orders(report)
    assert len(orders) == 3 and all(set(order) == timed for order in orders)
    for key in timed:
        row = _by_backend(report)[key]
        assert len(row["round_seconds"]) == 3 and all(seconds >= 0.1 for seconds in row["round_seconds"]), row
        assert all(calls >= 1 for calls in row["round_calls"]), row


def test_a_backend_whose_outputs_differ_is_flagged():
    import numpy as np

    expected = np.linspace(-2.0, 2.0, 10, dtype=np.float32)
    differences = _bench_report.output_differences(
        {"eager": {0: expected}, "ours": {0: expected + 1e-6}, "native": {0: expected + np.float32(0.5)},
         "xnnpack": {0: expected[:5]}}, "eager")
    assert differences["ours"][1] is True and differences["native"][1] is False
    assert differences["native"][0] == pytest.approx(0.5) and differences["xnnpack"] == (None, False)
    settings = {"pte": "m.pte", "method": "forward", "reference": "eager"}
    run = benchmark.new_run("bench", "differences", settings=settings,
                            report=_bench_report.report_spec(False, "native", "eager", "", []))
    made = [_bench_backends.Backend(key) for key in ("ours", "native", "xnnpack", "eager")]
    _bench_report.add_backends(run, made, None, differences)
    lines = {line.split(" | ")[0][2:]: line for line in benchmark.render(run).splitlines() if line.startswith("| ")}
    assert lines[made[1].label].endswith("| 5.0e-01 DIFFERS |")
    assert lines[made[2].label].endswith("| differ (shapes) |") and lines[made[3].label].endswith("| (reference) |")
    assert "DIFFERS" not in lines[made[0].label] and not lines[made[0].label].endswith("| – |")
    assert [note.split("'s outputs differ")[0] for note in run["notes"]] == [f"WARNING: {made[1].label}",
                                                                            f"WARNING: {made[2].label}"]


def test_the_printed_table_is_the_engines_rendering_of_the_json(model, tmp_path, capsys):
    """Guards against a second renderer coming back: what bench prints after its progress lines (the
    table, its footnote, the notes) is what `python -m executorch_openvino.benchmark` renders from the
    JSON bench wrote. Tried once with bench printing its own table again (its former
    `| ... | 1.000x | 1.000-1.000 | ...` lines): the rendered body is then not in what bench printed."""
    pte, _ = model
    printed, _ = _bench(capsys, pte, "--backends", "ours,native", "-n", 4, "--rounds", 2, "--json", tmp_path / "r.json")
    rendered = subprocess.run([sys.executable, "-m", "executorch_openvino.benchmark", str(tmp_path / "r.json")],
                              capture_output=True, text=True, check=True).stdout
    body = rendered[rendered.index("\n| backend | calls |") + 1:].rstrip()
    assert len([line for line in body.splitlines() if line.startswith("| ")]) == 2 + 5 and "## Notes" in body
    assert body + "\n" in printed, (printed, rendered)


@pytest.mark.parametrize("args, message", [
    (["--option", "num_threads"], "is not KEY=VALUE"),
    (["--backends", "xnnpack"], "need --model"),
    (["--requests", "2"], "--requests applies to --mode throughput"),
    (["-n", "5", "-t", "1"], "not allowed with argument"),
    (["--backends", "ours,gpu"], "choose from ours, fast, native, xnnpack, eager"),
    (["--option", "numthreads=2"], "unknown option 'numthreads'"),
])
def test_wrong_arguments_are_usage_errors(model, capsys, args, message):
    pte, _ = model
    assert cli.main(["bench", str(pte), *args]) == 2
    assert message in capsys.readouterr().err


def test_a_program_with_its_weights_in_a_data_file_is_benchmarked_with_data(model, tmp_path, capsys):
    _, spec = model
    pte = tmp_path / "external.pte"
    assert cli.main(["export", spec, "--out", str(pte), "--external-weights", "weights"]) == 0
    capsys.readouterr()
    _, report = _bench(capsys, pte, "--data", tmp_path / "weights.ptd", "-n", 4, "--rounds", 2,
                       "--json", tmp_path / "r.json")
    backends = _by_backend(report)
    # Native OpenVINO read the same weights from the data file: its outputs are ours.
    assert backends["native"]["outputs_agree"] is True and backends["native"]["max_abs_diff"] == 0.0, backends
    assert cli.main(["bench", str(pte), "-n", "2"]) == 1  # without it: refused, saying how to load it
    assert "loaded without named data" in capsys.readouterr().err
