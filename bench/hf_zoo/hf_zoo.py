"""Hugging Face architectures (tests/python/hf_zoo_models.py, random weights) at realistic sizes:
how much our partitioner delegates, into how many partitions, the error against eager PyTorch,
our latency against native OpenVINO on the same model, and the lowering time.

  .venv/bin/python bench/hf_zoo/hf_zoo.py [--models bert,gpt2] [--size realistic|small] [--rounds 10] [--calls 5]
                                          [--results-dir DIR]

Each model runs in a child process of its own (memory, and one model's failure stays its own).
ours: export -> to_edge_transform_and_lower(OpenvinoPartitioner) -> to_executorch, timed as the
lowering; run through executorch.runtime. native: openvino.convert_model of the same module,
compiled with the properties our delegate uses (f32, LATENCY). xnnpack: the same exported program
lowered with ExecuTorch's XnnpackPartitioner (fp32), through executorch.runtime. fast: our program
loaded with precision="fast" (the CPU's own default precision: bf16 where it has it), timed only
where that is not f32. Latency is measured interleaved: R rounds, each a block of calls of every
side, the order alternating; the ratio is of the medians.
The report goes to bench/results/hf-zoo-<size>-<date>.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common
from common import machine, paths, processes, reports  # noqa: E402
from common.rounds import alternating, time_calls  # noqa: E402
from common.stats import ratios  # noqa: E402


ERROR_BOUND = 1e-5  # fp32 against eager, relative to max(1, max |eager|): above it the row is named


def measure(name: str, size: str, rounds: int, calls: int) -> dict:
    paths.on_path(paths.PYTHON, paths.TESTS)
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
    exported_again = torch.export.export(model, inputs)  # lowering consumes its program; XNNPACK's own copy
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
    # Under the f32 hint every compute node should run in f32; a bf16 / f16 one would explain an error.
    ours_ir = [getattr(graph_module, call.args[0].target) for call in delegates]
    reduced = {"ours": sum(_reduced_nodes(core, m) for m in ours_ir), "native": _reduced_precision_nodes(compiled)}
    native_error = float(np.abs(native_out - expected.numpy()).max()) / scale

    from executorch_openvino.runtime.precision import default_precision

    xnnpack = _xnnpack_method(exported_again)
    xnnpack_error = (xnnpack.execute(list(inputs))[0] - expected).abs().max().item() / scale
    sides = {"ours": lambda: method.execute(list(inputs)), "native": lambda: request.infer(feeds),
             "xnnpack": lambda: xnnpack.execute(list(inputs))}
    fast_precision, fast_error = default_precision("CPU"), None
    if fast_precision != "f32":  # else precision=fast is this very program's f32
        executorch_openvino.set_options(precision="fast")
        try:
            fast = Runtime.get().load_program(pte).load_method("forward")
        finally:
            executorch_openvino.set_options(precision=None)
        fast_error = (fast.execute(list(inputs))[0] - expected).abs().max().item() / scale
        sides["fast"] = lambda: fast.execute(list(inputs))
    # ExecuTorch's Python binding copies each output with a torch op; torch's idle OpenMP threads then
    # spin (libgomp's default) on the cores the next call's runtime needs: about 3 ms of a 11 ms
    # T5 encoder call (docs/performance.md). One torch thread for the timed calls, every side alike.
    torch.set_num_threads(1)
    for call in sides.values():  # warm-up
        call()
    times = {side: [] for side in sides}  # ms per call, every round
    per_round = {side: [] for side in sides}  # the median of each round's block
    for r in range(rounds):
        for side in alternating(list(sides), r):
            block = time_calls(sides[side], calls)
            times[side] += block
            per_round[side].append(statistics.median(block))
    round_ratios = ratios(per_round["ours"], per_round["native"])
    xnnpack_ratios = ratios(per_round["ours"], per_round["xnnpack"])
    fast_ratios = ratios(per_round["fast"], per_round["ours"]) if "fast" in sides else None
    return {
        "xnnpack_ms": statistics.median(times["xnnpack"]), "xnnpack_error": xnnpack_error,
        "ours_over_xnnpack": statistics.median(times["ours"]) / statistics.median(times["xnnpack"]),
        "ours_over_xnnpack_range": [min(xnnpack_ratios), max(xnnpack_ratios)],
        "fast_precision": fast_precision, "fast_error": fast_error, "reduced_nodes": reduced,
        "fast_over_exact": statistics.median(times["fast"]) / statistics.median(times["ours"]) if fast_ratios else None,
        "fast_over_exact_range": [min(fast_ratios), max(fast_ratios)] if fast_ratios else None,
        "model": name, "size": size, "partitions": len(delegates), "outside": len(outside),
        "delegated_pct": 100.0 * inside / max(1, inside + len(outside)),
        "error": error, "native_error": native_error,
        "ours_ms": statistics.median(times["ours"]), "native_ms": statistics.median(times["native"]),
        "ratio": statistics.median(times["ours"]) / statistics.median(times["native"]),
        "ratio_range": [min(round_ratios), max(round_ratios)],
        "export_s": export_seconds, "lowering_s": lowering_seconds,
    }


def _reduced_precision_nodes(compiled) -> int:
    """How many nodes of a compiled model run in bf16 or f16 (its runtime graph's runtimePrecision)."""
    # (str() of an OVAny names its class, not its value: read it with astype.)
    return sum(node.get_rt_info()["runtimePrecision"].astype(str).lower() in ("bf16", "f16")
               for node in compiled.get_runtime_model().get_ops() if "runtimePrecision" in node.get_rt_info())


def _reduced_nodes(core, lowered_module) -> int:
    """_reduced_precision_nodes of our IR compiled as the library compiles it."""
    import numpy as np
    import openvino as ov

    from executorch_openvino.container import compile_specs
    from executorch_openvino.container.blob import parse_blob

    blob = parse_blob(lowered_module.processed_bytes)
    options = compile_specs.from_compile_specs(lowered_module.compile_specs)
    model = core.read_model(model=blob.ir_xml, weights=ov.Tensor(np.frombuffer(blob.ir_weights, np.uint8)))
    properties = compile_specs.load_time_properties(options.device, options.properties, options.precision)
    return _reduced_precision_nodes(core.compile_model(model, options.device, properties))


def _xnnpack_method(exported):
    """The program lowered with ExecuTorch's XNNPACK partitioner (fp32), its forward method loaded."""
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime

    pte = to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()]).to_executorch().buffer
    return Runtime.get().load_program(pte).load_method("forward")


def _fast(row) -> str:
    if row.get("fast_over_exact") is None:
        return f"{row.get('fast_precision') or '?'}: the same program (no faster precision on this CPU)"
    low, high = row["fast_over_exact_range"]
    return (f"{row['fast_precision']}: {row['fast_over_exact']:.3f} ({low:.2f}-{high:.2f}) of exact's time, "
            f"error {row['fast_error']:.1e}")


def report(rows, size: str, load_before: float) -> str:
    import openvino

    lines = [
        f"# Hugging Face zoo ({size}), {datetime.datetime.now():%Y-%m-%d %H:%M}",
        "",
        f"- {machine.machine(load_before)}",
        f"- {machine.versions('torch', 'transformers')}, openvino {openvino.get_version()}",
        "- latency: median of interleaved blocks, ours through executorch.runtime, native through OpenVINO's Python API; "
        "error: max |ours - eager| / max(1, max |eager|); lowering: to_edge_transform_and_lower + to_executorch",
        "",
        "- xnnpack: ExecuTorch's XnnpackPartitioner, fp32; fast: precision=\"fast\" (the CPU's own default "
        "precision), only timed where that is not f32",
        "",
        *reports.table_head(["model", "delegated", "partitions", "error (ours)", "error (native)", "error (xnnpack)",
                             "ours ms", "native ms", "xnnpack ms", "ours / native (per-round range)",
                             "ours / xnnpack (per-round range)", "precision=fast", "bf16/f16 nodes at f32 (ours, native)",
                             "export s", "lowering s"]),
    ]
    for row in rows:
        if "failed" in row:
            lines.append(f"| {row['model']} | failed: {row['failed']} ||||||||||||||")
            continue
        lines.append(reports.row(
            row["model"], f"{row['delegated_pct']:.0f} % ({row['outside']} ops outside)", row["partitions"],
            f"{row['error']:.1e}", f"{row['native_error']:.1e}", f"{row['xnnpack_error']:.1e}", f"{row['ours_ms']:.2f}",
            f"{row['native_ms']:.2f}", f"{row['xnnpack_ms']:.2f}",
            f"{row['ratio']:.3f} ({row['ratio_range'][0]:.2f}-{row['ratio_range'][1]:.2f})",
            f"{row['ours_over_xnnpack']:.3f} ({row['ours_over_xnnpack_range'][0]:.2f}-"
            f"{row['ours_over_xnnpack_range'][1]:.2f})", _fast(row),
            f"{row['reduced_nodes']['ours']}, {row['reduced_nodes']['native']}", f"{row['export_s']:.1f}",
            f"{row['lowering_s']:.1f}"))
    off = [f"{row['model']} (ours {row['error']:.1e}, native {row['native_error']:.1e})" for row in rows
           if "failed" not in row and max(row["error"], row["native_error"]) > ERROR_BOUND]
    lines += ["", f"Errors above {ERROR_BOUND:g} of the output scale: " + (", ".join(off) if off else "none") + "."]
    return "\n".join(lines) + "\n"


def main() -> int:
    paths.on_path(paths.TESTS)
    from hf_zoo_models import MODELS, SIZES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--size", choices=SIZES, default="realistic")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--calls", type=int, default=5)
    reports.add_results_dir(parser)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.size, args.rounds, args.calls)))
        return 0

    load_before = machine.load_average()
    rows = []
    environment = processes.child_env(HF_HUB_OFFLINE="1")
    for name in args.models.split(","):
        print(f"{name} ...", flush=True)
        child = processes.run_python(Path(__file__), "--child", name, "--size", args.size, "--rounds", args.rounds,
                                     "--calls", args.calls, env=environment)
        try:
            rows.append(processes.last_json(child.stdout))
        except ValueError:
            rows.append({"model": name, "failed": (child.stderr.strip().splitlines() or ["no output"])[-1][:200]})
        print(f"  {rows[-1]}", flush=True)
    reports.print_and_save(report(rows, args.size, load_before), reports.results_dir(args.results_dir),
                           f"hf-zoo-{args.size}-{reports.stamp()}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
