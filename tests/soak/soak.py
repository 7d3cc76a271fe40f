"""Soak: load program -> execute -> destroy, many cycles in one process, watching for leaks.

Each cycle loads a .pte lowered to our delegate from its file through `executorch.runtime` (so
ExecuTorch's loader, our init() and OpenVINO's compile run every time), runs it once, checks the
output against eager PyTorch, drops every reference and runs Python's cycle collector, so the
method's destroy() has run by the end of the cycle. After every cycle it records the process's
resident memory (VmRSS, /proc/self/status) and its open file descriptors (/proc/self/fd). It also records
whether dropping the references alone freed the program (its file descriptor closed before the
collector ran): a reference cycle would keep a program, its compiled model and its file open until
Python's collector happens to run.

Pass: after the warm-up cycles (allocator pools, OpenVINO's caches and thread pools settle there),
resident memory grows by less than the limit (5 MB over 1,000 cycles after the first 50; other
cycle counts scale it by the number of measured cycles), the number of open file descriptors
never changes, and no compiled model stays alive in the delegate after a cycle (it shares them
per blob, so a model kept by mistake would be reused, not grow memory).

  .venv/bin/python tests/soak/soak.py [--cycles 1000] [--warmup 50] [--limit-mb 5]
                                      [--results-dir bench/results] [--json] [--keep-alive]

`make soak` runs it; it exits 1 when the soak fails. Without --json it writes bench/results/soak-<date>
.md, .json and, with matplotlib, .png (executorch_openvino.benchmark's result format). With --json it
prints the samples and the verdict instead (tests/python/runtime/test_soak.py runs 200 cycles in make
test). --keep-alive keeps every loaded method alive, a leak by construction, to show that the check
catches one. EXECUTORCH_OPENVINO_LIBRARY names the delegate library to load (default: build/'s).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
from executorch_openvino import benchmark  # noqa: E402
from executorch_openvino.benchmark.memory import rss_kb  # noqa: E402

REFERENCE_CYCLES = 1000  # the limit is stated for this many cycles ...
REFERENCE_WARMUP = 50  # ... after this many


@dataclass
class Sample:
    cycle: int  # 1-based
    rss_bytes: int
    open_fds: int
    seconds: float  # load + execute + destroy
    freed_by_del: bool  # the program's file was closed before the cycle collector ran
    live_models: int  # compiled models the delegate still holds after the cycle (-1: not reported)


@dataclass
class Verdict:
    warmup: int
    limit_bytes: int
    rss_after_warmup: int
    rss_final: int
    growth_bytes: int  # final minus end of warm-up
    max_growth_bytes: int  # the largest value after the warm-up minus end of warm-up
    fds_after_warmup: int
    fds_seen: list  # every distinct count after the warm-up
    live_models_seen: list  # every distinct count of compiled models alive after a cycle
    passed: bool


def resident_bytes() -> int:
    return rss_kb() * 1024


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def scaled_limit(limit_mb: float, cycles: int, warmup: int) -> int:
    """The limit for `cycles` with `warmup`: limit_mb per 950 measured cycles, scaled linearly."""
    measured = max(cycles - warmup, 1)
    return int(limit_mb * 1024 * 1024 * measured / (REFERENCE_CYCLES - REFERENCE_WARMUP))


def judge(samples: list[Sample], warmup: int, limit_bytes: int) -> Verdict:
    """Growth after the warm-up against the limit; file descriptors after the warm-up all equal."""
    if len(samples) <= warmup:
        raise ValueError(f"{len(samples)} cycles leave nothing to measure after a warm-up of {warmup}")
    base = samples[warmup - 1] if warmup > 0 else samples[0]
    after = samples[warmup:]
    growth = samples[-1].rss_bytes - base.rss_bytes
    max_growth = max(s.rss_bytes for s in after) - base.rss_bytes
    fds_seen = sorted({s.open_fds for s in after})
    live_models_seen = sorted({s.live_models for s in samples})
    passed = max_growth < limit_bytes and fds_seen == [base.open_fds] and set(live_models_seen) <= {0, -1}
    return Verdict(warmup, limit_bytes, base.rss_bytes, samples[-1].rss_bytes, growth, max_growth,
                   base.open_fds, fds_seen, live_models_seen, passed)


class SoakNet:
    """A small convolutional network with 0.2 MB of weights (a leaked blob or compiled model per
    cycle would be plain in the curve), fully delegated."""

    @staticmethod
    def make():
        import torch

        class Net(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.conv1 = torch.nn.Conv2d(3, 16, 3, padding=1)
                self.conv2 = torch.nn.Conv2d(16, 32, 3, padding=1)
                self.fc = torch.nn.Linear(32, 1000)

            def forward(self, x):
                y = torch.relu(self.conv2(torch.relu(self.conv1(x))))
                return self.fc(y.mean((2, 3)))

        torch.manual_seed(0)
        return Net().eval(), (torch.randn(1, 3, 32, 32),)


def lower_to_file(path: Path):
    """Exports SoakNet, lowers it to our delegate, writes the .pte; returns the inputs and the
    eager output."""
    import torch
    from executorch.exir import to_edge_transform_and_lower

    import executorch_openvino

    model, inputs = SoakNet.make()
    program = to_edge_transform_and_lower(torch.export.export(model, inputs),
                                          partitioner=[executorch_openvino.OpenvinoPartitioner()])
    path.write_bytes(program.to_executorch().buffer)
    with torch.no_grad():
        return inputs, model(*inputs)


def check_delegated(path: Path) -> None:
    """The program must run through our delegate, else the soak would measure something else."""
    import executorch_openvino

    data = path.read_bytes()
    if executorch_openvino.BACKEND_ID.encode() not in data:
        raise SystemExit(f"soak: {path} has no {executorch_openvino.BACKEND_ID} partition")


def live_compiled_models() -> int:
    """How many compiled models the delegate holds (shared per blob and options); -1 when the
    library does not report it."""
    import executorch_openvino

    library = executorch_openvino.runtime.library.load()
    describe = getattr(library, "describe_compiled_models", None)
    return len(describe()) if describe is not None else -1


def soak(path: Path, cycles: int, inputs, expected, keep_alive: bool = False, progress=None) -> list[Sample]:
    import torch
    from executorch.runtime import Runtime

    runtime = Runtime.get()
    kept = []
    samples = []
    # Everything alive now (torch, ExecuTorch's exporter) is set aside, so the collector run at the
    # end of each cycle scans only what the cycle made: milliseconds instead of a quarter second.
    gc.collect()
    gc.freeze()
    for cycle in range(1, cycles + 1):
        started = time.perf_counter()
        program = runtime.load_program(path)
        method = program.load_method("forward")
        outputs = method.execute(list(inputs))
        if not torch.allclose(outputs[0], expected, rtol=1e-4, atol=1e-4):
            raise SystemExit(f"soak: cycle {cycle} gave a wrong output "
                             f"(max |diff| {(outputs[0] - expected).abs().max().item():.3g})")
        if keep_alive:
            kept.append((program, method))
        while_loaded = open_fds()
        del outputs, method, program
        freed_by_del = open_fds() < while_loaded
        gc.collect()
        samples.append(Sample(cycle, resident_bytes(), open_fds(), time.perf_counter() - started, freed_by_del,
                              live_compiled_models()))
        if progress is not None:
            progress(samples[-1])
    return samples


def mb(value: int) -> float:
    return value / (1024 * 1024)


REPORT = {
    "description": [
        "Model: tests/soak/soak.py's SoakNet (2 convolutions and a linear layer, 0.2 MB of weights, fully "
        "delegated), loaded from its .pte file through executorch.runtime every cycle, its output checked against "
        "eager PyTorch. Criteria: resident memory after the warm-up grows by less than the limit (5 MB per 950 "
        "measured cycles); open file descriptors never change after the warm-up; no compiled model stays alive "
        "in the delegate after a cycle."],
    "tables": [{"title": "Verdict", "where": {"group": "verdict"}, "columns": [
                   {"title": "measure", "field": "variant"}, {"title": "value", "field": "value"}]},
               {"title": "Curve (every 50th cycle)", "where": {"group": "cycles", "curve": True}, "columns": [
                   {"title": "cycle", "field": "cycle", "format": "d"},
                   {"title": "resident MB", "field": "rss_mb", "format": ".2f"},
                   {"title": "vs warm-up KB", "field": "vs_warmup_kb", "format": "+.0f"},
                   {"title": "open fds", "field": "open_fds", "format": "d"},
                   {"title": "cycle ms", "field": "cycle_ms", "format": ".1f"}]}],
    "plot": {"kind": "line", "title": "Soak: resident memory per cycle (one process)", "x": "cycle", "y": ["rss_mb"],
             "where": {"group": "cycles"}},
}


def write_report(samples: list[Sample], verdict: Verdict, results_dir: Path, library: str, run: dict) -> Path:
    seconds = sorted(s.seconds for s in samples)
    run["settings"] = {"library": library, "cycles": len(samples), "warm-up": verdict.warmup,
                       "cycle ms": f"median {seconds[len(seconds) // 2] * 1000:.1f}, max {seconds[-1] * 1000:.1f}"}
    summary = {
        "resident memory after cycle 1": f"{mb(samples[0].rss_bytes):.2f} MB",
        f"resident memory after the warm-up (cycle {verdict.warmup})": f"{mb(verdict.rss_after_warmup):.2f} MB",
        "resident memory after the last cycle": f"{mb(verdict.rss_final):.2f} MB",
        "growth after the warm-up: final / largest / limit": f"{verdict.growth_bytes / 1024:+.0f} KB / "
        f"{verdict.max_growth_bytes / 1024:+.0f} KB / {verdict.limit_bytes / 1024:.0f} KB",
        "open file descriptors: cycle 1 / after the warm-up / all counts seen after it":
            f"{samples[0].open_fds} / {verdict.fds_after_warmup} / {', '.join(map(str, verdict.fds_seen))}",
        "cycles whose program was freed by dropping the references, before the cycle collector":
            f"{sum(s.freed_by_del for s in samples)} of {len(samples)}",
        "compiled models alive in the delegate after a cycle (all counts seen)":
            ", ".join(map(str, verdict.live_models_seen)),
        "verdict": "**pass**" if verdict.passed else "**FAIL**",
    }
    for measure, value in summary.items():
        benchmark.add_row(run, "verdict", measure, value=value)
    for s in samples:
        benchmark.add_row(run, "cycles", f"cycle {s.cycle}", cycle=s.cycle, rss_mb=mb(s.rss_bytes),
                          vs_warmup_kb=(s.rss_bytes - verdict.rss_after_warmup) / 1024, open_fds=s.open_fds,
                          cycle_ms=s.seconds * 1000, curve=s.cycle == 1 or s.cycle % 50 == 0 or s is samples[-1])
    return benchmark.save(benchmark.finish(run), results_dir)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cycles", type=int, default=REFERENCE_CYCLES)
    parser.add_argument("--warmup", type=int, default=REFERENCE_WARMUP)
    parser.add_argument("--limit-mb", type=float, default=5.0, help="allowed growth per 950 measured cycles")
    parser.add_argument("--results-dir", type=Path, default=REPO / "bench" / "results", help="where the report goes")
    parser.add_argument("--json", action="store_true", help="print samples and verdict as JSON, write no report")
    parser.add_argument("--keep-alive", action="store_true", help="keep every method alive (a deliberate leak)")
    args = parser.parse_args()

    run = benchmark.new_run("soak", "Soak: load program -> execute -> destroy", checkout=REPO,
                            versions=["torch", "executorch", "openvino"], report=REPORT)
    # Nothing outside the process may change between cycles: no model cache on disk.
    os.environ.pop("EXECUTORCH_OPENVINO_CACHE_DIR", None)
    import executorch_openvino

    library = executorch_openvino.runtime.library.load()
    if library is None:
        raise SystemExit(f"soak: the delegate library did not load: {executorch_openvino.runtime.library.load_error()}")

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "soak.pte"
        inputs, expected = lower_to_file(path)
        check_delegated(path)
        log = sys.stderr if args.json else sys.stdout

        def progress(sample: Sample) -> None:
            if sample.cycle == 1 or sample.cycle % 100 == 0:
                print(f"cycle {sample.cycle}: {mb(sample.rss_bytes):.2f} MB resident, {sample.open_fds} fds, "
                      f"{sample.seconds * 1000:.1f} ms", file=log, flush=True)

        samples = soak(path, args.cycles, inputs, expected, args.keep_alive, progress)

    verdict = judge(samples, args.warmup, scaled_limit(args.limit_mb, args.cycles, args.warmup))
    if args.json:
        print(json.dumps({"verdict": asdict(verdict), "samples": [asdict(s) for s in samples]}))
    else:
        report = write_report(samples, verdict, args.results_dir, str(library.path), run)
        print(f"soak: {'pass' if verdict.passed else 'FAIL'}: {verdict.growth_bytes / 1024:+.0f} KB after the "
              f"warm-up (largest {verdict.max_growth_bytes / 1024:+.0f} KB, limit {verdict.limit_bytes / 1024:.0f} KB), "
              f"fds {verdict.fds_seen}; report: {report}")
    return 0 if verdict.passed else 1


if __name__ == "__main__":
    sys.exit(main())
