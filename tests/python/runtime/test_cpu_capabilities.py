"""executorch_openvino.runtime.cpu_capabilities: the probe of what OpenVINO's CPU plugin does with int8 on
this CPU agrees with what the CPU's flags say, with the fix's premise (weights within +-64 are
exact), and with oneDNN restricted to a lower instruction set where this CPU allows it. The
emulated AVX2 CPU is checked in test_quantized_emulated_cpu.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from pathlib import Path

import pytest

from executorch_openvino.runtime import cpu_capabilities as cc

PACKAGE_ROOT = Path(__file__).resolve().parents[3] / "python"

EXACT = {"AMX", "AVX-512 VNNI", "AVX-VNNI"}


@pytest.mark.parametrize(
    "flags, expected",
    [
        ({"sse4_2", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "amx_int8"}, "AMX"),
        ({"sse4_2", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni"}, "AVX-512 VNNI"),
        ({"sse4_2", "avx2", "fma", "avx_vnni"}, "AVX-VNNI"),
        ({"sse4_2", "avx2", "fma", "avx512f", "avx512bw", "avx512vl"}, "AVX-512"),
        ({"sse4_2", "avx2", "fma"}, "AVX2"),
        ({"sse4_2", "avx"}, "SSE4.2"),
        ({"sse2"}, "older than SSE4.2"),
    ],
)
def test_flags_name_the_class(flags, expected):
    assert cc.flags_class(frozenset(flags)) == expected


@pytest.mark.parametrize(
    "kernels, saturates, expected",
    [
        (("brgconv_avx512_amx_I8", "brgemm_avx512_I8"), False, "AMX"),
        (("brgconv_avx512_I8", "brgemm_avx512_I8"), False, "AVX-512 VNNI"),
        (("brgconv_avx512_I8", "brgemm_avx512_I8"), True, "AVX-512"),
        (("jit_avx2_I8", "jit_gemm_I8"), True, "AVX2"),
        (("brgconv_avx2_vnni_I8", "jit_gemm_I8"), False, "AVX-VNNI"),
        (("jit_sse42_I8",), True, "SSE4.2"),
        (("ref_any_I8",), True, "unknown"),
    ],
)
def test_kernels_name_the_class(kernels, saturates, expected):
    assert cc.kernel_class(kernels, saturates) == expected


def test_the_probe_agrees_with_the_cpu_flags():
    report = cc.describe()
    assert report.int8_integer, report
    if report.onednn_max_cpu_isa or report.flags_class == "unknown":
        pytest.skip(f"the flags do not say what oneDNN uses here: {report}")
    assert report.instruction_set_class == report.flags_class, report
    assert report.int8_saturates == (report.flags_class not in EXACT), report


def test_weights_within_half_the_int8_range_are_exact_here():
    """The overflow fix's premise, on this CPU: 64 is exact everywhere; the full range is exact
    exactly where the probe says sums do not saturate."""
    assert cc.int8_probe(weight=cc.SAFE_INT8_WEIGHT).ratio == pytest.approx(1.0, abs=1e-6)
    full = cc.int8_probe(weight=127).ratio
    if cc.describe().int8_saturates:
        assert full < 0.6, full
    else:
        assert full == pytest.approx(1.0, abs=1e-6)


def _report_with(**environment) -> dict:
    code = "import json; from executorch_openvino.runtime import cpu_capabilities as c; print(json.dumps(c.describe().as_dict()))"
    path = os.pathsep.join(filter(None, [str(PACKAGE_ROOT), os.environ.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": path, **environment},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("isa, expected_class, saturates", [("AVX512_CORE", "AVX-512", True),
                                                            ("AVX512_CORE_VNNI", "AVX-512 VNNI", False)])
def test_a_restricted_onednn_is_seen_by_the_probe(isa, expected_class, saturates):
    """oneDNN's ONEDNN_MAX_CPU_ISA lowers the kernels OpenVINO's CPU plugin uses (for int8
    convolutions and fully connected layers; its own kernels still follow the CPU): the probe
    reports the lower class, as on such a CPU."""
    if cc.flags_class() not in ("AMX", "AVX-512 VNNI"):
        pytest.skip(f"needs a CPU with AVX-512 VNNI to restrict (this one: {cc.flags_class()})")
    report = _report_with(ONEDNN_MAX_CPU_ISA=isa)
    assert (report["instruction_set_class"], report["int8_saturates"]) == (expected_class, saturates), report
    assert report["onednn_max_cpu_isa"] == isa


def test_doctor_reports_the_cpu_and_warns_where_int8_needs_the_fix(capsys):
    from executorch_openvino import cli

    assert cli.main(["doctor", "--skip", "cmake"]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if "CPU for OpenVINO" in line]
    report = cc.describe()
    assert report.summary() in line
    assert line.startswith("WARN" if report.needs_overflow_fix else "OK"), line
