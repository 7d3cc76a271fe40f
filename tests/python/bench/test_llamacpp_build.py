"""bench/llamacpp's build options: this CPU's instruction sets named one by one, AMX only when asked for (ggml's
AMX matmul crashed on a VM where OpenVINO ran), and a build folder configured otherwise is not reused."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "bench" / "llamacpp"))

import llamacpp  # noqa: E402


def _cpu_flags() -> set:
    line = next(line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags"))
    return set(line.split(":", 1)[1].split())


def test_the_instruction_sets_are_this_cpus_and_amx_only_when_asked(monkeypatch):
    flags = _cpu_flags()
    monkeypatch.delenv(llamacpp.AMX_VARIABLE, raising=False)
    options = llamacpp.isa_options()
    assert options[0] == "-DGGML_NATIVE=OFF"  # -march=native would turn AMX on by itself
    assert ("-DGGML_AVX2=ON" in options) == ("avx2" in flags)
    assert ("-DGGML_AVX512=ON" in options) == ("avx512f" in flags)
    assert not any(option.startswith("-DGGML_AMX") for option in options)
    monkeypatch.setenv(llamacpp.AMX_VARIABLE, "1")
    asked = llamacpp.isa_options()
    assert f"-DGGML_AMX_INT8={'ON' if 'amx_int8' in flags else 'OFF'}" in asked


def test_a_folder_built_with_other_options_is_not_reused(tmp_path, monkeypatch):
    monkeypatch.delenv(llamacpp.AMX_VARIABLE, raising=False)
    tool = tmp_path / "bin" / "llama-bench"
    tool.parent.mkdir()
    tool.write_text("")
    assert not llamacpp._built(tmp_path, [tool], tests=False)  # no record of its options: a build of old
    (tmp_path / llamacpp.STAMP).write_text("\n".join(llamacpp._arguments(False)))
    assert llamacpp._built(tmp_path, [tool], tests=False)
    assert not llamacpp._built(tmp_path, [tool], tests=True)
    monkeypatch.setenv(llamacpp.AMX_VARIABLE, "1")
    assert not llamacpp._built(tmp_path, [tool], tests=False)
