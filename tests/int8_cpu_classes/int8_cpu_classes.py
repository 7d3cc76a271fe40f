"""int8 accuracy by CPU class, and what the overflow fix costs: the quantized cases of the tests
(tests/python/quantized_cases.py: a small CNN quantized statically by each recipe, and a 4 x 512
MLP with int8 weights) run on every CPU class this machine can show:

    this CPU                            as it is
    oneDNN limited to AVX-512 VNNI / AVX-512 (ONEDNN_MAX_CPU_ISA; only on a CPU with AVX-512 VNNI;
                                        lowers oneDNN's int8 kernels, not the CPU plugin's own)
    AVX2 without VNNI                   emulated by QEMU (tests/python/emulated_cpu.py)

For each: ours vs PyTorch's quantized model and vs the float model, ours == native OpenVINO, and
the fixed recipes' error against float over what the same quantizer's full-range model loses in
PyTorch (the issue's 1.5x target). Then, on this CPU, the latency of each recipe's program
(interleaved rounds), so the fix's speed cost shows. `make test-int8-cpu-classes` runs it (about 8
minutes); report: bench/results/int8-cpu-classes-<date>.md and .json.

    python tests/int8_cpu_classes/int8_cpu_classes.py [--skip-emulated] [--rounds N] [--results-dir DIR]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "python"), str(REPO / "tests" / "python")]  # the package, the tests' cases
import executorch_openvino  # noqa: E402,F401
from executorch_openvino import benchmark  # noqa: E402
from executorch_openvino.runtime import cpu_capabilities  # noqa: E402
import emulated_cpu  # noqa: E402
import quantized_cases as cases  # noqa: E402
import quantized_runs  # noqa: E402

LIBRARY = Path(os.environ.get("EXECUTORCH_OPENVINO_LIBRARY")
               or REPO / "build" / "site" / "executorch_openvino" / "lib" / "libexecutorch_openvino.so")
REPORT = {
    "description": [
        "Errors are max |y - reference| / max |reference| per input, over 20 inputs (median / worst). \"PyTorch's "
        "own\" is the quantized model's error against the float model in PyTorch; \"fixed vs 8-bit\" is ours against "
        "float over what the same quantizer's full-range model loses in PyTorch (target: within 1.5×)."],
    "tables": [
        {"title": "Accuracy by CPU class", "where": {"kind": "accuracy"}, "columns": [
            {"title": "where", "field": "group"}, {"title": "class (measured)", "field": "class"},
            {"title": "recipe", "field": "variant"},
            {"title": "vs quantized, median", "field": "vs_quantized", "stat": "median", "format": ".1e"},
            {"title": "worst", "field": "vs_quantized", "stat": "max", "format": ".1e"},
            {"title": "vs float, median", "field": "vs_float", "stat": "median", "format": ".1e"},
            {"title": "PyTorch's own vs float", "field": "own_vs_float", "format": ".1e"},
            {"title": "fixed vs 8-bit", "field": "fixed_vs_full_range", "format": ".2f", "unit": "×"},
            {"title": "== native OpenVINO", "field": "equal_to_native"}]},
        {"title": "Speed on this CPU: the fix against full-range weights", "where": {"kind": "latency"},
         "text": ["p50 per call through executorch.runtime in interleaved rounds; the ratio is the fixed recipe over "
                  "its full-range twin within each round, median [range]."],
         "columns": [{"title": "recipe", "field": "variant"}, {"title": "overflow fix", "field": "overflow_safe"},
                     {"title": "p50 µs", "field": "latency_ms", "stat": "median", "scale": 1000, "format": ".1f"},
                     {"title": "fixed / full range", "field": "latency_ms", "vs_field": "twin", "format": ".3f",
                      "unit": "×"}]}],
}


def _listed():
    listed = [(name, cases.static_case(name), cases.INPUTS_PER_CHECK) for name in cases.STATIC_RECIPES]
    for recipe in cases.WEIGHT_RECIPES:
        for weights_only in (False, True):
            case = cases.weights_case(recipe, weights_only)
            listed.append((case.name, case, cases.INPUTS_PER_CHECK))
    return listed


def _worlds(skip_emulated: bool):
    """(label, command prefix, environment) for every class reachable here."""
    worlds = [("this CPU", (), {})]
    if cpu_capabilities.flags_class() in ("AMX", "AVX-512 VNNI"):
        worlds += [("ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI", (), {"ONEDNN_MAX_CPU_ISA": "AVX512_CORE_VNNI"}),
                   ("ONEDNN_MAX_CPU_ISA=AVX512_CORE", (), {"ONEDNN_MAX_CPU_ISA": "AVX512_CORE"})]
    if not skip_emulated:
        worlds.append((f"QEMU -cpu {emulated_cpu.AVX2_CPU}", tuple(emulated_cpu.command()), {}))
    return worlds


def _median(values) -> float:
    return benchmark.median(values) if values else math.nan


def _accuracy_rows(run: dict, label: str, report, outputs) -> None:
    for name, case, _ in _listed():
        ours, native = outputs[name]
        vs_float = cases.relative_errors(ours, case.float_outputs)
        spec = cases.STATIC_RECIPES.get(name)
        fixed_vs_full_range = None
        if spec is not None and spec.full_range_twin:
            twin = cases.static_case(spec.full_range_twin)
            fixed_vs_full_range = _median(vs_float) / _median(cases.relative_errors(twin.quantized_outputs,
                                                                                    twin.float_outputs))
        benchmark.add_row(run, label, name, kind="accuracy", **{"class": report.instruction_set_class},
                          vs_quantized=[float(e) for e in cases.relative_errors(ours, case.quantized_outputs)],
                          vs_float=[float(e) for e in vs_float],
                          own_vs_float=float(_median(cases.relative_errors(case.quantized_outputs, case.float_outputs))),
                          fixed_vs_full_range=None if fixed_vs_full_range is None else float(fixed_vs_full_range),
                          equal_to_native="yes" if all((a == b).all() for a, b in zip(ours, native)) else "**no**")


def _latency_rows(run: dict, rounds: int, calls: int) -> None:
    """Each static recipe's program on this CPU, in interleaved rounds (the fix's speed cost)."""
    from executorch.runtime import Runtime

    x = cases.static_case("nncf").inputs[0]
    runners = {name: benchmark.SequentialRunner(
        lambda m=Runtime.get().load_program(cases.static_case(name).pte).load_method("forward"): m.execute([x]))
        for name in cases.STATIC_RECIPES}
    timed = benchmark.interleaved(runners, rounds, calls=calls * rounds, warmup=1)
    for name, spec in cases.STATIC_RECIPES.items():
        benchmark.add_row(run, "this CPU", name, kind="latency", overflow_safe="yes" if spec.overflow_safe else "no",
                          twin=spec.full_range_twin, latency_ms=[s.latencies_ms for s in timed.slices[name]])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-emulated", action="store_true", help="leave out the QEMU-emulated AVX2 CPU")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved latency rounds on this CPU")
    parser.add_argument("--results-dir", type=Path, default=REPO / "bench" / "results", help="where the report goes")
    args = parser.parse_args()

    run = benchmark.new_run("int8-cpu-classes", "int8 accuracy by CPU class", checkout=REPO,
                            versions=["torch", "executorch", "openvino", "nncf"], report=REPORT,
                            settings={"this CPU": cpu_capabilities.describe().summary()})
    for label, prefix, environment in _worlds(args.skip_emulated):
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="int8_classes_") as folder:
            quantized_runs.write_cases(Path(folder), _listed())
            quantized_runs.run_cases_elsewhere(Path(folder), LIBRARY, prefix, environment)
            report, outputs, _ = quantized_runs.read_results(Path(folder))
        _accuracy_rows(run, label, report, outputs)
        print(f"{label}: {report.summary()} ({time.monotonic() - started:.0f} s)", flush=True)
    _latency_rows(run, args.rounds, 200)
    markdown = benchmark.save(benchmark.finish(run), args.results_dir)
    print(markdown.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
