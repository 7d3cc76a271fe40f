"""Hugging Face architectures (tests/python/hf_zoo_models.py, random weights) at realistic sizes:
how much our partitioner delegates, into how many partitions, the error against eager PyTorch,
our latency against native OpenVINO on the same model, and the lowering time.

  .venv/bin/python bench/hf_zoo.py [--models bert,gpt2] [--size realistic|small] [--rounds 10] [--calls 5]

Each model runs in a child process of its own (memory, and one model's failure stays its own).
ours: export -> to_edge_transform_and_lower(OpenvinoPartitioner) -> to_executorch, timed as the
lowering; run through executorch.runtime. native: openvino.convert_model of the same module,
compiled with the properties our delegate uses (f32, LATENCY). Latency is measured interleaved:
R rounds, each a block of calls of both, the order alternating; the ratio is of the medians.
The report goes to bench/results/hf-zoo-<date>.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"


def measure(name: str, size: str, rounds: int, calls: int) -> dict:
    sys.path[:0] = [str(REPO / "python"), str(REPO / "tests" / "python")]
    import numpy as np
    import openvino as ov
    import torch
    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime

    import executorch_openvino
    from hf_zoo_models import make
    from lowering import delegate_calls, outside_ops

    model, inputs = make(name, size)
    with torch.no_grad():
        expected = model(*inputs)
    started = time.perf_counter()
    exported = torch.export.export(model, inputs)
    export_seconds = time.perf_counter() - started
    partitioner = executorch_openvino.OpenvinoPartitioner()
    started = time.perf_counter()
    edge = to_edge_transform_and_lower(exported, partitioner=[partitioner])
    graph_module = edge.exported_program().graph_module
    delegates, outside = delegate_calls(graph_module.graph), outside_ops(graph_module.graph)
    inside = sum(
        sum(1 for n in getattr(graph_module, call.args[0].target).original_module.graph.nodes if n.op == "call_function")
        for call in delegates
    )
    pte = edge.to_executorch().buffer
    lowering_seconds = time.perf_counter() - started
    method = Runtime.get().load_program(pte).load_method("forward")
    ours = method.execute(list(inputs))[0]
    scale = max(1.0, expected.abs().max().item())
    error = (ours - expected).abs().max().item() / scale

    core = ov.Core()
    native_model = ov.convert_model(torch.export.export(model, inputs))  # OpenVINO's own torch.export path
    compiled = core.compile_model(native_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY"})
    request = compiled.create_infer_request()
    feeds = [x.numpy() for x in inputs]
    native_out = request.infer(feeds)[0]
    native_error = float(np.abs(native_out - expected.numpy()).max()) / scale

    def block(call):
        times = []
        for _ in range(calls):
            t = time.perf_counter()
            call()
            times.append(time.perf_counter() - t)
        return times

    run_ours, run_native = (lambda: method.execute(list(inputs))), (lambda: request.infer(feeds))
    run_ours(), run_native()  # warm-up
    ours_times, native_times, per_round = [], [], []
    for r in range(rounds):
        first, second = (run_ours, run_native) if r % 2 == 0 else (run_native, run_ours)
        a, b = block(first), block(second)
        o, n = (a, b) if r % 2 == 0 else (b, a)
        ours_times += o
        native_times += n
        per_round.append(statistics.median(o) / statistics.median(n))
    return {
        "model": name, "size": size, "partitions": len(delegates), "outside": len(outside),
        "delegated_pct": 100.0 * inside / max(1, inside + len(outside)),
        "error": error, "native_error": native_error,
        "ours_ms": 1e3 * statistics.median(ours_times), "native_ms": 1e3 * statistics.median(native_times),
        "ratio": statistics.median(ours_times) / statistics.median(native_times),
        "ratio_range": [min(per_round), max(per_round)],
        "export_s": export_seconds, "lowering_s": lowering_seconds,
    }


def report(rows, size: str, load_before: float) -> str:
    import openvino
    import torch
    import transformers

    lines = [
        f"# Hugging Face zoo ({size}), {datetime.datetime.now():%Y-%m-%d %H:%M}",
        "",
        f"- {os.cpu_count()} logical cores; load average (1 min) {load_before:.2f} before, {os.getloadavg()[0]:.2f} after",
        f"- torch {torch.__version__}, transformers {transformers.__version__}, openvino {openvino.get_version()}",
        "- latency: median of interleaved blocks, ours through executorch.runtime, native through OpenVINO's Python API; "
        "error: max |ours - eager| / max(1, max |eager|); lowering: to_edge_transform_and_lower + to_executorch",
        "",
        "| model | delegated | partitions | error (ours) | error (native) | ours ms | native ms | ours / native (per-round range) | export s | lowering s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        if "failed" in row:
            lines.append(f"| {row['model']} | failed: {row['failed']} |||||||||")
            continue
        lines.append(
            f"| {row['model']} | {row['delegated_pct']:.0f} % ({row['outside']} ops outside) | {row['partitions']} | "
            f"{row['error']:.1e} | {row['native_error']:.1e} | {row['ours_ms']:.2f} | {row['native_ms']:.2f} | "
            f"{row['ratio']:.3f} ({row['ratio_range'][0]:.2f}-{row['ratio_range'][1]:.2f}) | {row['export_s']:.1f} | "
            f"{row['lowering_s']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    sys.path.insert(0, str(REPO / "tests" / "python"))
    from hf_zoo_models import MODELS, SIZES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--size", choices=SIZES, default="realistic")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.size, args.rounds, args.calls)))
        return 0

    load_before = os.getloadavg()[0]
    rows = []
    environment = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for name in args.models.split(","):
        print(f"{name} ...", flush=True)
        child = subprocess.run([sys.executable, __file__, "--child", name, "--size", args.size, "--rounds",
                                str(args.rounds), "--calls", str(args.calls)], capture_output=True, text=True, env=environment)
        try:
            rows.append(json.loads(child.stdout.strip().splitlines()[-1]))
        except (IndexError, json.JSONDecodeError):
            rows.append({"model": name, "failed": (child.stderr.strip().splitlines() or ["no output"])[-1][:200]})
        print(f"  {rows[-1]}", flush=True)
    text = report(rows, args.size, load_before)
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"hf-zoo-{args.size}-{datetime.date.today()}.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
