"""Smoke tests of the studies behind the LLM targets, so that they cannot rot: bench/kernels/fc_kernels.py
(one weight form, one round, no llama.cpp), bench/llm/llm_options.py and bench/llm/paged_attention.py (the tiny
Llama, int8, one round).
Nothing here checks a time; each checks what the study's conclusions rest on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def _rows(text: str, first: str):
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0].startswith(first):
            yield cells


def test_fc_kernels_builds_weights_the_plugin_fuses(tmp_path):
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "kernels" / "fc_kernels.py"), "--forms", "i4-g32,u8-channel",
         "--workloads", "1x(4096x14336),smollm2-360m layers", "--rounds", "1", "--calls", "2", "--no-llamacpp", "--results-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    text = next(tmp_path.glob("fc-kernels-*.md")).read_text()
    rows = list(_rows(text, "i4-g32")) + list(_rows(text, "u8-channel"))
    # Each: 2 and 1 threads, no dynamic quantization, and the decoder's layers at 2 threads.
    assert len(rows) == 8, text
    for cells in rows:
        # The weights as NNCF writes them reach one compressed FullyConnected (had the decompression stayed
        # separate nodes, the kernel column would name a plain MatMul and the figures would mean nothing).
        assert cells[7].startswith("FullyConnectedCompressed:"), cells
        assert float(cells[6].split()[0]) > 0, cells  # GB/s
    assert "| i4-g32 | 2 | 1x(4096x14336) | default | 33 |" in text  # 4096 x 14336 four-bit codes, f16 scales
    assert "| u8-channel | 2 | smollm2-360m layers | default | 315 |" in text  # 315 M codes, a scale and zero point a row


def test_llm_options_driver_equals_the_delegate(tmp_path, library_path):
    env = dict(os.environ, EXECUTORCH_OPENVINO_LIBRARY=str(library_path))
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "llm" / "llm_options.py"), "--size", "tiny", "--formats", "int8",
         "--rounds", "1", "--steps", "8", "--work", str(tmp_path / "work"), "--results-dir", str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    text = next(tmp_path.glob("llm-options-*.md")).read_text()
    # The native driver computes what the delegate computes (same IR and properties), so the other settings'
    # figures are the delegate's too.
    assert "ids equal True, logits max abs difference 0." in text, text
    (exact,) = _rows(text, "`exact`")
    assert exact[6] == "0.0e+00" and exact[7] == "100.0%" and exact[8] == "never", exact
    assert len(list(_rows(text, "`"))) == 7


def test_paged_attention_study_computes_what_the_grown_form_does(tmp_path, library_path):
    env = dict(os.environ, EXECUTORCH_OPENVINO_LIBRARY=str(library_path))
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "llm" / "paged_attention.py"), "--size", "tiny", "--formats", "int8",
         "--settings", "f32", "--rounds", "1", "--steps", "8", "--work", str(tmp_path / "work"),
         "--results-dir", str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    text = next(tmp_path.glob("paged-attention-*.md")).read_text()
    (row,) = _rows(text, "`f32`")
    # The rewritten IR computes the grown form's logits (so its times compare like with like), and going back
    # into the prompt is an ordinary call that computes what the first pass did. Paged attention is another
    # kernel than the grown form's: bit-equal where the CPU has AVX-512, within f32 rounding on AVX2 alone
    # (2.2e-07 seen on an AMD EPYC without AVX-512), so the logits are held to 1e-5 and the ids to all.
    def close(cell: str) -> bool:
        difference, equal = cell.split(", ")
        return float(difference) <= 1e-5 and equal == "100.0%"

    assert close(row[6]) and row[7] == "True", row
    assert row[8].startswith("k=7: ") and close(row[8][len("k=7: "):]), row
