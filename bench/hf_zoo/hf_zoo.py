"""Hugging Face architectures (workloads/hf_zoo.py, random weights) at realistic sizes: how much our
partitioner delegates and in how many partitions, the error against eager PyTorch, our latency against
OpenVINO's own conversion of the same model (native) and ExecuTorch's XNNPACK (fp32), in interleaved
rounds, precision="fast" where it is not f32 on this CPU, and the lowering time. `make bench-hf-zoo`.

  .venv/bin/python bench/hf_zoo/hf_zoo.py [--models bert,gpt2] [--size realistic|small] [--rounds 10]
                                          [--calls 5] [--results-dir DIR]

Each model runs in a child process of its own (memory, and one model's failure stays its own). ours:
export -> to_edge_transform_and_lower(OpenvinoPartitioner) -> to_executorch (timed as the lowering),
run through executorch.runtime; native: openvino.convert_model of the same exported program, compiled
with the properties our delegate uses (f32, LATENCY). Report: bench/results/hf-zoo-<size>-<date>.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/
from common import paths, processes, programs  # noqa: E402

from executorch_openvino import benchmark  # noqa: E402
from executorch_openvino.benchmark.report import ratio  # noqa: E402

ERROR_BOUND = 1e-5  # fp32 against eager, relative to max(1, max |eager|): above it the row is named
F32 = {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY"}


def _of(variant: str, title: str, field: str, **more) -> dict:
    return {"title": title, "field": field, "of": variant, **more}


REPORT = {
    "description": [
        "Latency: interleaved rounds of a block of calls per side, ours through executorch.runtime, native "
        "(OpenVINO's own conversion of the same exported program, f32, LATENCY) through OpenVINO's Python API, "
        "XNNPACK (ExecuTorch's partitioner, fp32) through executorch.runtime, torch at one thread; ratios per "
        "round, median [lowest–highest]. Error: max |out - eager| / max(1, max |eager|). fast: the same program "
        "loaded with precision=\"fast\" (the CPU's own default precision), where that is not f32. Lowering: "
        "to_edge_transform_and_lower and to_executorch."],
    "tables": [{"title": "Models", "per": "group", "columns": [
        {"title": "model", "field": "group"},
        _of("ours", "delegated", "delegated"), _of("ours", "partitions", "partitions", format="d"),
        _of("ours", "error (ours)", "error", format=".1e"), _of("native", "error (native)", "error", format=".1e"),
        _of("xnnpack", "error (xnnpack)", "error", format=".1e"),
        _of("ours", "ours ms", "latency_ms", format=".2f"), _of("native", "native ms", "latency_ms", format=".2f"),
        _of("xnnpack", "xnnpack ms", "latency_ms", format=".2f"),
        ratio("ours / native", "latency_ms", "native", of="ours"),
        ratio("ours / xnnpack", "latency_ms", "xnnpack", of="ours"),
        ratio("fast / exact", "latency_ms", "ours", of="fast"),
        _of("fast", "fast error", "error", format=".1e"),
        _of("ours", "bf16/f16 nodes at f32 (ours, native)", "reduced_nodes"),
        _of("ours", "export s", "export_s", format=".1f"), _of("ours", "lowering s", "lowering_s", format=".1f")]}],
}


def _reduced_precision_nodes(compiled) -> int:
    """How many nodes of a compiled model run in bf16 or f16 (its runtime graph's runtimePrecision)."""
    # (str() of an OVAny names its class, not its value: read it with astype.)
    return sum(node.get_rt_info()["runtimePrecision"].astype(str).lower() in ("bf16", "f16")
               for node in compiled.get_runtime_model().get_ops() if "runtimePrecision" in node.get_rt_info())


def measure(name: str, size: str, rounds: int, calls: int) -> list:
    """The model's rows (ours, native, xnnpack and fast where it differs), measured in this process."""
    import numpy as np
    import openvino as ov
    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime

    import executorch_openvino
    from executorch_openvino.benchmark.backends import partition_ir
    from executorch_openvino.runtime.precision import default_precision
    from workloads.hf_zoo import make

    model, inputs = make(name, size)
    with torch.no_grad():
        expected = model(*inputs)
    scale = max(1.0, expected.abs().max().item())
    started = time.perf_counter()
    exported = torch.export.export(model, inputs)
    export_seconds = time.perf_counter() - started
    started = time.perf_counter()
    edge = to_edge_transform_and_lower(exported, partitioner=[executorch_openvino.OpenvinoPartitioner()])
    inside, outside, partitions = programs.delegation(edge, executorch_openvino.BACKEND_ID)
    pte = edge.to_executorch().buffer
    lowering_seconds = time.perf_counter() - started

    core = ov.Core()
    compiled = core.compile_model(ov.convert_model(torch.export.export(model, inputs)), "CPU", F32)
    request, feeds = compiled.create_infer_request(), [x.numpy() for x in inputs]
    xnnpack_pte = to_edge_transform_and_lower(torch.export.export(model, inputs),
                                              partitioner=[XnnpackPartitioner()]).to_executorch().buffer
    methods = {"ours": Runtime.get().load_program(pte).load_method("forward"),
               "xnnpack": Runtime.get().load_program(xnnpack_pte).load_method("forward")}
    if default_precision("CPU") != "f32":  # else precision=fast is this very program's f32
        with executorch_openvino.using_options(precision="fast"):
            methods["fast"] = Runtime.get().load_program(pte).load_method("forward")
    outputs = {side: method.execute(list(inputs))[0] for side, method in methods.items()}
    outputs["native"] = torch.from_numpy(request.infer(feeds)[0])
    calls_of = {side: (lambda m=method: m.execute(list(inputs))) for side, method in methods.items()}
    calls_of["native"] = lambda: request.infer(feeds)
    # executorch.runtime copies each output with a torch op, whose idle OpenMP threads would then spin on
    # the cores the next call's runtime needs (docs/performance.md): torch at one thread, every side alike.
    torch.set_num_threads(1)
    order = ["ours", "native", "xnnpack"] + (["fast"] if "fast" in methods else [])
    timed = benchmark.interleaved({side: benchmark.SequentialRunner(calls_of[side]) for side in order}, rounds,
                                  calls=calls * rounds, warmup=1)
    rows = [{"group": name, "variant": side, "latency_ms": [s.latencies_ms for s in timed.slices[side]],
             "error": (outputs[side].float() - expected).abs().max().item() / scale} for side in order]
    ir = partition_ir(pte, "forward")  # our IR compiled as the delegate compiles it: are its nodes f32?
    ours_reduced = "–" if isinstance(ir, str) else _reduced_precision_nodes(core.compile_model(
        core.read_model(model=ir.xml, weights=ov.Tensor(np.frombuffer(ir.weights, np.uint8))), ir.device,
        ir.properties))
    rows[0].update(delegated=f"{100.0 * inside / max(1, inside + outside):.0f} % ({outside} ops outside)",
                   partitions=partitions, export_s=export_seconds, lowering_s=lowering_seconds,
                   reduced_nodes=f"{ours_reduced}, {_reduced_precision_nodes(compiled)}")
    return rows


def main() -> int:
    from workloads.hf_zoo import MODELS, SIZES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--size", choices=SIZES, default="realistic")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--calls", type=int, default=5, help="calls per side and round")
    parser.add_argument("--results-dir", type=Path, default=paths.RESULTS)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.size, args.rounds, args.calls)))
        return 0

    run = benchmark.new_run(f"hf-zoo-{args.size}", f"Hugging Face zoo ({args.size})", checkout=paths.REPO,
                            versions=["torch", "transformers", "executorch", "openvino"], report=REPORT,
                            settings={"rounds": args.rounds, "calls per side and round": args.calls})
    environment = processes.child_env(HF_HUB_OFFLINE="1")
    for name in args.models.split(","):
        print(f"{name} ...", flush=True)
        child = processes.run_python(Path(__file__), "--child", name, "--size", args.size, "--rounds", args.rounds,
                                     "--calls", args.calls, env=environment)
        try:
            run["rows"] += json.loads(child.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            run["notes"].append(f"{name} failed: {(child.stderr.strip().splitlines() or ['no output'])[-1][:300]}")
    off = sorted({r["group"] for r in run["rows"] if r["variant"] in ("ours", "native") and r["error"] > ERROR_BOUND})
    run["notes"].append(f"Errors above {ERROR_BOUND:g} of the output scale (ours, native): {', '.join(off) or 'none'}.")
    markdown = benchmark.save(benchmark.finish(run), args.results_dir)
    print(markdown.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
