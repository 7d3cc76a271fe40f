"""bench/speculative/speculative_bench.py without its models: the controlled drafter proposes what it
should (its rows measure speed at a chosen acceptance), and the report renders every row and the call
costs from a measurement, so that the study cannot rot between runs."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "bench" / "speculative"))

import speculative_bench  # noqa: E402


def test_the_controlled_drafter_is_right_with_its_probability_and_silent_off_the_reference():
    reference = list(range(100, 400))
    exact = speculative_bench._Controlled(reference, 1.0, seed=0)
    assert exact.draft(reference[:50], 5) == reference[50:55]
    assert exact.draft(reference[:49] + [7], 5) == []  # the history left the reference
    wrong = speculative_bench._Controlled(reference, 0.0, seed=0)
    assert all(a != b for a, b in zip(wrong.draft(reference[:50], 5), reference[50:55]))
    half = speculative_bench._Controlled(reference, 0.5, seed=0)
    right = sum(a == b for n in range(10, 210) for a, b in zip(half.draft(reference[:n], 1), reference[n:]))
    assert 70 < right < 130


def test_the_report_shows_every_variant_and_what_a_call_costs(tmp_path):
    row = lambda speeds, acceptance=None: {"decode_tok_s": speeds, "acceptance": [acceptance] * len(speeds),
                                           "calls": [100] * len(speeds), "same_ids": [None] * len(speeds)}
    measured = {"rounds": 2, "machine": "CPU: Some CPU (AVX2), 2 logical cores; load average (1 min) 0.10 before, 1.00 after",
                "variants": {"plain": row([10.0, 12.0]), "lookup": row([13.0, 15.0], 0.8),
                             "plain-f32": row([5.0, 5.0]), "controlled-0.90": row([11.0, 12.0], 0.76)},
                "call_costs": {"step_ms": 10.0, "wide_ms": 12.5, "width_change_ms": 5.0,
                               "cut_ms": {128: 4.0, 500: 12.0}}}
    text = speculative_bench.report(measured, {}, tmp_path)
    cells = {line.split("|")[1].strip(): line.split("|")[3].strip() for line in text.splitlines()
             if line.startswith("| ") and not line.startswith("| Variant") and line.count("|") > 4}
    assert cells["lookup"] == "1.27 [1.25, 1.30]" and cells["controlled-0.90"] == "2.30 [2.20, 2.40]"  # over plain-f32
    assert "a call of 6 tokens 12.5 ms" in text and "| 500 | 12.0 |" in text
    assert "- CPU: Some CPU (AVX2), 2 logical cores" in text  # the vector features the kernels depend on
    assert list(tmp_path.glob("speculative-*.md")) and list(tmp_path.glob("speculative-*.json"))


def test_the_paged_rows_divide_by_paged_and_both_forms_going_back_are_shown(tmp_path):
    row = lambda speeds, acceptance=None: {"decode_tok_s": speeds, "acceptance": [acceptance] * len(speeds),
                                           "calls": [100] * len(speeds), "same_ids": [None] * len(speeds)}
    costs = lambda cut: {"step_ms": 10.0, "wide_ms": 12.5, "width_change_ms": 5.0, "cut_ms": {128: cut, 500: cut}}
    measured = {"rounds": 2, "variants": {"plain": row([10.0, 10.0]), "plain-f32": row([5.0, 5.0]),
                                          "paged": row([20.0, 20.0]), "paged-rejected": row([19.0, 21.0]),
                                          "paged-f32": row([8.0, 8.0]), "paged-controlled-0.90": row([16.0, 16.0])},
                "call_costs": costs(7.0), "call_costs_paged": costs(0.5)}
    text = speculative_bench.report(measured, {}, tmp_path, tag="paged")
    cells = {line.split("|")[1].strip(): line.split("|")[3].strip() for line in text.splitlines()
             if line.startswith("| ") and not line.startswith("| Variant") and line.count("|") > 4}
    assert cells["paged-rejected"] == "1.00 [0.95, 1.05]" and cells["paged-controlled-0.90"] == "2.00 [2.00, 2.00]"
    assert "| 500 | 7.0 | 0.5 |" in text and "2.00× grown plain's speed" in text
    assert list(tmp_path.glob("speculative-paged-*.md"))
