"""Where an export of ours spends its time: one Llama of the LLM benchmark's sizes lowered in a fresh process,
each stage timed (torch.export, ExecuTorch's decompositions and edge passes, our partitioning, conversion, IR
passes, NNCF's weight compression, the blob, to_executorch, the file), with the process's peak; optimum-intel's
export of the same weights (what GenAI runs) timed beside it.

  .venv/bin/python bench/llm/export_stages.py [--size qwen2.5-0.5b] [--format int8] [--work DIR]

Prints one JSON line per side and a table; it writes no report (the LLM benchmark's rows hold the export
times and peaks that performance.md quotes; this script says where they go).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/
from common import processes  # noqa: E402

import llm_setup  # noqa: E402


def ours(size_name: str, fmt: str, out: Path) -> dict:
    """In this process: our export of the benchmark's "ours" program, stage by stage."""
    import torch
    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower

    from executorch_openvino import lowering_progress

    size = llm_setup.SIZES[size_name]
    marks = [("model", time.perf_counter())]
    model = llm_setup.et_model(size)
    marks.append(("torch.export", time.perf_counter()))
    with torch.no_grad():
        program, partitioners = llm_setup.ET_VARIANTS["ours"](model, size, fmt)
        with lowering_progress.listening(lambda stage: marks.append((stage, time.perf_counter()))):
            edge = to_edge_transform_and_lower(program, partitioner=partitioners,
                                               compile_config=EdgeCompileConfig(_check_ir_validity=False))
        marks.append(("to_executorch", time.perf_counter()))
        written = edge.to_executorch()
        marks.append((".buffer and the file", time.perf_counter()))
        out.write_bytes(written.buffer)
    marks.append(("end", time.perf_counter()))
    stages: dict = {}
    for (name, start), (_, end) in zip(marks, marks[1:]):
        stages[name] = stages.get(name, 0.0) + end - start  # "IR passes" comes twice, around NNCF's
    return {"side": "ours", "stages_s": {k: round(v, 2) for k, v in stages.items()},
            "total_s": round(marks[-1][1] - marks[1][1], 2),  # from torch.export: optimum-intel's also builds the model
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}


def optimum_intel(size_name: str, fmt: str, work: Path) -> dict:
    from peers import genai

    size = llm_setup.SIZES[size_name]
    started = time.perf_counter()
    genai.export(work / "hf", fmt, size.group, work / f"ov-{fmt}-stages")
    return {"side": "optimum-intel", "total_s": round(time.perf_counter() - started, 2),
            "peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="qwen2.5-0.5b", choices=sorted(llm_setup.SIZES))
    parser.add_argument("--format", default="int8", choices=("fp32", "int8", "int4"))
    parser.add_argument("--work", type=Path, help="the LLM benchmark's work folder of the size (its hf/ is reused)")
    parser.add_argument("--side", choices=("ours", "optimum-intel"), help=argparse.SUPPRESS)  # a child's job
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="export-stages-"))
    if args.side:
        result = (ours(args.size, args.format, work / "stages.pte") if args.side == "ours"
                  else optimum_intel(args.size, args.format, work))
        print(json.dumps(result))
        return 0
    if not (work / "hf").is_dir():
        llm_setup.prepare_size(llm_setup.SIZES[args.size], work)
    results = []
    for side in ("ours", "optimum-intel"):  # each in a fresh process, for its own peak
        done = processes.run_python(Path(__file__).resolve(), "--size", args.size, "--format", args.format,
                                    "--work", work, "--side", side)
        results.append(processes.last_json(done.stdout + "\n" + done.stderr) if done.returncode == 0 else
                       {"side": side, "error": done.stderr.strip()[-800:]})
        print(json.dumps(results[-1]), flush=True)
    mine, theirs = results
    if "error" not in mine and "error" not in theirs:
        print(f"\n{args.size}, {args.format}: ours {mine['total_s']:.1f} s (peak {mine['peak_mb']} MB), optimum-intel "
              f"{theirs['total_s']:.1f} s (peak {theirs['peak_mb']} MB): {mine['total_s'] / theirs['total_s']:.2f}x")
        for stage, seconds in mine["stages_s"].items():
            share = "(not in the total)" if stage == "model" else f"{seconds / mine['total_s']:6.1%}"
            print(f"  {stage:<40} {seconds:7.2f} s  {share}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
