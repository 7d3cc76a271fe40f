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
(interleaved rounds), so the fix's speed cost shows. Report: bench/results/int8-cpu-classes-<date>.md

    python bench/int8/int8_cpu_classes.py [--skip-emulated] [--rounds N] [--results-dir DIR]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common
from common import machine, paths, reports  # noqa: E402
from common.rounds import time_calls  # noqa: E402
from common.stats import median, ratios, spread  # noqa: E402

paths.on_path(paths.PYTHON, paths.TESTS)
import executorch_openvino  # noqa: E402,F401
from executorch_openvino.runtime import cpu_capabilities  # noqa: E402
import emulated_cpu  # noqa: E402
import quantized_cases as cases  # noqa: E402
import quantized_runs  # noqa: E402

LIBRARY = paths.built_library()


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


def _median(values):
    return median(values, empty=float("nan"))


def _accuracy_rows(label: str, report, outputs) -> list:
    rows = []
    for name, case, _ in _listed():
        ours, native = outputs[name]
        vs_quantized = cases.relative_errors(ours, case.quantized_outputs)
        vs_float = cases.relative_errors(ours, case.float_outputs)
        own = _median(cases.relative_errors(case.quantized_outputs, case.float_outputs))
        spec = cases.STATIC_RECIPES.get(name)
        twin_cell = "–"
        if spec is not None and spec.full_range_twin:
            twin = cases.static_case(spec.full_range_twin)
            full_range_own = _median(cases.relative_errors(twin.quantized_outputs, twin.float_outputs))
            twin_cell = f"{_median(vs_float) / full_range_own:.2f}×"
        equal = all((a == b).all() for a, b in zip(ours, native))
        rows.append(f"| {label} | {report.instruction_set_class} | {name} | {_median(vs_quantized):.1e} | "
                    f"{max(vs_quantized):.1e} | {_median(vs_float):.1e} | {own:.1e} | {twin_cell} | "
                    f"{'yes' if equal else '**no**'} |")
    return rows


def _latency_rows(rounds: int, calls: int) -> list:
    """p50 per call of each static recipe's program on this CPU, in interleaved rounds."""
    from executorch.runtime import Runtime

    methods = {name: Runtime.get().load_program(cases.static_case(name).pte).load_method("forward")
               for name in cases.STATIC_RECIPES}
    x = cases.static_case("nncf").inputs[0]
    per_round = {name: [] for name in methods}
    for _ in range(rounds):
        for name, method in methods.items():
            samples = time_calls(lambda: method.execute([x]), calls, warmup=1)  # ms
            per_round[name].append(statistics.median(samples) * 1e3)
    rows = []
    for name, spec in cases.STATIC_RECIPES.items():
        p50 = statistics.median(per_round[name])
        ratio = "–"
        if spec.full_range_twin:
            ratio = spread(ratios(per_round[name], per_round[spec.full_range_twin]), ".3f", unit="×")
        rows.append(reports.row(name, "yes" if spec.overflow_safe else "no", f"{p50:.1f} µs", ratio))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-emulated", action="store_true", help="leave out the QEMU-emulated AVX2 CPU")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved latency rounds on this CPU")
    reports.add_results_dir(parser)
    args = parser.parse_args()

    load_before = machine.load_average()
    lines = ["Errors are max |y - reference| / max |reference| per input, over 20 inputs (median / worst). "
             "'PyTorch's own' is the quantized model's error against the float model in PyTorch; "
             "'fixed vs 8-bit' is ours against float over what the same quantizer's full-range model loses "
             "in PyTorch (target: within 1.5×).", "",
             *reports.table_head(["where", "class (measured)", "recipe", "vs quantized, median", "worst",
                                  "vs float, median", "PyTorch's own vs float", "fixed vs 8-bit", "== native OpenVINO"],
                                 "lllrrrrrc")]
    for label, prefix, environment in _worlds(args.skip_emulated):
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="int8_classes_") as folder:
            quantized_runs.write_cases(Path(folder), _listed())
            quantized_runs.run_cases_elsewhere(Path(folder), LIBRARY, prefix, environment)
            report, outputs, _ = quantized_runs.read_results(Path(folder))
        lines += _accuracy_rows(label, report, outputs)
        print(f"{label}: {report.summary()} ({time.monotonic() - started:.0f} s)", flush=True)
    lines += ["", "## Speed on this CPU: the fix against full-range weights", "",
              f"p50 per call through executorch.runtime, {args.rounds} interleaved rounds of 200 calls; the ratio "
              "is the fixed recipe over its full-range twin within each round, median [range].", "",
              *reports.table_head(["recipe", "overflow fix", "p50", "fixed / full range"], "lcrr")]
    lines += _latency_rows(args.rounds, 200)
    head = [f"# int8 accuracy by CPU class — {reports.stamp()}", "",
            f"{machine.machine(load_before)}; {platform.system()} {platform.release()}. "
            f"This CPU: {cpu_capabilities.describe().summary()}.", ""]
    text = "\n".join(head + lines) + "\n"
    reports.print_and_save(text, reports.results_dir(args.results_dir), f"int8-cpu-classes-{reports.stamp()}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
