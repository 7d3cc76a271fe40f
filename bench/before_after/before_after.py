"""Before and after: each optimisation of the delegate (issue 6) measured against the code, or the
setting, without it; the two sides alternate within one run. Writes
bench/results/before-after-<date>.md.

  .venv/bin/python bench/before_after/before_after.py --recheck-before BUILD --defaults-before BUILD
                                         --release-before BUILD [--after BUILD] [--quick]
  .venv/bin/python bench/before_after/before_after.py --build-befores DIR [--after BUILD] [--quick]

A BUILD is a CMake build folder inside a checkout (the folder's parent): `make build` there, or cmake
with -DEXECUTORCH_OPENVINO_BUILD_TESTS=OFF. --build-befores DIR writes each "before" commit's files
into DIR/before-<commit> (git archive: the repository itself is not touched) and builds them there,
once; later runs reuse them. --after defaults to EXECUTORCH_OPENVINO_BUILD, else build/.

What is compared, and what "before" is:
  1. Skipping the re-check of a tensor identical to last call's (35a89c9): a build of its parent
     81cdd51, each build's own bench_delegate_overhead on the tiny model, runs alternating.
  2. Re-binding only what changed (the binding cache; in the delegate since its first commit, so no
     commit without it): native OpenVINO wrapping and setting new tensors on every call, as a delegate
     without the cache does (ExecuTorch's own does), against ours and native, in bench_zoo_cpp.
  3. PERFORMANCE_HINT=LATENCY by default (9f0be18): the runner of 06229bb (its parent) against ours;
     and the setting itself: ours lowered with PERFORMANCE_HINT=THROUGHPUT against the default.
  4. The model cache from EXECUTORCH_OPENVINO_CACHE_DIR (9f0be18): the runner of 06229bb (which
     ignores the variable) against ours, a cold then a warm load each; and ours without the variable.
  5. ExecuTorch's blob released as soon as the IR is read, before compiling, so that it and the
     delegate's own copy of the weights are not both held while OpenVINO compiles (eda4130): the
     runner of its parent 9f2186c against ours, peak resident memory and load time. Why a copy is
     kept at all is tested by overwriting native's after compiling (or importing).
  6. One shared core (first commit): what another core costs (creating it, listing its devices), which
     a delegate that creates a core per model (ExecuTorch's own) pays per load.
  7. The steady-state fast path of execute (dd2528c): a build of its parent 0e70791, as in 1.
  8. The delegate's own model cache (0e70791): a build of its parent efc1273, which handed
     CACHE_DIR to OpenVINO (a warm load read the IR and let OpenVINO hash it), as in 4.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common
from common import git, machine, paths, processes, reports  # noqa: E402
from common.reports import say, table_head  # noqa: E402
from common.rounds import alternating  # noqa: E402

paths.on_path(paths.BENCH / "zoo")  # the zoo's models, its model folders and its C++ side
from zoo_cpp_side import CppServer, child_environment, cpp_export, cpp_load  # noqa: E402
from zoo_results import ModelRun  # noqa: E402

RECHECK = ("81cdd51", "35a89c9")   # before, after: skip re-checking an identical tensor
DEFAULTS = ("06229bb", "9f0be18")  # before, after: LATENCY hint default and the model cache
RELEASE = ("9f2186c", "eda4130")   # before, after: ExecuTorch's blob released before compiling
FAST_PATH = ("0e70791", "dd2528c")  # before, after: execute's steady-state fast path
FILE_CACHE = ("efc1273", "0e70791")  # before, after: our own model cache instead of OpenVINO's CACHE_DIR


COMMIT_FILE = ".bench-commit"  # in a checkout written by --build-befores: the commit it holds


class Build:
    """A build folder and the checkout it was built from."""

    def __init__(self, folder: Path):
        self.folder = folder.resolve()
        self.checkout = self.folder.parent
        marker = self.checkout / COMMIT_FILE
        if marker.is_file():
            self.commit, dirty = marker.read_text().strip(), False
        else:
            self.commit = git.short_commit(self.checkout) or "?"
            dirty = git.has_local_changes(self.checkout, "src")
        self.label = self.commit + (" + local changes to src/" if dirty else "")

    def _built(self, path: Path) -> Path:
        if not path.is_file():
            raise FileNotFoundError(f"{path} is missing: build {self.checkout} first")
        return path

    @property
    def overhead_bench(self) -> Path:
        return self._built(paths.bench_binary("bench_delegate_overhead", self.folder))

    @property
    def zoo_bench(self) -> Path:
        return self._built(paths.bench_binary("bench_zoo_cpp", self.folder))

    @property
    def runner(self) -> Path:
        return self._built(paths.built_runner(self.folder))

    @property
    def bench_models_script(self) -> Path:
        """The checkout's own make_bench_models.py: bench/overhead/ since the benchmarks have a folder
        each, bench/ in the "before" commits."""
        grouped = self.checkout / "bench" / "overhead" / "make_bench_models.py"
        return grouped if grouped.is_file() else self.checkout / "bench" / "make_bench_models.py"


def build_commit(directory: Path, commit: str) -> Build:
    """`commit`'s files under `directory` (git archive), built with the tests off; reused when present."""
    checkout = directory / f"before-{commit}"
    if not (checkout / COMMIT_FILE).is_file():
        shutil.rmtree(checkout, ignore_errors=True)
        git.extract(commit, checkout)
        (checkout / COMMIT_FILE).write_text(commit + "\n")
    venv = Path(sys.executable).parent
    build = checkout / "build"
    if not paths.bench_binary("bench_delegate_overhead", build).is_file():
        say(f"building {commit} in {build} (a few minutes)")
        subprocess.run([str(venv / "cmake"), "-S", str(checkout), "-B", str(build), "-G", "Ninja",
                        f"-DCMAKE_MAKE_PROGRAM={venv / 'ninja'}", f"-DPython3_EXECUTABLE={sys.executable}",
                        "-DCMAKE_BUILD_TYPE=Release", "-DEXECUTORCH_OPENVINO_BUILD_TESTS=OFF"],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run([str(venv / "cmake"), "--build", str(build), "-j", "2"], check=True, stdout=subprocess.DEVNULL)
    return Build(build)


# --- 1. per-call overhead: each build's own bench_delegate_overhead --------------------------------------


OVERHEAD_ROW = re.compile(r"^\| bench_tiny \| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| "
                          r"([+-][\d.]+) \| [^|]+\| ([+-][\d.]+) \[([+-][\d.]+), ([+-][\d.]+)\]")


def overhead_run(build: Build, cases: Path, seconds: float, rounds: int) -> dict:
    done = subprocess.run([str(build.overhead_bench), "--cases", str(cases), "--models", "tiny",
                           "--seconds", str(seconds), "--rounds", str(rounds)], capture_output=True, text=True)
    row = next((OVERHEAD_ROW.match(line) for line in done.stdout.splitlines() if OVERHEAD_ROW.match(line)), None)
    if done.returncode != 0 or row is None:
        raise RuntimeError(f"{build.overhead_bench} failed: {done.stderr.strip()[-500:]}")
    return {"native_us": float(row[2]), "delegate_us": float(row[4]), "added_us": float(row[7]),
            "paired_added_us": float(row[8]), "low": float(row[9]), "high": float(row[10])}


def per_call_overhead(before: Build, after: Build, work: Path, pairs: int, seconds: float,
                      title: str = f"1. Skipping the re-check of an unchanged tensor ({RECHECK[1]})",
                      after_commit: str = RECHECK[1]) -> List[str]:
    cases = {}
    for build in (before, after):
        # Each checkout writes its own cases: the container format may differ between them.
        cases[build] = work / f"cases-{build.commit}"
        processes.run_python(build.bench_models_script, cases[build], check=True)
    figures: Dict[Build, List[dict]] = {before: [], after: []}
    for i in range(pairs):
        for build in alternating((before, after), i):
            figures[build].append(overhead_run(build, cases[build], seconds, 20))
    lines = [f"## {title}", "",
             f"Each build's own bench_delegate_overhead on the tiny model (add of two [1,16] tensors), {pairs} runs "
             f"each of {seconds:g} s, alternating. Added = delegate median − native median within one run (µs per "
             "call); per-round: the same within each round, median over rounds [95% CI].", "",
             *table_head(["build", "runs", "native median µs", "delegate median µs", "added µs (median of runs)",
                          "per-round added µs, each run"], "lrrrrl")]
    for build, label in ((before, f"before ({before.label}, parent of {after_commit})"), (after, f"after ({after.label})")):
        runs = figures[build]
        lines.append(f"| {label} | {len(runs)} | {statistics.median(r['native_us'] for r in runs):.2f} | "
                     f"{statistics.median(r['delegate_us'] for r in runs):.2f} | "
                     f"{statistics.median(r['added_us'] for r in runs):+.2f} | "
                     + ", ".join(f"{r['paired_added_us']:+.2f} [{r['low']:+.2f}, {r['high']:+.2f}]" for r in runs) + " |")
    return lines


# --- model folders (bench_zoo_cpp's format) ---------------------------------------------------------------


def prepare_models(names: List[str], work: Path, extra_ours: Dict[str, Dict[str, str]]) -> Dict[str, Path]:
    import zoo_prepare
    from zoo_models import ZOO_BY_NAME

    def quiet(_what):  # prepare()'s step(): nothing printed per lowering
        return contextlib.nullcontext()

    folders = {}
    for name in names:
        folder = work / name
        run = ModelRun(name, ZOO_BY_NAME[name].description)
        say(f"  preparing {name}")
        zoo_prepare.prepare(ZOO_BY_NAME[name], folder, run, "not used", quiet, ours_only=True, extra_ours=extra_ours)
        folders[name] = folder
    return folders


# --- 2. the binding cache -----------------------------------------------------------------------------------


def binding_cache(after: Build, folders: Dict[str, Path], rounds: int, calls: int) -> List[str]:
    lines = ["## 2. Re-binding only what changed (the binding cache)", "",
             "In the delegate since its first commit, so there is no build without it. Its \"before\" is what a "
             "delegate without it does on every call, and what ExecuTorch's own OpenVINO delegate does: wrap "
             "every input and output in a new OpenVINO tensor and set it, then infer (`native-rebind`: native "
             "OpenVINO from C++ doing exactly that). All three in one bench_zoo_cpp process, "
             f"{rounds} rounds of up to {calls} calls (about 0.2 s) per variant, interleaved. Allocations: heap "
             "allocations per call on the "
             "calling thread (malloc and relatives replaced in bench_zoo_cpp).", "",
             *table_head(["model", "native p50 µs", "ours p50 µs", "native-rebind p50 µs", "ours − native µs",
                          "native-rebind − native µs", "allocations per call: native / ours / native-rebind"],
                         "lrrrrrr")]
    for name, folder in folders.items():
        server = CppServer(after.zoo_bench, folder, ["native", "ours", "native-rebind"])
        try:
            times = {v: [] for v in ("native", "ours", "native-rebind")}
            order = list(times)
            # Blocks of at most `calls` calls and about 0.2 s each, after a warm-up that sizes them.
            estimate = statistics.median(server.time("native", 5)) / 1e3
            block = max(3, min(calls, int(0.2 / max(estimate, 1e-7))))
            for r in range(rounds):
                for variant in alternating(order, r):
                    times[variant] += server.time(variant, block + 1)[1:]
            allocations = {v: server.allocations(v, 200) for v in times}
        finally:
            server.close()
        p50 = {v: statistics.median(t) * 1e3 for v, t in times.items()}
        per_call = {v: a["this_thread"] / a["calls"] for v, a in allocations.items()}
        lines.append(f"| {name} | {p50['native']:.2f} | {p50['ours']:.2f} | {p50['native-rebind']:.2f} | "
                     f"{p50['ours'] - p50['native']:+.2f} | {p50['native-rebind'] - p50['native']:+.2f} | "
                     f"{per_call['native']:.1f} / {per_call['ours']:.1f} / {per_call['native-rebind']:.1f} |")
    return lines


# --- 3 and 4. runners: the LATENCY default and the model cache ------------------------------------------------


def runner_run(build: Build, pte: Path, inputs: List[Path], iterations: int, cache: Optional[Path]) -> dict:
    """One executorch-openvino-run process: load time, p50/p90, its peak RSS (/usr/bin/time) and
    its output against eager PyTorch's (output0.npy beside the program), which shows the precision
    it ran in."""
    import numpy as np

    with tempfile.NamedTemporaryFile("r") as peak, tempfile.TemporaryDirectory() as outputs:
        command = ["/usr/bin/time", "-f", "%M", "-o", peak.name, str(build.runner), str(pte),
                   "--iterations", str(iterations), "--warmup", "2", "--output-dir", outputs]
        for path in inputs:
            command += ["--input", str(path)]
        done = subprocess.run(command, capture_output=True, text=True, env=child_environment(cache))
        if done.returncode != 0:
            raise RuntimeError(f"{build.runner} failed: {done.stderr.strip()[-500:]}")
        peak_kb = int(Path(peak.name).read_text().split()[-1])
        out = np.load(Path(outputs) / "output0.npy").astype(np.float64)
    eager = np.load(pte.parent / "output0.npy").astype(np.float64)

    def value(label):
        return float(re.search(rf"{label}:\s+([0-9.]+) ms", done.stdout).group(1))

    return {"load_ms": value("load time"), "p50_ms": value("p50"), "p90_ms": value("p90"), "peak_kb": peak_kb,
            "vs_eager": float(np.max(np.abs(out - eager)))}


def _inputs(folder: Path) -> List[Path]:
    return sorted(folder.glob("input*.npy"), key=lambda p: int(p.stem[5:]))


def latency_hint(before: Build, after: Build, folders: Dict[str, Path], repeats: int, iterations: int) -> List[str]:
    import openvino as ov

    default = ov.Core().get_property("CPU", "PERFORMANCE_HINT")
    lines = ["## 3. PERFORMANCE_HINT=LATENCY by default (9f0be18)", "",
             f"OpenVINO {ov.get_version()}'s own default for CPU is {default}, so on this CPU the commit changes "
             "nothing, as the first two rows of each model show; it matters for devices and releases whose default is not LATENCY. "
             "The third row is the setting itself: ours lowered with PERFORMANCE_HINT=THROUGHPUT (what the hint "
             "would be without a default on such a device) against the default. The programs are lowered with "
             "INFERENCE_PRECISION_HINT=f32 in their compile specs: older libraries took f32 from there (where the "
             "partitioner put it then) and add no f32 default at load, so with today's programs they would infer in "
             "bf16 on this CPU (the last column shows the precision each ran in). executorch-openvino-run, one "
             f"process per run, {repeats} runs each alternating, {iterations} timed calls per run; medians over runs.",
             "", *table_head(["model", "program", "runner", "load ms", "p50 ms", "p90 ms", "peak RSS MB",
                              "max abs(out − eager)"], "lllrrrrr")]
    for name, folder in folders.items():
        cases = [("ours_f32.pte", before, f"before ({before.label})"), ("ours_f32.pte", after, f"after ({after.label})"),
                 ("ours_throughput.pte", after, f"after ({after.label})")]
        figures: Dict[int, List[dict]] = {i: [] for i in range(len(cases))}
        for r in range(repeats):
            for i in alternating(range(len(cases)), r):
                pte, build, _ = cases[i]
                figures[i].append(runner_run(build, folder / pte, _inputs(folder), iterations, None))
        for i, (pte, build, label) in enumerate(cases):
            runs = figures[i]
            hint = "THROUGHPUT" if "throughput" in pte else "default (LATENCY after, none before)"
            lines.append(f"| {name} | {pte} ({hint}) | {label} | {statistics.median(r['load_ms'] for r in runs):.1f} | "
                         f"{statistics.median(r['p50_ms'] for r in runs):.3f} | "
                         f"{statistics.median(r['p90_ms'] for r in runs):.3f} | "
                         f"{statistics.median(r['peak_kb'] for r in runs) / 1024:.0f} | "
                         f"{max(r['vs_eager'] for r in runs):.1e} |")
    return lines


def _cold_then_warm(cases, folders: Dict[str, Path], work: Path, repeats: int) -> List[str]:
    """Rows of a cold load (empty cache folder) then a warm one, per model and case (build, use_cache, label)."""
    rows = []
    for name, folder in folders.items():
        figures: Dict[int, List[Tuple[dict, dict]]] = {i: [] for i in range(len(cases))}
        for r in range(repeats):
            for i in alternating(range(len(cases)), r):
                build, use_cache, _ = cases[i]
                cache = work / f"cache-{name}-{i}-{r}"
                shutil.rmtree(cache, ignore_errors=True)
                cache.mkdir(parents=True)
                first = runner_run(build, folder / "ours_f32.pte", _inputs(folder), 3, cache if use_cache else None)
                second = runner_run(build, folder / "ours_f32.pte", _inputs(folder), 3, cache if use_cache else None)
                figures[i].append((first, second))
        for i, (build, use_cache, label) in enumerate(cases):
            cold = statistics.median(f[0]["load_ms"] for f in figures[i])
            warm = statistics.median(f[1]["load_ms"] for f in figures[i])
            peaks = (statistics.median(f[0]["peak_kb"] for f in figures[i]) / 1024,
                     statistics.median(f[1]["peak_kb"] for f in figures[i]) / 1024)
            rows.append(f"| {name} | {label} | {'set' if use_cache else 'unset'} | {cold:.1f} | {warm:.1f} | "
                        f"{warm / cold:.2f} | {peaks[0]:.0f} / {peaks[1]:.0f} | "
                        f"{max(f[1]['vs_eager'] for f in figures[i]):.1e} |")
    return rows


_COLD_WARM_HEADER = table_head(["model", "build", "cache", "cold load ms", "warm load ms", "warm / cold",
                                "peak RSS MB cold / warm", "max abs(out − eager), warm"], "lllrrrrr")


def model_cache(before: Build, after: Build, folders: Dict[str, Path], work: Path, repeats: int) -> List[str]:
    lines = ["## 4. The model cache (EXECUTORCH_OPENVINO_CACHE_DIR, 9f0be18)", "",
             "executorch-openvino-run loading ours_f32.pte (f32 in its compile specs, as in 3): with the variable "
             "set to an empty folder (cold: OpenVINO "
             "compiles and fills it), then again (warm: OpenVINO imports the compiled model); the build before the "
             "commit ignores the variable, so its second load compiles again. Also the current build without the "
             f"variable. {repeats} repeats alternating, medians; load = program + method load as the runner prints.",
             ""] + _COLD_WARM_HEADER
    cases = [(before, True, f"before ({before.label})"), (after, True, f"after ({after.label})"),
             (after, False, f"after ({after.label})")]
    return lines + _cold_then_warm(cases, folders, work, repeats)


def file_cache(before: Build, after: Build, folders: Dict[str, Path], work: Path, repeats: int) -> List[str]:
    lines = [f"## 8. The delegate's own model cache ({FILE_CACHE[1]})", "",
             f"As in 4, both builds with the variable set. Before ({FILE_CACHE[0]}) the folder went to OpenVINO as "
             "CACHE_DIR: a warm load read the IR and OpenVINO hashed the whole model to find its file. After, the "
             "delegate looks its file up by the key it computes anyway and imports it; the IR is not read. "
             f"{repeats} repeats alternating, medians.", ""] + _COLD_WARM_HEADER
    cases = [(before, True, f"before ({before.label}, parent of {FILE_CACHE[1]})"), (after, True, f"after ({after.label})")]
    return lines + _cold_then_warm(cases, folders, work, repeats)


# --- 5 and 6. the blob, the shared core ------------------------------------------------------------------------


def blob_and_core(before: Build, after: Build, folders: Dict[str, Path], repeats: int) -> List[str]:
    tool = after.zoo_bench
    lines = ["## 5. ExecuTorch's blob released before compiling (eda4130)", "",
             "The delegate copies what OpenVINO keeps reading (the weights) into memory the compiled model owns. "
             f"Before {RELEASE[1]} it released ExecuTorch's copy of the blob after compiling, so both were held "
             "while OpenVINO compiled; since, it releases it as soon as the IR is read. executorch-openvino-run "
             f"loading ours_f32.pte (no model cache), {repeats} runs each alternating, medians; peak RSS of the whole "
             "process (/usr/bin/time); ours_f32.pte as in 3.", "",
             *table_head(["model", "build", "load ms", "peak RSS MB", "max abs(out − eager)"], "llrrr")]
    for name, folder in folders.items():
        figures: Dict[Build, List[dict]] = {before: [], after: []}
        for r in range(repeats):
            for build in alternating((before, after), r):
                figures[build].append(runner_run(build, folder / "ours_f32.pte", _inputs(folder), 3, None))
        for build, label in ((before, f"before ({before.label}, parent of {RELEASE[1]})"), (after, f"after ({after.label})")):
            lines.append(f"| {name} | {label} | {statistics.median(f['load_ms'] for f in figures[build]):.1f} | "
                         f"{statistics.median(f['peak_kb'] for f in figures[build]) / 1024:.0f} | "
                         f"{max(f['vs_eager'] for f in figures[build]):.1e} |")
    lines += ["", "Why a copy is kept at all: native OpenVINO from C++ compiles (or imports) from memory, then its copy "
              "of the model's bytes is overwritten with 0xFF before the first inference. Outputs that stayed equal "
              "to eager PyTorch's would mean the bytes could be freed; they change, so OpenVINO 2026.4's CPU plugin "
              "still reads them after compiling (freeing them instead crashes, which is what ExecuTorch's own "
              "OpenVINO delegate does to an imported model's buffer). With it, ours against native: each load in a "
              "fresh bench_zoo_cpp process, the runtime opened first, VmHWM right after the load.", "",
              *table_head(["model", "side", "max abs(out − eager), bytes intact", "the same after overwriting them",
                           "peak RSS at load MB", "added by the load MB"], "llrrrr")]
    core_rows = []
    for name, folder in folders.items():
        cpp_export(tool, folder, folder / "native.exported")
        for side in ("native", "native-import", "ours"):
            intact = cpp_load(tool, folder, side)
            scribbled = _scribbled(tool, folder, side) if side != "ours" else "–"
            lines.append(f"| {name} | {side} | {_diff(intact.get('vs_eager'))} | {scribbled} | "
                         f"{intact['peak_load_kb'] / 1024:.0f} | "
                         f"{(intact['peak_load_kb'] - intact['rss_before_kb']) / 1024:.1f} |")
            if side == "native":
                core_rows.append(f"| {name} | {intact['runtime_ms']:.1f} | {intact['core_ms']:.2f} | "
                                 f"{intact['devices_ms']:.1f} | {intact['load_ms']:.1f} |")
    lines += ["", "## 6. One shared core", "",
              "Every method shares the delegate's one OpenVINO core (since the first commit). What another core "
              "costs is what sharing saves per further model: creating a core and listing its devices (the "
              "delegate checks the requested device), measured in a fresh bench_zoo_cpp process before a native "
              "load (the runtime library's opening shown apart). ExecuTorch's own delegate creates a core in "
              "is_available() and another in init() for every delegated partition.", "",
              *table_head(["model", "opening the runtime ms", "creating a core ms", "listing devices ms",
                           "the model's load ms"], "lrrrr")] + core_rows
    return lines


def _scribbled(tool: Path, folder: Path, side: str) -> str:
    """max |out - eager| after native's copy of the model's bytes was overwritten, as text."""
    done = subprocess.run([str(tool), "load", str(folder), "--side", side, "--preopen", "--runs", "1",
                           "--scribble-model-bytes"], capture_output=True, text=True)
    if done.returncode != 0:
        return f"fails (exit {done.returncode})"
    figure = processes.last_json(done.stdout)
    return _diff(figure.get("vs_eager"))


def _diff(value) -> str:
    # bench_zoo_cpp prints null for a NaN or infinite difference.
    return "NaN/inf: changed" if value is None else f"{value:.1e}"


# --- main ------------------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--after", type=Path, default=paths.BUILD)
    parser.add_argument("--recheck-before", type=Path, help=f"a build of {RECHECK[0]}")
    parser.add_argument("--defaults-before", type=Path, help=f"a build of {DEFAULTS[0]}")
    parser.add_argument("--release-before", type=Path, help=f"a build of {RELEASE[0]}")
    parser.add_argument("--fast-path-before", type=Path, help=f"a build of {FAST_PATH[0]}")
    parser.add_argument("--file-cache-before", type=Path, help=f"a build of {FILE_CACHE[0]}")
    parser.add_argument("--build-befores", type=Path, metavar="DIR",
                        help="write and build the 'before' commits under DIR (reused when there)")
    parser.add_argument("--quick", action="store_true", help="one model, few repeats")
    reports.add_results_dir(parser)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    warnings.filterwarnings("ignore")
    if args.build_befores:
        args.recheck_before = args.recheck_before or build_commit(args.build_befores, RECHECK[0]).folder
        args.defaults_before = args.defaults_before or build_commit(args.build_befores, DEFAULTS[0]).folder
        args.release_before = args.release_before or build_commit(args.build_befores, RELEASE[0]).folder
        args.fast_path_before = args.fast_path_before or build_commit(args.build_befores, FAST_PATH[0]).folder
        args.file_cache_before = args.file_cache_before or build_commit(args.build_befores, FILE_CACHE[0]).folder
    if None in (args.recheck_before, args.defaults_before, args.release_before, args.fast_path_before,
                args.file_cache_before):
        parser.error("give --recheck-before, --defaults-before, --release-before, --fast-path-before and "
                     "--file-cache-before, or --build-befores DIR")
    after, recheck, defaults = Build(args.after), Build(args.recheck_before), Build(args.defaults_before)
    release = Build(args.release_before)
    fast_path, file_cache_before = Build(args.fast_path_before), Build(args.file_cache_before)
    paths.use_built_library(after.folder)
    paths.on_path(paths.PYTHON)
    import executorch_openvino  # noqa: F401
    import openvino as ov

    load_before = machine.load_average()
    models = ["tiny", "resnet18"] if args.quick else ["tiny", "resnet18", "lstm"]
    work = Path(tempfile.mkdtemp(prefix="before-after-"))
    try:
        say("1. per-call overhead")
        body = per_call_overhead(recheck, after, work, 1 if args.quick else 4, 3.0 if args.quick else 8.0)
        say("model folders")
        folders = prepare_models(models, work, {
            "ours_f32": {"INFERENCE_PRECISION_HINT": "f32"},
            "ours_throughput": {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "THROUGHPUT"}})
        say("2. binding cache")
        body += [""] + binding_cache(after, folders, 4 if args.quick else 10, 200 if args.quick else 1000)
        heavy = {name: folder for name, folder in folders.items() if name != "tiny"}
        say("3. LATENCY default")
        body += [""] + latency_hint(defaults, after, heavy, 1 if args.quick else 3, 20 if args.quick else 60)
        say("4. model cache")
        body += [""] + model_cache(defaults, after, heavy, work, 1 if args.quick else 3)
        say("5, 6. blob and core")
        body += [""] + blob_and_core(release, after, heavy, 1 if args.quick else 3)
        say("7. execute's fast path")
        body += [""] + per_call_overhead(fast_path, after, work, 1 if args.quick else 4, 3.0 if args.quick else 8.0,
                                         f"7. The steady-state fast path of execute ({FAST_PATH[1]})", FAST_PATH[1])
        say("8. the delegate's own model cache")
        body += [""] + file_cache(file_cache_before, after, heavy, work, 1 if args.quick else 3)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    head = [f"# Before and after, {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}", "",
            f"- {machine.machine(load_before)}; OpenVINO {ov.get_version()}",
            f"- after: {after.label} ({after.folder}); before: {recheck.label} ({recheck.folder}), "
            f"{defaults.label} ({defaults.folder}), {release.label} ({release.folder}), {fast_path.label} "
            f"({fast_path.folder}) and {file_cache_before.label} ({file_cache_before.folder})",
            f"- {'quick' if args.quick else 'full'} run, {time.perf_counter() - started:.0f} s; how: bench/before_after/before_after.py",
            ""]
    text = "\n".join(head + body) + "\n"
    out = reports.print_and_save(text, reports.results_dir(args.results_dir), f"before-after-{reports.stamp()}.md")
    say(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
