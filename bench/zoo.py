"""The benchmark zoo: every model of bench/zoo_models.py through every way of running it, in one run.

Variants (per model):
  native          native OpenVINO (its Python API) on the very IR our delegate got, same device and
                  properties (PERFORMANCE_HINT LATENCY added as the delegate does), one infer request
                  reused, inputs set once: the limit
  ours-py         executorch_openvino through executorch.runtime (method.execute)
  ours-cpp        executorch_openvino from C++ (executorch-openvino-run, a subprocess per round)
  xnnpack         ExecuTorch + XnnpackPartitioner (fp32)
  et-kernels      ExecuTorch with no delegate (the kernels the wheel registers)
  et-openvino     ExecuTorch's own OpenVINO delegate, when it imports and lowers

Latency is measured in the main process, interleaved: R rounds, each running a block of calls of
every variant, the order rotating from round to round so drift hits all variants alike. Load time
(cold: empty model cache; warm: a second process with the cache filled) and peak resident memory
are measured in a fresh subprocess per variant and load.

  .venv/bin/python bench/zoo.py [--models a,b] [--iterations N] [--quick] [--results-dir DIR]
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
RUNNER = Path(os.environ.get("EXECUTORCH_OPENVINO_BUILD", REPO / "build")) / "site" / "executorch_openvino" / "bin" / "executorch-openvino-run"
CACHE_VARIABLE = "EXECUTORCH_OPENVINO_CACHE_DIR"

NATIVE, OURS_PY, OURS_CPP, XNNPACK, KERNELS, ET_OV = "native", "ours-py", "ours-cpp", "xnnpack", "et-kernels", "et-openvino"
VARIANTS = [NATIVE, OURS_PY, OURS_CPP, XNNPACK, KERNELS, ET_OV]
DESCRIPTIONS = {
    NATIVE: "native OpenVINO, same IR and properties, one infer request, inputs set once",
    OURS_PY: "executorch_openvino via executorch.runtime (Python method.execute)",
    OURS_CPP: "executorch_openvino via the C++ runner executorch-openvino-run",
    XNNPACK: "ExecuTorch + XNNPACK fp32",
    KERNELS: "ExecuTorch, no delegate (the wheel's registered kernels)",
    ET_OV: "ExecuTorch's own OpenVINO delegate (executorch.backends.openvino)",
}


# --- memory of this process ----------------------------------------------------------------------------


def _status_kb(field_name: str) -> Optional[int]:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    """Resets VmHWM to the current RSS (Linux >= 4.0); False when not allowed."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _peak_kb() -> int:
    return _status_kb("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


# --- child processes: one load (+ a few runs) each ------------------------------------------------------


def child_main(kind: str, folder: Path, pte: Optional[Path], cache: Optional[str]) -> int:
    """Loads one variant, runs it a few times, prints one JSON line: load_ms, first_ms, rss_before_kb
    (after imports, before loading), peak_load_kb (VmHWM right after loading), peak_kb (VmHWM after
    the runs) and reset (whether VmHWM could be reset before loading, so peak_load is load's own)."""
    import numpy as np

    inputs = [np.load(folder / f"input{i}.npy") for i in range(len(list(folder.glob("input*.npy"))))]
    extra = {}
    if kind == "native":
        spec = json.loads((folder / "native.json").read_text())
        xml = (folder / "model.xml").read_bytes()
        weights = np.fromfile(folder / "model.bin", dtype=np.uint8)
        rss_before_import = _status_kb("VmRSS")
        before_import = time.perf_counter()
        import openvino as ov

        import_ms = (time.perf_counter() - before_import) * 1e3
        rss_before = _status_kb("VmRSS")
        reset = _reset_peak()
        start = time.perf_counter()
        core = ov.Core()
        if cache:
            core.set_property({"CACHE_DIR": cache})
        model = core.read_model(model=xml, weights=ov.Tensor(weights))
        request = core.compile_model(model, spec["device"], spec["properties"]).create_infer_request()
        for position, j in enumerate(spec["input_positions"]):
            request.set_input_tensor(position, ov.Tensor(np.ascontiguousarray(inputs[j])))
        load_ms = (time.perf_counter() - start) * 1e3
        extra = {"load_with_import_ms": load_ms + import_ms,
                 "extra_with_import_kb": _peak_kb() - rss_before_import}
        run = request.infer
    else:
        import torch

        if kind == "ours":
            sys.path.insert(0, str(REPO / "python"))
            import executorch_openvino  # noqa: F401  (loads the delegate)
        from executorch.runtime import Runtime

        tensors = [torch.from_numpy(array) for array in inputs]
        runtime = Runtime.get()
        rss_before = _status_kb("VmRSS")
        reset = _reset_peak()
        start = time.perf_counter()
        program = runtime.load_program(pte)
        method = program.load_method("forward")
        load_ms = (time.perf_counter() - start) * 1e3

        def run():
            _ = program  # the method runs from the program's data: keep it alive
            method.execute(tensors)
    peak_load = _peak_kb()
    start = time.perf_counter()
    run()
    first_ms = (time.perf_counter() - start) * 1e3
    for _ in range(3 if first_ms < 1000 else 0):  # slow variants (seconds per call): the first run only
        run()
    print(json.dumps({"load_ms": load_ms, "first_ms": first_ms, "rss_before_kb": rss_before,
                      "peak_load_kb": peak_load, "peak_kb": _peak_kb(), "reset": reset, **extra}), flush=True)
    return 0


def _run_child(args: List[str], env: Dict[str, str]) -> dict:
    """Runs a child and returns its JSON line; with `os.wait4` its own peak RSS (ru_maxrss) too."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(args, stdout=out, stderr=err, env=env, text=True)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, error = out.read(), err.read()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args[:4]))} ... exited {process.returncode}: {error.strip()[-800:]}")
    return {"stdout": text, "ru_maxrss_kb": usage.ru_maxrss}


def _child_env(cache: Optional[Path]) -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "python"), env.get("PYTHONPATH")]))
    env.pop(CACHE_VARIABLE, None)
    if cache is not None:
        env[CACHE_VARIABLE] = str(cache)
    return env


def python_load(kind: str, folder: Path, pte: Optional[Path], cache: Optional[Path]) -> dict:
    args = [sys.executable, str(Path(__file__).resolve()), "--child", kind, "--child-dir", str(folder)]
    if pte is not None:
        args += ["--child-pte", str(pte)]
    if cache is not None and kind == "native":
        args += ["--child-cache", str(cache)]
    result = _run_child(args, _child_env(cache if kind == "ours" else None))
    line = [row for row in result["stdout"].splitlines() if row.startswith("{")][-1]
    return json.loads(line)


def runner_args(pte: Path, folder: Path, iterations: int, warmup: int) -> List[str]:
    inputs = sorted(folder.glob("input*.npy"), key=lambda p: int(p.stem[5:]))
    args = [str(RUNNER), str(pte), "--iterations", str(iterations), "--warmup", str(warmup)]
    for path in inputs:
        args += ["--input", str(path)]
    return args


def _runner_value(text: str, label: str) -> float:
    found = re.search(rf"{label}:\s+([0-9.]+) ms", text)
    if found is None:
        raise RuntimeError(f"the runner printed no {label!r}:\n{text}")
    return float(found.group(1))


def runner_load(pte: Path, folder: Path, cache: Path) -> dict:
    """The runner's load time and peak RSS. The peak comes from /usr/bin/time: a child forked
    straight from this (large) process would inherit its high-water mark through fork and exec."""
    timer = Path("/usr/bin/time")
    with tempfile.TemporaryDirectory() as scratch:
        report_file = Path(scratch) / "maxrss"
        prefix = [str(timer), "-f", "%M", "-o", str(report_file)] if timer.is_file() else []
        result = _run_child(prefix + runner_args(pte, folder, 3, 0), _child_env(cache))
        peak = int(report_file.read_text().split()[-1]) if prefix else None  # no honest figure otherwise
    return {"load_ms": _runner_value(result["stdout"], "load time"), "peak_kb": peak,
            "first_ms": _runner_value(result["stdout"], "first run")}


# --- results -------------------------------------------------------------------------------------------


@dataclass
class Result:
    times: List[float] = field(default_factory=list)  # ms per call (ours-cpp: per-round p50s)
    p90s: List[float] = field(default_factory=list)   # ours-cpp only: per-round p90s
    samples: int = 0
    note: str = ""                                    # why n/a
    load_cold_ms: Optional[float] = None
    load_warm_ms: Optional[float] = None
    load_extra_kb: Optional[int] = None               # VmHWM at load - RSS before load (cold load)
    peak_kb: Optional[int] = None                     # whole process peak over load + runs
    # native only: the same, counting `import openvino` (which opens the runtime libraries) as load
    load_extra_with_import_kb: Optional[int] = None
    load_cold_with_import_ms: Optional[float] = None
    load_warm_with_import_ms: Optional[float] = None

    @property
    def p50(self) -> Optional[float]:
        return statistics.median(self.times) if self.times else None

    @property
    def p90(self) -> Optional[float]:
        if self.p90s:
            return statistics.median(self.p90s)
        return percentile(self.times, 0.9) if self.times else None


@dataclass
class ModelRun:
    name: str
    description: str
    delegated: str = ""
    parity: str = ""
    results: Dict[str, Result] = field(default_factory=dict)
    error: str = ""


# --- preparing a model: lower it three or four ways, write the files -----------------------------------


def _operator_counts(lowered, backend_id: str):
    from executorch.exir.lowered_backend_module import LoweredBackendModule

    graph_module = lowered.exported_program().graph_module
    modules = [m for _, m in graph_module.named_children()
               if isinstance(m, LoweredBackendModule) and m.backend_id == backend_id]
    inside = sum(1 for m in modules for n in m.original_module.graph.nodes
                 if n.op == "call_function" and n.target.__name__ != "getitem")
    outside = sum(1 for n in graph_module.graph.nodes if n.op == "call_function"
                  and n.target.__name__ not in ("getitem", "executorch_call_delegate"))
    return inside, outside, len(modules)


def _et_openvino_partitioner():
    """ExecuTorch's own OpenVINO partitioner, or the reason it is not available."""
    try:
        from executorch.backends.openvino.partitioner import OpenvinoPartitioner
        from executorch.exir.backend.compile_spec_schema import CompileSpec
    except Exception as error:  # ImportError: it needs nncf
        return f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else error}"
    return OpenvinoPartitioner([CompileSpec("device", b"CPU")])


def prepare(entry, folder: Path, run: ModelRun, et_openvino) -> dict:
    """Exports and lowers `entry`; writes inputs, .pte files and the native IR into `folder`.
    Returns {variant: .pte path} and sets notes on `run`."""
    import numpy as np
    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    import executorch_openvino
    from executorch_openvino import compile_specs
    from executorch_openvino.blob import parse_blob
    from executorch_openvino.cli.bench import single_partition

    model, inputs = entry.make()
    folder.mkdir(parents=True, exist_ok=True)
    for i, tensor in enumerate(inputs):
        np.save(folder / f"input{i}.npy", tensor.numpy())
    exported = torch.export.export(model, inputs)
    ptes = {}

    def lower(variant, partitioners):
        lowered = to_edge_transform_and_lower(exported, partitioner=partitioners)
        path = folder / f"{variant}.pte"
        path.write_bytes(lowered.to_executorch().buffer)
        ptes[variant] = path
        return lowered

    with step("  lowering to executorch_openvino"):
        ours = lower("ours", [executorch_openvino.OpenvinoPartitioner()])
    inside, outside, partitions = _operator_counts(ours, executorch_openvino.BACKEND_ID)
    run.delegated = f"{inside}/{inside + outside} ops in {partitions} partition(s)"
    with step("  lowering to XNNPACK"):
        try:
            lower("xnnpack", [XnnpackPartitioner()])
        except Exception as error:
            run.results[XNNPACK] = Result(note=f"lowering failed: {type(error).__name__}: {error}"[:200])
    with step("  lowering with no delegate"):
        try:
            lower("kernels", [])
        except Exception as error:
            run.results[KERNELS] = Result(note=f"lowering failed: {type(error).__name__}: {error}"[:200])
    if isinstance(et_openvino, str):
        run.results[ET_OV] = Result(note=et_openvino)
    else:
        try:
            lower("et_openvino", [et_openvino])
        except Exception as error:
            run.results[ET_OV] = Result(note=f"lowering failed: {type(error).__name__}: {error}"[:200])

    found = single_partition(ptes["ours"].read_bytes(), "forward")
    if isinstance(found, str):
        run.results[NATIVE] = Result(note=found)
    else:
        delegate, data, call_args, plan_inputs, _ = found
        blob = parse_blob(data)
        options = compile_specs.from_compile_specs(delegate.compile_specs)
        properties = dict(options.properties)
        properties.setdefault("PERFORMANCE_HINT", "LATENCY")  # what the delegate adds when unset
        (folder / "model.xml").write_bytes(blob.ir_xml)
        (folder / "model.bin").write_bytes(blob.ir_weights)
        (folder / "native.json").write_text(json.dumps({
            "device": options.device, "properties": properties,
            "input_positions": [plan_inputs.index(value) for value in call_args if value in plan_inputs],
        }))
    with torch.no_grad():
        run.eager = model(*inputs)
    run.inputs = inputs
    return ptes


# --- latency, interleaved -------------------------------------------------------------------------------


@dataclass
class _Native:
    request: object
    arrays: list

    def infer(self):
        return self.request.infer()

    def get_output_tensor(self, index):
        return self.request.get_output_tensor(index)


def _native_call(folder: Path, inputs):
    import numpy as np
    import openvino as ov

    spec = json.loads((folder / "native.json").read_text())
    core = ov.Core()
    model = core.read_model(model=(folder / "model.xml").read_bytes(),
                            weights=ov.Tensor(np.fromfile(folder / "model.bin", dtype=np.uint8)))
    request = core.compile_model(model, spec["device"], spec["properties"]).create_infer_request()
    arrays = [np.ascontiguousarray(inputs[j].numpy()) for j in spec["input_positions"]]
    for position, array in enumerate(arrays):
        request.set_input_tensor(position, ov.Tensor(array))
    return _Native(request, arrays)  # the request reads the arrays' memory: keep them alive with it


def _et_call(pte: Path, inputs):
    from executorch.runtime import Runtime

    program = Runtime.get().load_program(pte)
    method = program.load_method("forward")
    inputs = list(inputs)

    def call():
        return method.execute(inputs)

    call.program, call.method = program, method  # keep the Program alive as long as its Method
    return call


def _available(run: ModelRun, variant: str) -> bool:
    """False when the variant was found not to be possible for this model (its Result has a note)."""
    return not run.results.get(variant, Result()).note


def measure_latency(run: ModelRun, folder: Path, ptes: dict, iterations: int, rounds: int, budget_s: float,
                    cache: Path) -> None:
    import torch

    calls: Dict[str, Callable] = {}
    if _available(run, NATIVE):
        native_request = _native_call(folder, run.inputs)
        native_infer = native_request.request.infer
        calls[NATIVE] = lambda: native_infer(share_outputs=True)  # outputs not copied: the limit
    calls[OURS_PY] = _et_call(ptes["ours"], run.inputs)
    for variant, key in ((XNNPACK, "xnnpack"), (KERNELS, "kernels"), (ET_OV, "et_openvino")):
        if _available(run, variant) and key in ptes:
            try:
                calls[variant] = _et_call(ptes[key], run.inputs)
                calls[variant]()
            except Exception as error:
                calls.pop(variant, None)
                run.results[variant] = Result(note=f"does not run: {type(error).__name__}: {error}"[:200])

    # parity: ours against eager and against native
    ours_out = calls[OURS_PY]()[0]
    eager = run.eager[0] if isinstance(run.eager, (tuple, list)) else run.eager
    scale = max(1.0, eager.abs().max().item())
    parity = f"max|ours-eager| {(ours_out - eager).abs().max().item() / scale:.1e} (relative)"
    if NATIVE in calls:
        calls[NATIVE]()
        native_out = torch.from_numpy(native_request.get_output_tensor(0).data.copy())
        if native_out.shape == ours_out.shape:
            parity += f", max|ours-native| {(ours_out - native_out).abs().max().item():.1e}"
    run.parity = parity

    # warm-up and per-call estimate
    estimate = {}
    for variant, call in calls.items():
        times = time_calls(call, 1, 0)
        if times[0] < 200:  # slow variants (ExecuTorch's plain kernels on a CNN: seconds) get one call
            times = time_calls(call, 3, 2)
        estimate[variant] = statistics.median(times) / 1e3
    estimate[OURS_CPP] = estimate[OURS_PY]
    order = [v for v in VARIANTS if v in calls or v == OURS_CPP]
    per_round = {}
    for variant in order:
        affordable = int(budget_s / (rounds * max(estimate[variant], 1e-6)))
        per_round[variant] = max(1, min(math.ceil(iterations / rounds), affordable))
    results = {variant: Result() for variant in order}
    for variant in order:
        if variant != OURS_CPP and estimate[variant] > budget_s:
            # one call is over the whole budget: that call (made above) is its only sample
            results[variant].times, results[variant].samples = [estimate[variant] * 1e3], 1
            order = [v for v in order if v != variant]
    for r in range(rounds):
        shift = r % len(order)
        this_round = order[shift:] + order[:shift]
        if r % 2:
            this_round.reverse()
        for variant in this_round:
            n = per_round[variant]
            if variant == OURS_CPP:
                out = subprocess.run(runner_args(ptes["ours"], folder, max(n, 3), 2), capture_output=True,
                                     text=True, env=_child_env(cache))
                if out.returncode != 0:
                    raise RuntimeError(f"runner failed: {out.stderr.strip()[-500:]}")
                results[variant].times.append(_runner_value(out.stdout, "p50"))
                results[variant].p90s.append(_runner_value(out.stdout, "p90"))
                results[variant].samples += max(n, 3)
                continue
            call = calls[variant]
            if estimate[variant] < 0.05:
                call()  # one untimed call: the other variant's threads may still be spinning
            results[variant].times.extend(time_calls(call, n, 0))
            results[variant].samples += n
    for variant, result in results.items():
        if not result.times:
            continue
        run.results.setdefault(variant, Result())
        run.results[variant].times, run.results[variant].p90s = result.times, result.p90s
        run.results[variant].samples = result.samples
    calls.clear()


def measure_loads(run: ModelRun, folder: Path, ptes: dict, caches: Path) -> None:
    """Cold and warm loads of native and ours (Python and C++), one load each of the others; every
    load in its own process."""
    def record(variant, cold, warm=None):
        result = run.results.setdefault(variant, Result())
        result.load_cold_ms = cold["load_ms"]
        result.load_warm_ms = warm["load_ms"] if warm else None
        result.peak_kb = cold["peak_kb"]
        if "peak_load_kb" in cold and cold.get("reset"):
            result.load_extra_kb = cold["peak_load_kb"] - cold["rss_before_kb"]
        if "extra_with_import_kb" in cold:
            result.load_extra_with_import_kb = cold["extra_with_import_kb"]
            result.load_cold_with_import_ms = cold["load_with_import_ms"]
            result.load_warm_with_import_ms = warm["load_with_import_ms"]

    if _available(run, NATIVE):
        cache = caches / f"{run.name}-native"
        record(NATIVE, python_load("native", folder, None, cache), python_load("native", folder, None, cache))
    cache = caches / f"{run.name}-ours-py"
    record(OURS_PY, python_load("ours", folder, ptes["ours"], cache), python_load("ours", folder, ptes["ours"], cache))
    cache = caches / f"{run.name}-ours-cpp"
    record(OURS_CPP, runner_load(ptes["ours"], folder, cache), runner_load(ptes["ours"], folder, cache))
    for variant, key in ((XNNPACK, "xnnpack"), (KERNELS, "kernels"), (ET_OV, "et_openvino")):
        if key in ptes and _available(run, variant):
            record(variant, python_load("et", folder, ptes[key], None))


# --- output --------------------------------------------------------------------------------------------


def _fmt(value, spec=".3f", empty="–"):
    return empty if value is None else format(value, spec)


def _ratio(value, reference):
    if value is None or reference in (None, 0):
        return None
    return value / reference


def _mb(kb):
    return None if kb is None else kb / 1024


def header(started: float, load_before, load_after) -> List[str]:
    import openvino
    import torch

    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    try:
        import importlib.metadata as metadata

        executorch_version = metadata.version("executorch")
    except Exception:
        executorch_version = "?"
    ours_version = _our_version()
    return [
        f"# Benchmark zoo, {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}",
        "",
        f"- CPU: {cpu}, {os.cpu_count()} logical cores; load average {load_before:.2f} before, {load_after:.2f} after",
        f"- torch {torch.__version__}, executorch {executorch_version}, openvino {openvino.get_version()}, "
        f"executorch_openvino {ours_version}",
        f"- total time {time.perf_counter() - started:.0f} s",
    ]


def _our_version() -> str:
    try:
        import importlib.metadata as metadata

        return metadata.version("executorch-openvino")
    except Exception:
        pass
    text = (REPO / "pyproject.toml").read_text()
    found = re.search(r'^version\s*=\s*"([^"]+)"', text, re.M)
    version = found.group(1) if found else "?"
    try:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        if commit:
            version += f" (checkout {commit})"
    except OSError:
        pass
    return version


def report(runs: List[ModelRun], head: List[str], args) -> List[str]:
    lines = head + [f"- {args.rounds} interleaved rounds per model, up to {args.iterations} timed calls per variant "
                    f"(fewer when a variant is slow: at most {args.budget:.0f} s of calls per variant and model; "
                    "the `n` column)", ""]
    lines += ["## Summary (ratios to native OpenVINO; lower is better)", "",
              "| model | ours-py p50 | ours-cpp p50 | xnnpack p50 | et-kernels p50 | ours-py faster than xnnpack | "
              "warm load ours/native | load memory ours/native | same, native counting `import openvino` |",
              "| --- | ---: | ---: | ---: | ---: | :---: | ---: | ---: | ---: |"]
    for run in runs:
        if run.error:
            lines.append(f"| {run.name} | failed: {run.error[:120]} | | | | | | | |")
            continue
        res = run.results
        native = res.get(NATIVE, Result())
        cells = [_fmt(_ratio(res.get(v, Result()).p50, native.p50), ".3f") + ("×" if _ratio(res.get(v, Result()).p50, native.p50) else "")
                 for v in (OURS_PY, OURS_CPP, XNNPACK, KERNELS)]
        ours, xnn = res.get(OURS_PY, Result()).p50, res.get(XNNPACK, Result()).p50
        faster = "–" if ours is None or xnn is None else ("yes" if ours < xnn else "no")
        warm = _ratio(res.get(OURS_PY, Result()).load_warm_ms, native.load_warm_ms)
        memory = _ratio(res.get(OURS_PY, Result()).load_extra_kb, native.load_extra_kb)
        memory_import = _ratio(res.get(OURS_PY, Result()).load_extra_kb, native.load_extra_with_import_kb)
        lines.append(f"| {run.name} | " + " | ".join(cells) + f" | {faster} | {_fmt(warm, '.2f')} | {_fmt(memory, '.2f')} "
                     f"| {_fmt(memory_import, '.2f')} |")
    lines += ["", "## Every variant", "",
              "| model | variant | p50 ms | p90 ms | per s | p50 / native | n | load cold ms | load warm ms | "
              "load mem +MB | peak RSS MB |",
              "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for run in runs:
        if run.error:
            continue
        native = run.results.get(NATIVE, Result())
        for variant in VARIANTS:
            result = run.results.get(variant)
            if result is None:
                continue
            if result.note:
                lines.append(f"| {run.name} | {variant} | n/a: {result.note} | | | | | | | | |")
                continue
            per_s = None if not result.p50 else 1e3 / result.p50
            ratio = _ratio(result.p50, native.p50)
            lines.append(
                f"| {run.name} | {variant} | {_fmt(result.p50)} | {_fmt(result.p90)} | {_fmt(per_s, '.0f')} | "
                f"{_fmt(ratio, '.3f')} | {result.samples} | {_fmt(result.load_cold_ms, '.1f')} | "
                f"{_fmt(result.load_warm_ms, '.1f')} | {_fmt(_mb(result.load_extra_kb), '.1f')} | "
                f"{_fmt(_mb(result.peak_kb), '.0f')} |")
    lines += ["", "## Models", ""]
    for run in runs:
        native = run.results.get(NATIVE, Result())
        counted = ""
        if native.load_cold_with_import_ms is not None:
            counted = (f"; native counting `import openvino`: load {native.load_cold_with_import_ms:.1f} ms cold, "
                       f"{native.load_warm_with_import_ms:.1f} ms warm, +{_mb(native.load_extra_with_import_kb):.1f} MB")
        lines.append(f"- **{run.name}**: {run.description}; delegated {run.delegated or '?'}; {run.parity}{counted}")
    lines += ["", "## Targets", ""] + targets(runs) + ["", "## How to read it", "",
              "- Variants: " + "; ".join(f"`{k}` {v}" for k, v in DESCRIPTIONS.items()) + ".",
              "- p50/p90 are over every timed call of all rounds. `ours-cpp` runs the runner once per round "
              "(its own warm-up of 2 calls); its p50/p90 are the medians of the runner's per-round p50/p90.",
              "- Python rows (native, ours-py, xnnpack, et-kernels) include the Python call; ours-py also wraps "
              "inputs and copies outputs in executorch.runtime, native does neither (inputs set once).",
              "- Load: program + method load (native: Core creation, read_model from memory, compile_model, "
              "infer request). Cold = empty model cache, in a new process (it fills the cache); warm = a "
              "second new process with the cache filled (ours: EXECUTORCH_OPENVINO_CACHE_DIR; native: "
              "CACHE_DIR). ours-py's load also opens the OpenVINO runtime library (the delegate does so at "
              "the first load); native had it opened by `import openvino` before the clock started. "
              "XNNPACK and et-kernels have no cache: one load.",
              "- load mem +MB: VmHWM right after the cold load minus RSS just before it (VmHWM reset first), "
              "i.e. what loading adds. peak RSS MB: the process's peak over imports, load and 4 runs "
              "(Python children: torch + executorch.runtime are imported for every ExecuTorch variant, "
              "only openvino + numpy for native; ours-cpp: the runner process, measured by /usr/bin/time).",
              "- Compare numbers within this run only; two vCPUs make OpenVINO's two-thread inference noisy."]
    return lines


def targets(runs: List[ModelRun]) -> List[str]:
    ok = [run for run in runs if not run.error]
    lines = []

    def worst(variant, attribute, reference_attribute=None):
        ratios = []
        for run in ok:
            native = run.results.get(NATIVE, Result())
            value = getattr(run.results.get(variant, Result()), attribute)
            ratios.append((run.name, _ratio(value, getattr(native, reference_attribute or attribute))))
        return [(name, r) for name, r in ratios if r is not None]

    for variant in (OURS_PY, OURS_CPP):
        ratios = worst(variant, "p50")
        missed = [f"{name} {r:.3f}×" for name, r in ratios if r > 1.02]
        lines.append(f"- p50 ≤ 1.02× native on every model ({variant}): "
                     + ("**met**" if ratios and not missed else f"**missed** on {', '.join(missed) or 'no data'}"))
    compared = [(run.name, run.results[OURS_PY].p50 < run.results[XNNPACK].p50) for run in ok
                if run.results.get(OURS_PY, Result()).p50 and run.results.get(XNNPACK, Result()).p50]
    faster = sum(1 for _, f in compared if f)
    share = faster / len(compared) if compared else 0
    lines.append(f"- faster than XNNPACK on ≥ 80 % of the zoo (ours-py): {faster}/{len(compared)} = {100 * share:.0f} % "
                 + ("**met**" if share >= 0.8 else "**missed**")
                 + (f" (slower on {', '.join(n for n, f in compared if not f)})" if faster < len(compared) else ""))
    for variant in (OURS_PY, OURS_CPP):
        ratios = worst(variant, "load_warm_ms")
        missed = [f"{name} {r:.2f}×" for name, r in ratios if r > 1.1]
        lines.append(f"- warm-cache load ≤ 1.1× native's warm load ({variant}): "
                     + ("**met**" if ratios and not missed else f"**missed** on {', '.join(missed) or 'no data'}"))
    ratios = worst(OURS_PY, "load_extra_kb")
    missed = [f"{name} {r:.2f}×" for name, r in ratios if r > 1.2]
    lines.append("- memory added by the load ≤ 1.2× native's (ours-py): "
                 + ("**met**" if ratios and not missed else f"**missed** on {', '.join(missed) or 'no data'}"))
    return lines


def plot(runs: List[ModelRun], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [v for v in VARIANTS if v != NATIVE]
    ok = [run for run in runs if not run.error and run.results.get(NATIVE, Result()).p50]
    figure, axes = plt.subplots(figsize=(max(7, 1.3 * len(ok) + 2), 4.5))
    width = 0.8 / len(shown)
    colours = {OURS_PY: "#1f77b4", OURS_CPP: "#2ca02c", XNNPACK: "#ff7f0e", KERNELS: "#9467bd", ET_OV: "#8c564b"}
    for k, variant in enumerate(shown):
        xs, ys = [], []
        for i, run in enumerate(ok):
            ratio = _ratio(run.results.get(variant, Result()).p50, run.results[NATIVE].p50)
            if ratio is not None:
                xs.append(i + (k - (len(shown) - 1) / 2) * width)
                ys.append(ratio)
        if xs:
            axes.bar(xs, ys, width, label=variant, color=colours[variant])
    axes.axhline(1.0, color="black", linewidth=0.8)
    axes.axhline(1.02, color="red", linewidth=0.8, linestyle="--", label="1.02× target")
    axes.set_yscale("log")
    axes.set_xticks(range(len(ok)))
    axes.set_xticklabels([run.name for run in ok], rotation=20)
    axes.set_ylabel("p50 latency / native OpenVINO p50 (log)")
    axes.set_title(title, fontsize=10)
    axes.legend(fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


# --- main ------------------------------------------------------------------------------------------------


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", help="comma-separated model names (default: all): " + ", ".join(ZOO_NAMES))
    parser.add_argument("--iterations", "-n", type=int, help="timed calls per variant and model (default 60; --quick 8)")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 5; --quick 2)")
    parser.add_argument("--budget", type=float, help="at most this many seconds of timed calls per variant and "
                        "model (default 3; --quick 0.5)")
    parser.add_argument("--quick", action="store_true", help="few iterations, for a smoke run")
    parser.add_argument("--results-dir", type=Path, default=BENCH / "results", help="where the .md and .png go")
    parser.add_argument("--child", choices=["native", "ours", "et"], help=argparse.SUPPRESS)
    parser.add_argument("--child-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--child-pte", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--child-cache", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.iterations = args.iterations or (8 if args.quick else 60)
    args.rounds = args.rounds or (2 if args.quick else 5)
    args.budget = args.budget or (0.5 if args.quick else 3.0)
    if args.iterations < 1 or args.rounds < 1 or args.budget <= 0:
        parser.error("--iterations and --rounds must be at least 1, --budget positive")
    return args


ZOO_NAMES = ["tiny", "mlp", "mobilenet_v2", "resnet18", "transformer", "segmentation", "lstm", "embedding"]


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.child:
        return child_main(args.child, args.child_dir, args.child_pte, args.child_cache)

    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    warnings.filterwarnings("ignore")
    sys.path.insert(0, str(REPO / "python"))
    sys.path.insert(0, str(BENCH))
    global step, time_calls, percentile, say
    import executorch_openvino  # noqa: F401  (loads the delegate)
    from executorch_openvino.cli._common import percentile, say, step, time_calls  # noqa: F401
    from zoo_models import ZOO, ZOO_BY_NAME

    names = [name.strip() for name in args.models.split(",")] if args.models else [m.name for m in ZOO]
    unknown = [name for name in names if name not in ZOO_BY_NAME]
    if unknown:
        print(f"unknown model(s): {', '.join(unknown)}; the zoo has {', '.join(ZOO_BY_NAME)}", file=sys.stderr)
        return 2
    if not RUNNER.is_file():
        print(f"{RUNNER} does not exist: build first (make build)", file=sys.stderr)
        return 1
    et_openvino = _et_openvino_partitioner()
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
                ptes = prepare(entry, folder, run, et_openvino)
                say(f"  delegated {run.delegated}")
                with step("  load times and memory (one process per load)"):
                    measure_loads(run, folder, ptes, work / "caches")
                with step(f"  latency, {args.rounds} interleaved rounds"):
                    measure_latency(run, folder, ptes, args.iterations, args.rounds, args.budget,
                                    work / "caches" / f"{name}-ours-cpp")
                native = run.results.get(NATIVE, Result()).p50
                say("  " + ", ".join(f"{v} {r.p50:.3f} ms" for v, r in run.results.items() if r.p50)
                    + (f" (native {native:.3f} ms)" if native else ""))
            except Exception as error:
                run.error = f"{type(error).__name__}: {error}".replace("\n", " ")
                say(f"  failed: {run.error[:500]}")
            finally:
                for attribute in ("inputs", "eager"):
                    run.__dict__.pop(attribute, None)
                shutil.rmtree(folder, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    stamp = datetime.date.today().isoformat()
    lines = report(runs, header(started, load_before, os.getloadavg()[0]), args)
    text = "\n".join(lines) + "\n"
    say()
    say(text)
    args.results_dir.mkdir(parents=True, exist_ok=True)
    markdown = args.results_dir / f"zoo-{stamp}.md"
    markdown.write_text(text)
    picture = args.results_dir / f"zoo-{stamp}.png"
    plot(runs, picture, f"p50 latency relative to native OpenVINO, {stamp}")
    say(f"wrote {markdown} and {picture}")
    return 1 if any(run.error for run in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
