"""The one renderer: a run's rows laid out by its report's tables and held to its targets, all data."""

from __future__ import annotations

import csv
import io
import json

import pytest

from executorch_openvino import benchmark
from executorch_openvino.benchmark import report as _report

ROUNDS = {"native": [[1.0, 1.2], [2.0, 2.0], [1.0, 1.0]], "ours": [[1.1, 1.1], [2.2, 2.2], [0.9, 0.9]]}


def _run(tmp_path=None) -> dict:
    run = benchmark.new_run("demo", "Demo", versions=["numpy"])
    for variant, samples in ROUNDS.items():
        benchmark.add_row(run, "m", variant, latency_ms=samples, allocs=3 if variant == "ours" else None,
                          check="ok")
    run["report"] = {
        "description": ["Two variants."],
        "tables": [{"title": "Latency", "each": "group", "columns": [
            {"title": "variant", "field": "variant"},
            {"title": "p50 ms", "field": "latency_ms", "stat": "median", "format": ".2f"},
            {"title": "p90 ms", "field": "latency_ms", "stat": "p90", "format": ".2f"},
            {"title": "/ native, per round", "field": "latency_ms", "vs": "native", "format": ".2f", "unit": "×"},
            {"title": "/ native", "field": "latency_ms", "vs": "native", "whole": True, "format": ".3f", "unit": "×"},
            {"title": "allocations", "field": "allocs", "format": ".0f"},
            {"title": "check", "field": "check"}]},
            {"title": "By model", "per": "group", "columns": [
                {"title": "model", "field": "group"},
                {"title": "ours − native µs", "field": "latency_ms", "of": "ours", "vs": "native", "op": "difference",
                 "whole": True, "scale": 1000, "format": "+.0f"}]}],
        "targets": [{"title": "ours ≤ 1.02× native", "where": {"variant": "ours"}, "field": "latency_ms",
                     "vs": "native", "at_most": 1.02, "format": ".2f", "unit": "×"}],
    }
    return benchmark.finish(run)


def test_a_run_renders_its_tables_from_the_rows_per_round_and_whole():
    """Guards against ratios of pooled samples passed off as per-round ones (the per-round median here
    is 1.0, the whole run's 1.1 / 1.6), a percentile other than the engine's, and a missing figure
    printed as a number."""
    text = benchmark.render(_run())
    lines = text.splitlines()
    assert lines[0].startswith("# Demo, ") and any(line.startswith("- CPU: ") for line in lines)
    ours = next(line for line in lines if line.startswith("| ours |"))
    native = next(line for line in lines if line.startswith("| native |"))
    # p50 of all ours' samples 1.1 (0.9, 0.9, 1.1, 1.1, 2.2, 2.2), p90 linear: 2.2; per round 1.1/1.1, 2.2/2.0, 0.9/1.0.
    assert ours == "| ours | 1.10 | 2.20 | 1.00 [0.90–1.10]× | 1.000× | 3 | ok |", text
    assert "| – | ok |" in native  # no allocation figure: a dash, not 0
    assert "| m | +0 |" in text
    assert "| ours ≤ 1.02× native | m | ours | 1.00 [0.90–1.10]× | yes |" in text


def test_a_saved_run_is_json_and_renders_again_the_same(tmp_path):
    run = _run()
    markdown = benchmark.save(run, tmp_path)
    assert markdown.name == f"demo-{run['date'][:10]}.md"
    again = benchmark.load(markdown.with_suffix(".json"))
    assert benchmark.render(again) == markdown.read_text()
    (tmp_path / "other.json").write_text(json.dumps({"rows": []}))
    with pytest.raises(ValueError):
        benchmark.load(tmp_path / "other.json")


def test_a_target_not_met_says_so_and_a_missing_reference_is_a_dash():
    run = _run()
    run["report"]["targets"][0]["at_most"] = 0.95
    assert "| ours ≤ 1.02× native | m | ours | 1.00 [0.90–1.10]× | no |" in benchmark.render(run)
    column = {"field": "latency_ms", "vs": "absent", "format": ".2f"}
    assert _report.cell(_report.figure(run["rows"], run["rows"][1], column), column) == "–"


def test_marks_parts_and_the_csv_are_data_too():
    """What `executorch-openvino bench` lays out with the engine: a cell a row's fields mark (the first
    mark the row matches: the reference row, which also differs here, reads "(reference)"), one part of
    a per-round range, a run's CSV, and a whole-run ratio against a variant without samples (a dash).
    Guards against the last matching mark winning (tried once: native's cell read "0.0e+00 DIFFERS"), a
    CSV part other than the one asked for, and that ratio raising instead of printing "–" (tried once:
    "ValueError: percentile of no values")."""
    run = _run()
    for row, (diff, agree) in zip(run["rows"], [(0.0, False), (0.5, False)]):
        row.update(diff=diff, agree=agree)
    benchmark.add_row(run, "m", "idle", latency_ms=[[], [], []])
    marks = [{"where": {"variant": "native"}, "text": "(reference)"}, {"where": {"agree": False}, "text": "{} DIFFERS"}]
    run["report"]["tables"] = [{"columns": [
        {"title": "variant", "field": "variant"},
        {"title": "diff", "field": "diff", "format": ".1e", "marks": marks},
        {"title": "/ idle", "field": "latency_ms", "vs": "idle", "whole": True, "format": ".2f"}]}]
    text = benchmark.render(run)
    assert "| native | (reference) | – |" in text and "| ours | 5.0e-01 DIFFERS | – |" in text, text
    assert "| idle | – | – |" in text
    ratio = {"field": "latency_ms", "vs": "native"}
    run["report"]["csv"] = {"where": {"variant": "ours"}, "columns": [
        {"title": "variant", "field": "variant"}, {"title": "lowest", **ratio, "part": "lowest"},
        {"title": "highest", **ratio, "part": "highest"}, {"title": "allocations", "field": "allocs"},
        {"title": "missing", "field": "absent"}]}
    lines = list(csv.reader(io.StringIO(benchmark.csv_text(run))))
    assert lines[0] == ["variant", "lowest", "highest", "allocations", "missing"] and len(lines) == 2
    assert lines[1][0] == "ours" and lines[1][3:] == ["3", ""]
    assert [float(x) for x in lines[1][1:3]] == pytest.approx([0.9, 1.1])
