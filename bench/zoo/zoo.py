"""The benchmark zoo: every model of bench/zoo/zoo_models.py through every way of running it, in one run.

For each model: native OpenVINO from C++ (the limit: the IR our delegate got, same device and
properties, one infer request, tensors bound once), ours from C++ (ExecuTorch's Method around our
delegate), ExecuTorch + XNNPACK fp32 and ExecuTorch's own OpenVINO delegate from C++, all driven by
bench_zoo_cpp; and from Python native OpenVINO's API, ours, XNNPACK, ExecuTorch's kernels and its own
OpenVINO delegate through executorch.runtime. Latency is measured interleaved: R rounds, each a block
of calls of every variant, the order rotating. Loads (cold and with a warm model cache), resident
memory and ExecuTorch's own delegate's crash probes each run in a fresh process. Heap allocations
per call are counted in bench_zoo_cpp. The report (Markdown and a PNG plot) goes to bench/results/.

  .venv/bin/python bench/zoo/zoo.py [--models a,b] [--quick] [--results-dir DIR] [--iterations N] [--rounds R]

EXECUTORCH_OPENVINO_BUILD names the CMake build folder (default build/) holding bench/bench_zoo_cpp;
EXECUTORCH_OPENVINO_LIBRARY (or the build's site/ folder) the library Python loads.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common
from common import machine, paths, reports  # noqa: E402
from common.reports import say  # noqa: E402
from zoo_results import ModelRun  # noqa: E402

TOOL = paths.bench_binary("bench_zoo_cpp")

ZOO_NAMES = ["tiny", "mlp", "mobilenet_v2", "resnet18", "transformer", "segmentation", "lstm", "embedding"]
QUICK_MODELS = ["tiny", "mlp"]


def header(started: float, load_before: float, args, library: str, holder: str) -> List[str]:
    import openvino

    mode = "quick" if args.quick else "full"
    return [
        f"# Benchmark zoo, {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}",
        "",
        f"- {machine.machine(load_before)}",
        f"- {machine.versions('torch', 'executorch')}, openvino {openvino.get_version()}, "
        f"{machine.versions('nncf')}, executorch_openvino {machine.our_version()}",
        f"- library {library}; C++ side {TOOL}; in this Python process ExecuTorch's OpenVINO programs "
        f"(backend OpenvinoBackend) run on {holder or 'nothing'}",
        f"- {mode} run: {args.rounds} interleaved rounds per model, up to {args.iterations} timed calls per variant "
        f"(fewer when a variant is slow: at most {args.budget:g} s of calls per variant and model; the `n` column); "
        f"loads repeated {args.load_repeats}×; total time {time.perf_counter() - started:.0f} s",
    ]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", help="comma-separated model names (default: all; --quick: "
                        f"{','.join(QUICK_MODELS)}): " + ", ".join(ZOO_NAMES))
    parser.add_argument("--iterations", "-n", type=int, help="timed calls per variant and model (default 60; --quick 12)")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 6; --quick 3)")
    parser.add_argument("--budget", type=float, help="at most this many seconds of timed calls per variant and "
                        "model (default 3; --quick 0.5)")
    parser.add_argument("--load-repeats", type=int, help="loads of each kind per model (default 3; --quick 1)")
    parser.add_argument("--no-python-loads", action="store_true", help="skip the Python load measurements "
                        "(a fresh interpreter each; the default with --quick)")
    parser.add_argument("--quick", action="store_true", help="two models, few calls: a smoke run of everything")
    reports.add_results_dir(parser, quick=True)
    args = parser.parse_args(argv)
    args.iterations = args.iterations or (12 if args.quick else 60)
    args.rounds = args.rounds or (3 if args.quick else 6)
    args.budget = args.budget or (0.5 if args.quick else 3.0)
    args.load_repeats = args.load_repeats or (1 if args.quick else 3)
    args.python_loads = not (args.no_python_loads or args.quick)
    args.results_dir = reports.results_dir(args.results_dir, args.quick)
    if args.iterations < 1 or args.rounds < 1 or args.budget <= 0 or args.load_repeats < 1:
        parser.error("--iterations, --rounds and --load-repeats must be at least 1, --budget positive")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    load_before = machine.load_average()
    warnings.filterwarnings("ignore")
    library = paths.use_built_library() or "(the package's own)"
    paths.on_path(paths.PYTHON)
    import executorch_openvino  # noqa: F401  (loads the delegate)
    from executorch_openvino.runtime.openvino_discovery import find_pip_runtime

    if not os.environ.get("OPENVINO_LIB_PATH") and find_pip_runtime() is not None:
        # ExecuTorch's own OpenVINO delegate opens this file (its Python bindings set the variable
        # only when their portable_lib module is imported, which executorch.runtime does not do);
        # children inherit it. Ours takes the same runtime.
        os.environ["OPENVINO_LIB_PATH"] = str(find_pip_runtime())
    from executorch_openvino.runtime import library as our_library
    from executorch_openvino.cli._common import step

    # Which library runs programs of ExecuTorch's own OpenVINO delegate here (ours takes its name when free).
    holder = our_library.backend_library("OpenvinoBackend")
    import zoo_measure
    import zoo_prepare
    import zoo_report
    from zoo_models import ZOO, ZOO_BY_NAME

    names = ([name.strip() for name in args.models.split(",")] if args.models
             else (QUICK_MODELS if args.quick else [m.name for m in ZOO]))
    unknown = [name for name in names if name not in ZOO_BY_NAME]
    if unknown:
        print(f"unknown model(s): {', '.join(unknown)}; the zoo has {', '.join(ZOO_BY_NAME)}", file=sys.stderr)
        return 2
    if not TOOL.is_file():
        print(f"{TOOL} does not exist: build first (make build, or set EXECUTORCH_OPENVINO_BUILD)", file=sys.stderr)
        return 1
    et_openvino = zoo_prepare.et_openvino_partitioner()
    if isinstance(et_openvino, str):
        say(f"ExecuTorch's own OpenVINO delegate: n/a: {et_openvino}")

    work = Path(tempfile.mkdtemp(prefix="zoo-"))
    runs: List[ModelRun] = []
    try:
        for name in names:
            entry = ZOO_BY_NAME[name]
            run = ModelRun(name, entry.description)
            runs.append(run)
            say(f"== {name}: {entry.description}")
            folder = work / name
            try:
                inputs = zoo_prepare.prepare(entry, folder, run, et_openvino, step)
                say(f"  delegated {run.delegated}")
                with step("  ExecuTorch's own OpenVINO delegate: crash probes"):
                    zoo_measure.probe_et_openvino(run, folder, TOOL, say)
                with step("  loads (one process each)"):
                    zoo_measure.measure_loads(run, folder, TOOL, work / "caches", args.load_repeats, args.python_loads)
                with step(f"  latency, {args.rounds} interleaved rounds"):
                    zoo_measure.measure_latency(run, folder, TOOL, inputs, args.iterations, args.rounds, args.budget,
                                                allocation_calls=200)
                say("  " + ", ".join(f"{v} {r.p50:.3f} ms" for v, r in run.results.items() if r.p50))
            except Exception as error:
                run.error = f"{type(error).__name__}: {error}".replace("\n", " ")
                say(f"  failed: {run.error[:800]}")
            finally:
                shutil.rmtree(folder, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    stamp = reports.stamp()
    text = "\n".join(zoo_report.report(runs, header(started, load_before, args, library, holder))) + "\n"
    markdown = reports.print_and_save(text, args.results_dir, f"zoo-{stamp}.md")
    picture = args.results_dir / f"zoo-{stamp}.png"
    zoo_report.plot(runs, picture, f"p50 latency relative to native OpenVINO, {stamp}")
    say(f"wrote {markdown} and {picture}")
    return 1 if any(run.error for run in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
