"""The model zoo (`make bench-zoo`): every model of zoo_models.py through every way of running it, in
one interleaved run per model, and our delegate's own per-call cost over native OpenVINO.

From C++ (bench_zoo_cpp, one process per model): native OpenVINO through the library's OpenVINO layer
(the IR our delegate got, its device and properties, one infer request, tensors bound once: the limit),
that with new tensors bound every call (native-rebind), our delegate through BackendInterface alone
(delegate: what it adds to native's call), ours inside the ExecuTorch program (Method::execute, the
inputs set once; ours-set-inputs: set every call), ExecuTorch + XNNPACK fp32, ExecuTorch's own OpenVINO
delegate, ours lowered for bf16 (the precision that delegate runs at) and that delegate's program on
ours (ours-upstream, a second process). From Python, the package's engine's backends: native OpenVINO's
Python API, ours, XNNPACK, ExecuTorch's kernels and its own OpenVINO delegate through executorch.runtime.
Every variant of a model takes turns in the same interleaved rounds, each with the same time budget;
then heap allocations per call (C++; malloc is counted in bench_zoo_cpp) and loads, each in a fresh
process: cold (an empty model cache, which it fills) and warm, native's import of its exported model.

  .venv/bin/python bench/zoo/zoo.py [--models tiny,mlp] [--quick] [--rounds R] [--budget S] [--results-dir DIR]

EXECUTORCH_OPENVINO_BUILD names the build folder (default build/) holding bench/bench_zoo_cpp;
EXECUTORCH_OPENVINO_LIBRARY (or that build's) the library both sides load. Report: zoo-<date>.md,
.json, .png in bench/results/ (--quick: bench/results/quick/).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/
from common import paths  # noqa: E402
from zoo_cpp_side import ChildFailed, CppServer, cpp_export, cpp_load  # noqa: E402

from executorch_openvino import benchmark  # noqa: E402
from executorch_openvino.benchmark.report import ratio  # noqa: E402

TOOL = paths.bench_binary("bench_zoo_cpp")
QUICK_MODELS = ["tiny", "mlp"]
# C++ variant -> bench_zoo_cpp's name; Python variant -> the program it runs (None: native OpenVINO).
CPP = {"native-cpp": "native", "native-cpp-rebind": "native-rebind", "delegate-cpp": "delegate", "ours-cpp": "ours",
       "ours-cpp-set-inputs": "ours-set-inputs", "xnnpack-cpp": "xnnpack", "et-openvino-cpp": "et-openvino",
       "ours-bf16-cpp": "ours-bf16", "ours-upstream-cpp": "ours-upstream"}
PY = {"native-py": None, "ours-py": "ours.pte", "xnnpack-py": "xnnpack.pte", "et-kernels-py": "kernels.pte",
      "et-openvino-py": "et_openvino.pte"}
NEEDS = {"native-cpp": "native", "native-cpp-rebind": "native", "delegate-cpp": "delegate", "native-py": "native",
         "xnnpack-cpp": "xnnpack", "xnnpack-py": "xnnpack", "et-kernels-py": "kernels", "et-openvino-cpp": "et-openvino",
         "et-openvino-py": "et-openvino", "ours-upstream-cpp": "et-openvino", "ours-bf16-cpp": "ours-bf16"}


def _vs(variant: str, title: str, reference: str, **more) -> dict:
    """p50 of `variant` over `reference`'s, the whole run's."""
    return ratio(title, "latency_ms", reference, of=variant, whole=True, **{"format": ".3f", **more})


REPORT = {
    "description": [
        "Latency: every variant of a model in the same interleaved rounds (the order rotated and reversed every "
        "other round, a settling call per turn), each timed for the same budget; per round the median (p50) and "
        "p90 of its calls. Ratios are of p50s: of the whole run (the median of the rounds' p50s), or per round, "
        "median [lowest–highest]. C++ variants are against native-cpp, Python ones against native-py (which, as "
        "executorch.runtime does for ours, returns its outputs as new arrays). Loads: each in a fresh process "
        "with OpenVINO opened before the clock; cold with an empty model cache, which it fills, warm with it "
        "filled; peak RSS: VmHWM right after the load."],
    "tables": [
        {"title": "Ours from C++ against native OpenVINO from C++", "per": "group", "columns": [
            {"title": "model", "field": "group"},
            {"title": "native p50 ms", "field": "latency_ms", "of": "native-cpp", "stat": "median", "format": ".4g"},
            _vs("ours-cpp", "ours / native p50", "native-cpp"),
            {"title": "per round", "field": "latency_ms", "of": "ours-cpp", "vs": "native-cpp", "format": ".3f"},
            {"title": "delegate alone − native µs", "field": "latency_ms", "of": "delegate-cpp", "vs": "native-cpp",
             "op": "difference", "whole": True, "scale": 1000, "format": "+.2f"},
            _vs("delegate-cpp", "delegate alone / native", "native-cpp", format=".4f"),
            {"title": "allocations per call, native", "field": "allocs_per_call", "of": "native-cpp", "format": ".1f"},
            {"title": "ours", "field": "allocs_per_call", "of": "ours-cpp", "format": ".1f"},
            {"title": "warm load / native import", "field": "warm_over_import", "of": "ours-cpp", "format": ".2f",
             "unit": "×"},
            {"title": "peak RSS at load, ours / native", "field": "peak_load_mb", "of": "ours-cpp", "vs": "native-cpp",
             "format": ".2f", "unit": "×"}]},
        {"title": "Every way of running it from C++, p50 over native OpenVINO's from C++", "per": "group", "columns": [
            {"title": "model", "field": "group"}, _vs("ours-cpp", "ours", "native-cpp"),
            _vs("xnnpack-cpp", "XNNPACK fp32", "native-cpp"),
            _vs("et-openvino-cpp", "ExecuTorch's OpenVINO delegate", "native-cpp"),
            _vs("ours-bf16-cpp", "ours in bf16", "native-cpp"), _vs("ours-upstream-cpp", "its program on ours", "native-cpp"),
            _vs("ours-cpp-set-inputs", "ours, inputs set per call", "native-cpp"),
            _vs("native-cpp-rebind", "native, tensors bound per call", "native-cpp")]},
        {"title": "From Python, p50 over native OpenVINO's Python API", "per": "group", "columns": [
            {"title": "model", "field": "group"},
            {"title": "native p50 ms", "field": "latency_ms", "of": "native-py", "stat": "median", "format": ".4g"},
            _vs("ours-py", "ours", "native-py"), _vs("xnnpack-py", "XNNPACK fp32", "native-py"),
            _vs("et-kernels-py", "ExecuTorch's kernels", "native-py"),
            _vs("et-openvino-py", "ExecuTorch's OpenVINO delegate", "native-py")]},
        {"title": "Every variant", "each": "group", "columns": [
            {"title": "variant", "field": "variant"}, {"title": "calls", "field": "calls", "format": "d"},
            {"title": "p50 ms", "field": "latency_ms", "stat": "median", "format": ".4g"},
            {"title": "p90 ms", "field": "p90_ms", "stat": "median", "format": ".4g"},
            {"title": "p50 / its native's, per round", "field": "latency_ms", "vs_field": "native", "format": ".3f"},
            {"title": "allocations per call (all threads)", "field": "allocations"},
            {"title": "load cold / warm ms", "field": "loads"},
            {"title": "peak RSS at load MB", "field": "peak_load_mb", "format": ".0f"},
            {"title": "outputs", "field": "check"}]}],
    "targets": [
        _vs("ours-cpp", "p50 ≤ 1.02× native's", "native-cpp", where={"variant": "ours-cpp"}, at_most=1.02),
        {"title": "≤ 5 µs added per call", "where": {"variant": "delegate-cpp"}, "field": "latency_ms",
         "vs": "native-cpp", "op": "difference", "whole": True, "scale": 1000, "format": "+.2f", "unit": " µs",
         "at_most": 5.0},
        {"title": "warm load ≤ 1.1× native import", "where": {"variant": "ours-cpp"}, "field": "warm_over_import",
         "format": ".2f", "unit": "×", "at_most": 1.1},
        {"title": "peak RSS at load ≤ 1.2× native's", "where": {"variant": "ours-cpp"}, "field": "peak_load_mb",
         "vs": "native-cpp", "format": ".2f", "unit": "×", "at_most": 1.2},
        _vs("ours-cpp", "faster than XNNPACK fp32", "xnnpack-cpp", where={"variant": "ours-cpp"}, at_most=1.0),
        _vs("ours-bf16-cpp", "never slower than ExecuTorch's OpenVINO delegate (same precision)", "et-openvino-cpp",
            where={"variant": "ours-bf16-cpp"}, at_most=1.0)],
    "plot": {"title": "p50 relative to native OpenVINO from C++", "field": "latency_ms", "vs": "native-cpp",
             "whole": True, "series": ["ours-cpp", "xnnpack-cpp", "et-openvino-cpp", "ours-bf16-cpp"]},
}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", help=f"comma-separated (default: all; --quick: {','.join(QUICK_MODELS)})")
    parser.add_argument("--rounds", type=int, help="interleaved rounds per model (default 6; --quick 3)")
    parser.add_argument("--budget", type=float, help="seconds of timed calls per variant and model, over all "
                        "rounds (default 3; --quick 0.3); a variant whose call takes longer than a round's share "
                        "is timed once, outside the rounds")
    parser.add_argument("--load-repeats", type=int, help="loads of each kind per model (default 3; --quick 1)")
    parser.add_argument("--quick", action="store_true", help="two models, a short budget: everything end to end")
    parser.add_argument("--results-dir", type=Path)
    args = parser.parse_args(argv)
    args.rounds = args.rounds or (3 if args.quick else 6)
    args.budget = args.budget or (0.3 if args.quick else 3.0)
    args.load_repeats = args.load_repeats or (1 if args.quick else 3)
    args.results_dir = args.results_dir or (paths.QUICK_RESULTS if args.quick else paths.RESULTS)
    return args


def _round_figures(row: dict, slices) -> None:
    """Each round's p50 and p90 (the engine's percentile) and the number of calls."""
    row["latency_ms"] = [benchmark.median(s.latencies_ms) for s in slices if s.latencies_ms]
    row["p90_ms"] = [benchmark.percentile(s.latencies_ms, 0.9) for s in slices if s.latencies_ms]
    row["calls"] = sum(s.calls for s in slices)


def measure_model(name: str, folder: Path, caches: Path, args, rows: Dict[str, dict], notes: List[str]) -> None:
    """Every available variant of one prepared model: outputs, interleaved rounds, allocations, loads."""
    import numpy as np
    import torch

    from executorch_openvino.benchmark import backends

    eager = [np.load(folder / f"output{i}.npy") for i in range(len(list(folder.glob("output*.npy"))))]
    inputs = [torch.from_numpy(np.load(folder / f"input{i}.npy")) for i in range(len(list(folder.glob("input*.npy"))))]
    runners, servers = {}, []
    try:
        for group in ([v for v in CPP if v != "ours-upstream-cpp"], ["ours-upstream-cpp"]):
            wanted = [v for v in group if v in rows]
            if not wanted:
                continue
            server = CppServer(TOOL, folder, [CPP[v] for v in wanted])
            servers.append(server)
            for variant in wanted:
                if CPP[variant] in server.failed or (variant == "native-cpp-rebind" and "native" in server.failed):
                    rows[variant]["note"] = f"does not load: {server.failed.get(CPP[variant], server.failed.get('native'))}"[:300]
                    continue
                runners[variant] = server.runner(CPP[variant])
            for cpp_name, check in server.ask("check").items():
                variant = next(v for v, n in CPP.items() if n == cpp_name)
                if not check["ran"]:
                    rows[variant]["note"] = f"fails: {check.get('failure', '?')}"[:300]
                    runners.pop(variant, None)
                    continue
                rows[variant]["check"] = _check_text(check["vs_eager"], check["vs_native"]) + (
                    "; inputs set every call (the memory plan reuses their buffers)"
                    if check["sets_inputs_every_call"] and variant != "ours-cpp-set-inputs" else "")
        if servers and "et-openvino-cpp" in runners:
            notes.append(f"{name}: from C++, ExecuTorch's programs ran on {servers[0].openvino_backend_holder}")

        made = {}
        made["ours-py"] = backends.ours(folder / "ours.pte", "forward", inputs, 1)
        if "native-py" in rows:
            made["native-py"] = backends.native((folder / "ours.pte").read_bytes(), "forward", inputs,
                                                made["ours-py"].properties, 1, False)
        for variant, pte in PY.items():
            if pte and variant != "ours-py" and variant in rows:  # ExecuTorch's own delegate runs from bytes only
                made[variant] = backends.program(variant, (folder / pte).read_bytes(), "forward", inputs)
        native_outputs = made["native-py"].outputs() if "native-py" in made and made["native-py"].runner else None
        for variant, backend in made.items():
            if backend.runner is None:
                rows[variant]["note"] = backend.note
                continue
            try:
                got = backend.outputs()
            except Exception as error:  # reported; the other variants are still measured
                rows[variant]["note"] = f"does not run: {type(error).__name__}: {error}"[:300]
                continue
            rows[variant]["check"] = _check_text(_max_diff(got, eager), _max_diff(got, native_outputs))
            runners[variant] = backend.runner

        # A variant whose call takes more than a round's share of the budget is timed once, alone.
        share = args.budget / args.rounds
        with backends.one_torch_thread():
            for variant in list(runners):
                first = runners[variant].run(1, None)
                if first.latencies_ms[0] / 1e3 > share:
                    _round_figures(rows[variant], [first])
                    rows[variant]["note"] = "one call, timed alone: a call takes longer than a round's budget"
                    del runners[variant]
            timed = benchmark.interleaved(runners, args.rounds, seconds=args.budget, warmup=1)
        for variant, slices in timed.slices.items():
            _round_figures(rows[variant], slices)

        for variant in [v for v in CPP if v in runners and v != "ours-upstream-cpp"]:
            calls = max(1, min(200, int(1.0 / max(statistics.median(rows[variant]["latency_ms"]) / 1e3, 1e-7))))
            counted = servers[0].ask(f"allocs {CPP[variant]} {calls}")
            rows[variant]["allocs_per_call"] = counted["this_thread"] / counted["calls"]
            rows[variant]["allocations"] = (f"{counted['this_thread'] / counted['calls']:.1f} "
                                            f"({counted['all_threads'] / counted['calls']:.1f})")
    finally:
        for server in servers:
            server.close()
    measure_loads(folder, caches, args.load_repeats, rows)


def measure_loads(folder: Path, caches: Path, repeats: int, rows: Dict[str, dict]) -> None:
    """Cold and warm loads of native and ours (C++), native's import of its exported model, one load of
    each other C++ variant; `repeats` times, native and ours alternating; medians of the times, memory
    of the first."""
    figures: Dict[str, List[dict]] = {}
    sides = [s for s in ("native", "ours") if f"{s}-cpp" in rows and "note" not in rows[f"{s}-cpp"]]
    if "native" in sides:
        cpp_export(TOOL, folder, folder / "native.exported")
    for r in range(repeats):
        for side in (sides if r % 2 == 0 else sides[::-1]):
            cache = caches / f"{folder.name}-{side}-{r}"
            shutil.rmtree(cache, ignore_errors=True)
            cache.mkdir(parents=True)
            figures.setdefault(f"{side}-cpp", []).append(cpp_load(TOOL, folder, side, cache))
            figures.setdefault(f"{side}-cpp-warm", []).append(cpp_load(TOOL, folder, side, cache))
        if "native" in sides:
            figures.setdefault("native-import", []).append(cpp_load(TOOL, folder, "native-import"))
        for variant in ("xnnpack-cpp", "et-openvino-cpp", "ours-upstream-cpp"):
            if variant in rows and "note" not in rows[variant]:
                try:
                    figures.setdefault(variant, []).append(cpp_load(TOOL, folder, CPP[variant]))
                except ChildFailed as failure:  # recorded; the other variants are still measured
                    rows[variant]["note"] = f"load {failure}"[:300]
    for variant, loads in figures.items():
        if variant in rows:
            row, warm = rows[variant], figures.get(f"{variant}-warm")
            row["load_cold_ms"] = statistics.median(f["load_ms"] for f in loads)
            row["peak_load_mb"] = loads[0]["peak_load_kb"] / 1024
            row["loads"] = f"{row['load_cold_ms']:.1f}" + (f" / {statistics.median(f['load_ms'] for f in warm):.1f}"
                                                           if warm else "")
            if warm:
                row["load_warm_ms"] = statistics.median(f["load_ms"] for f in warm)
    if "native-import" in figures and "load_warm_ms" in rows.get("ours-cpp", {}):
        rows["ours-cpp"]["warm_over_import"] = rows["ours-cpp"]["load_warm_ms"] / statistics.median(
            f["load_ms"] for f in figures["native-import"])


def _max_diff(outputs: Dict[int, object], reference) -> float:
    import numpy as np

    if reference is None:
        return None
    reference = dict(enumerate(reference)) if isinstance(reference, list) else reference
    if set(outputs) != set(reference) or any(np.shape(outputs[i]) != np.shape(reference[i]) for i in outputs):
        return float("inf")
    return max((float(np.max(np.abs(np.asarray(outputs[i], np.float64) - np.asarray(reference[i], np.float64)),
                             initial=0.0)) for i in outputs), default=0.0)


def _check_text(vs_eager, vs_native) -> str:
    def text(value):
        return "–" if value is None else f"{value:.1e}"

    return f"max abs(out − eager) {text(vs_eager)}, max abs(out − native) {text(vs_native)}"


def main(argv=None) -> int:
    args = parse_args(argv)
    warnings.filterwarnings("ignore")
    paths.use_built_library()
    from contextlib import contextmanager

    import zoo_prepare
    from zoo_models import ZOO, ZOO_BY_NAME

    names = args.models.split(",") if args.models else (QUICK_MODELS if args.quick else [m.name for m in ZOO])
    unknown = [name for name in names if name not in ZOO_BY_NAME]
    if unknown:
        print(f"unknown model(s): {', '.join(unknown)}; the zoo has {', '.join(ZOO_BY_NAME)}", file=sys.stderr)
        return 2
    if not TOOL.is_file():
        print(f"{TOOL} does not exist: build first (make build, or set EXECUTORCH_OPENVINO_BUILD)", file=sys.stderr)
        return 1

    @contextmanager
    def step(what):
        print(what, flush=True)
        yield

    run = benchmark.new_run("zoo", "Benchmark zoo", checkout=paths.REPO, report=REPORT,
                            versions=["torch", "executorch", "openvino", "nncf"],
                            settings={"rounds": args.rounds, "seconds of calls per variant": args.budget,
                                      "loads per kind": args.load_repeats, "library": paths.use_built_library()})
    work = Path(tempfile.mkdtemp(prefix="zoo-"))
    failed = False
    try:
        for name in names:
            entry = ZOO_BY_NAME[name]
            print(f"== {name}: {entry.description}", flush=True)
            rows = {v: {"group": name, "variant": v, "native": "native-cpp" if v in CPP else "native-py"}
                    for v in list(CPP) + list(PY)}
            try:
                missing = zoo_prepare.prepare(entry, work / name, step)
                run["notes"].append(f"{name}: {entry.description}; delegated {missing.pop('delegated', '?')}")
                for variant, program in NEEDS.items():
                    if program in missing:
                        rows[variant]["note"] = missing[program]
                measure_model(name, work / name, work / "caches", args, rows, run["notes"])
            except Exception as error:  # reported; the other models are still measured
                failed = True
                run["notes"].append(f"{name} failed: {type(error).__name__}: {error}"[:800])
                print(f"  failed: {error}", flush=True)
            run["rows"] += rows.values()
            shutil.rmtree(work / name, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for row in run["rows"]:
        if "note" in row and "latency_ms" not in row:
            row["check"] = f"n/a: {row['note']}"
    markdown = benchmark.save(benchmark.finish(run), args.results_dir)
    print(markdown.read_text())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
