"""What the zoo measures for one prepared model folder: loads (each in a fresh process) and latency
(every variant in one interleaved run), plus ExecuTorch's own OpenVINO delegate's crash probes."""

from __future__ import annotations

import math
import shutil
import statistics
from pathlib import Path
from typing import Callable, Dict, List, Optional

from common.rounds import alternating, rotated, time_calls
from common.stats import median
from zoo_cpp_side import ChildFailed, CppServer, cpp_export, cpp_load
from zoo_python_side import NativeCall, ProgramCall, python_load
from zoo_results import (CPP_NAMES, ET_OV_CPP, ET_OV_PY, KERNELS_PY, NATIVE_CPP, NATIVE_CPP_REBIND, NATIVE_PY,
                         OURS_CPP, OURS_CPP_SET_INPUTS, OURS_PY, OURS_UPSTREAM_CPP, PTE_FILES, VARIANTS, XNNPACK_CPP,
                         XNNPACK_PY, ModelRun)


def _present(run: ModelRun, folder: Path, variant: str) -> bool:
    """The variant exists for this model: nothing ruled it out and its program (if any) was written."""
    if variant in run.results and run.results[variant].note:
        return False
    pte = PTE_FILES.get(variant)
    return pte is None or (folder / pte).is_file()


def _fresh(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


# --- ExecuTorch's own OpenVINO delegate: does it run, and how -------------------------------------------


def probe_et_openvino(run: ModelRun, folder: Path, tool: Path, say: Callable) -> None:
    """Runs ExecuTorch's own delegate the ways a user would (program from a path: memory-mapped in
    Python, mapped or read into heap buffers in C++) and the way that works (one buffer holding the
    whole program), each in its own process; records the outcomes on `run` and rules out variants
    that cannot run."""
    if not (folder / "et_openvino.pte").is_file():
        return
    outcomes = []
    try:
        python_load("et", folder, folder / "et_openvino.pte")
        outcomes.append("Python, from a path: runs")
    except ChildFailed as failure:
        outcomes.append(f"Python, from a path: {failure.how}")
    for loader in ("mmap", "file"):
        try:
            cpp_load(tool, folder, "et-openvino", loader=loader, preopen=False, runs=1)
            outcomes.append(f"C++, {loader} loader: runs")
        except ChildFailed as failure:
            outcomes.append(f"C++, {loader} loader: {failure.how}")
    for variant, how, attempt in (
            (ET_OV_PY, "Python, from bytes", lambda: python_load("et", folder, folder / "et_openvino.pte", from_bytes=True)),
            (ET_OV_CPP, "C++, one buffer", lambda: cpp_load(tool, folder, "et-openvino", loader="buffer", runs=1))):
        try:
            attempt()
            outcomes.append(f"{how}: runs")
        except ChildFailed as failure:
            run.result(variant).note = f"{failure.how} even with the program in one buffer"
            outcomes.append(f"{how}: {failure.how}")
    try:
        figure = cpp_load(tool, folder, "ours-upstream", loader="file", preopen=False, runs=1)
        outcomes.append(f"the same program on our delegate (C++, file loader): runs, max abs(out − eager) "
                        f"{_fmt_diff(figure.get('vs_eager'))}")
    except ChildFailed as failure:
        outcomes.append(f"the same program on our delegate (C++, file loader): {failure.how}")
        run.result(OURS_UPSTREAM_CPP).note = f"{failure.how}"
    run.notes.append("ExecuTorch's own OpenVINO delegate: " + "; ".join(outcomes))
    say("  et-openvino: " + "; ".join(outcomes))


# --- loads -------------------------------------------------------------------------------------------


def measure_loads(run: ModelRun, folder: Path, tool: Path, caches: Path, repeats: int, python_loads: bool) -> None:
    """Cold (empty model cache, which the load fills) and warm (cache filled) loads of native and ours
    from C++, native's import of its exported compiled model, one load of each other variant; every
    load in a fresh process with the OpenVINO runtime opened before the clock (--preopen), `repeats`
    times in alternating order. Times are medians; memory is from the first repeat."""
    figures: Dict[str, List[dict]] = {}

    def record(key: str, result: dict) -> None:
        figures.setdefault(key, []).append(result)

    have_native = _present(run, folder, NATIVE_CPP)
    if have_native:
        cpp_export(tool, folder, folder / "native.exported")
    for r in range(repeats):
        for side in alternating(["native", "ours"], r):
            if side == "native" and not have_native:
                continue
            cache = _fresh(caches / f"{run.name}-{side}-{r}")
            record(f"{side}-cold", cpp_load(tool, folder, side, cache=cache))
            record(f"{side}-warm", cpp_load(tool, folder, side, cache=cache))
        if have_native:
            record("native-import", cpp_load(tool, folder, "native-import"))
            if r == 0:
                record("native-file", cpp_load(tool, folder, "native-file"))
        for variant in (XNNPACK_CPP, ET_OV_CPP, OURS_UPSTREAM_CPP):
            if _present(run, folder, variant):
                try:
                    record(variant, cpp_load(tool, folder, CPP_NAMES[variant]))
                except ChildFailed as failure:  # recorded; the other variants are still measured
                    run.result(variant).note = f"load {failure}"[:300]

    def fill(variant: str, cold: str, warm: Optional[str] = None) -> None:
        if cold not in figures:
            return
        result = run.result(variant)
        result.load_cold_ms = median([f["load_ms"] for f in figures[cold]])
        if warm:
            result.load_warm_ms = median([f["load_ms"] for f in figures[warm]])
            result.warm_parity = _warm_parity(figures[warm][0])
            result.peak_warm_load_kb = figures[warm][0]["peak_load_kb"]
        first = figures[cold][0]
        result.load_added_kb = _added_kb(first)
        result.peak_load_kb = first["peak_load_kb"]
        result.peak_kb = first["peak_run_kb"]

    fill(NATIVE_CPP, "native-cold", "native-warm")
    fill(OURS_CPP, "ours-cold", "ours-warm")
    fill(XNNPACK_CPP, XNNPACK_CPP)
    fill(ET_OV_CPP, ET_OV_CPP)
    fill(OURS_UPSTREAM_CPP, OURS_UPSTREAM_CPP)
    if "native-import" in figures:
        run.native_import_ms = median([f["load_ms"] for f in figures["native-import"]])
        first = figures["native-import"][0]
        run.native_import_added_kb = _added_kb(first)
        run.native_import_peak_kb = first["peak_load_kb"]
    if "native-file" in figures:
        first = figures["native-file"][0]
        run.native_file_added_kb = _added_kb(first)
        run.native_file_peak_kb = first["peak_load_kb"]
    if python_loads:
        measure_python_loads(run, folder, caches)


def _added_kb(figure: dict) -> Optional[int]:
    """What the load added to the process: its VmHWM right after the load - RSS before it (None when
    VmHWM could not be reset first, so that it may be an earlier peak)."""
    return figure["peak_load_kb"] - figure["rss_before_kb"] if figure.get("reset") else None


def _warm_parity(figure: dict) -> str:
    value = figure.get("vs_eager")
    return "" if value is None else f"warm-cache load: max abs(out − eager) {value:.1e}"


def measure_python_loads(run: ModelRun, folder: Path, caches: Path) -> None:
    """The same from Python, one fresh interpreter per load (these include importing nothing: the
    imports happen before the clock)."""
    def fill(variant, cold, warm=None):
        result = run.result(variant)
        result.load_cold_ms = cold["load_ms"]
        result.load_warm_ms = warm["load_ms"] if warm else None
        result.load_added_kb = _added_kb(cold)
        result.peak_load_kb = cold["peak_load_kb"]
        result.peak_kb = cold["peak_kb"]

    if _present(run, folder, NATIVE_PY):
        cache = _fresh(caches / f"{run.name}-native-py")
        fill(NATIVE_PY, python_load("native", folder, cache=cache), python_load("native", folder, cache=cache))
    cache = _fresh(caches / f"{run.name}-ours-py")
    pte = folder / PTE_FILES[OURS_PY]
    fill(OURS_PY, python_load("ours", folder, pte, cache), python_load("ours", folder, pte, cache))
    for variant in (XNNPACK_PY, KERNELS_PY, ET_OV_PY):
        if _present(run, folder, variant):
            try:
                fill(variant, python_load("et", folder, folder / PTE_FILES[variant], from_bytes=variant == ET_OV_PY))
            except ChildFailed as failure:
                run.result(variant).note = f"load {failure}"[:300]


# --- latency, interleaved --------------------------------------------------------------------------------


def measure_latency(run: ModelRun, folder: Path, tool: Path, inputs, iterations: int, rounds: int,
                    budget_s: float, allocation_calls: int) -> None:
    """Every available variant in one run: `rounds` rounds, each a block of calls of every variant,
    the order rotating (and reversing every other round) so that drift and noise from other processes
    hit all alike. A block has iterations/rounds calls, fewer when a variant is slow (at most budget_s
    seconds of calls per variant over the run). Then heap allocations per call of the C++ variants,
    and the outputs of every variant against native's and eager PyTorch's."""
    import numpy as np
    import torch

    cpp_variants = [v for v in CPP_NAMES if _present(run, folder, v)]
    if not _present(run, folder, NATIVE_CPP):
        cpp_variants = [v for v in cpp_variants if v not in (NATIVE_CPP, NATIVE_CPP_REBIND)]
    # ExecuTorch's program on our delegate needs a process without ExecuTorch's own OpenVINO delegate
    # (which keeps the backend name): a second server, timed in the same rotation.
    servers_of: Dict[str, CppServer] = {}
    servers: List[CppServer] = []
    try:
        for group in ([v for v in cpp_variants if v != OURS_UPSTREAM_CPP],
                      [v for v in cpp_variants if v == OURS_UPSTREAM_CPP]):
            if not group:
                continue
            server = CppServer(tool, folder, [CPP_NAMES[v] for v in group])
            servers.append(server)
            for variant in group:
                if CPP_NAMES[variant] in server.failed:
                    run.result(variant).note = f"does not load: {server.failed[CPP_NAMES[variant]]}"[:300]
                    cpp_variants.remove(variant)
                else:
                    servers_of[variant] = server
        if ET_OV_CPP in servers_of:
            holder = servers[0].openvino_backend_holder
            where = Path(holder).resolve() if holder.startswith("/") else holder
            run.notes.append(f"from C++, ExecuTorch's programs ran on {where}")
        calls: Dict[str, Callable[[int], List[float]]] = {}
        for variant in cpp_variants:
            calls[variant] = lambda n, name=CPP_NAMES[variant], server=servers_of[variant]: server.time(name, n)
        python_calls = {}
        if _present(run, folder, NATIVE_PY):
            python_calls[NATIVE_PY] = NativeCall(folder)
        python_calls[OURS_PY] = ProgramCall(folder / PTE_FILES[OURS_PY], inputs)
        for variant in (XNNPACK_PY, KERNELS_PY, ET_OV_PY):
            if _present(run, folder, variant):
                try:
                    python_calls[variant] = ProgramCall(folder / PTE_FILES[variant], inputs,
                                                        from_bytes=variant == ET_OV_PY)
                    python_calls[variant]()
                except Exception as error:  # recorded; the other variants are still measured
                    python_calls.pop(variant, None)
                    run.result(variant).note = f"does not run: {type(error).__name__}: {error}"[:300]
        for variant, call in python_calls.items():
            calls[variant] = lambda n, call=call: time_calls(call, n, warmup=0)

        # Outputs, before timing.
        eager = [np.load(path) for path in sorted(folder.glob("output*.npy"), key=lambda p: int(p.stem[6:]))]
        checked = {}
        for server in servers:
            checked.update(server.check())
        for variant, figures in checked.items():
            key = next(k for k, name in CPP_NAMES.items() if name == variant)
            if not figures["ran"]:
                run.result(key).note = f"fails: {figures.get('failure', '?')}"[:300]
                calls.pop(key, None)
                continue
            run.result(key).parity = _parity_text(figures["vs_eager"], figures["vs_native"], NATIVE_CPP)
            if figures.get("sets_inputs_every_call") and key != OURS_CPP_SET_INPUTS:
                # A kernel outside the delegate reads an input whose buffer the memory plan then reuses.
                run.result(key).parity += "; inputs set again on every call (the memory plan reuses their buffers)"
        native_outputs = None
        if NATIVE_PY in python_calls:
            python_calls[NATIVE_PY]()
            native_outputs = python_calls[NATIVE_PY].outputs()
            run.result(NATIVE_PY).parity = _parity_text(_max_diff(native_outputs, eager), 0.0, NATIVE_PY)
        for variant, call in python_calls.items():
            if variant == NATIVE_PY:
                continue
            outputs = [t.numpy() if isinstance(t, torch.Tensor) else np.asarray(t) for t in call()]
            run.result(variant).parity = _parity_text(
                _max_diff(outputs, eager), _max_diff(outputs, native_outputs) if native_outputs else None, NATIVE_PY)

        # Warm-up, and an estimate of each variant's call that sizes its blocks.
        estimate = {}
        for variant, call in calls.items():
            times = call(1)
            if times[0] < 200:  # slow variants (ExecuTorch's plain kernels on a CNN: seconds) get one call
                times = call(3)
            estimate[variant] = statistics.median(times) / 1e3  # seconds
        order = [v for v in VARIANTS if v in calls]
        per_round = {v: max(1, min(math.ceil(iterations / rounds), int(budget_s / (rounds * max(estimate[v], 1e-7)))))
                     for v in order}
        for variant in list(order):
            if estimate[variant] > budget_s:
                # One call is over the whole budget: the estimate's call is its only sample.
                run.result(variant).times = [estimate[variant] * 1e3]
                run.result(variant).blocks = [run.result(variant).times]
                order.remove(variant)
        for r in range(rounds):
            for variant in rotated(order, r, reverse_odd=True):
                # One untimed call first when calls are short: the previous variant's threads may still
                # be spinning, and a variant sharing a request with another re-binds on its first call.
                untimed = 1 if estimate[variant] < 0.05 else 0
                times = calls[variant](per_round[variant] + untimed)[untimed:]
                run.result(variant).times.extend(times)
                run.result(variant).blocks.append(times)

        # Heap allocations per call (C++ variants; the counting replaces malloc in bench_zoo_cpp).
        for variant in cpp_variants:
            if variant not in calls:
                continue
            n = max(1, min(allocation_calls, int(1.0 / max(estimate[variant], 1e-7))))
            counted = servers_of[variant].allocations(CPP_NAMES[variant], n)
            run.result(variant).allocs_per_call = counted["this_thread"] / counted["calls"]
            run.result(variant).allocs_all_threads = counted["all_threads"] / counted["calls"]
    finally:
        for server in servers:
            server.close()


def _fmt_diff(value) -> str:
    return "NaN/inf" if value is None else f"{value:.1e}"


def _max_diff(outputs, reference) -> Optional[float]:
    import numpy as np

    if reference is None or len(outputs) != len(reference):
        return None
    worst = 0.0
    for a, b in zip(outputs, reference):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return math.inf
        worst = max(worst, float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0)
    return worst


def _parity_text(vs_eager: Optional[float], vs_native: Optional[float], native: str) -> str:
    def fmt(value):
        return "–" if value is None else ("inf" if value == math.inf else f"{value:.1e}")

    return f"max abs(out − eager) {fmt(vs_eager)}, max abs(out − {native}) {fmt(vs_native)}"
