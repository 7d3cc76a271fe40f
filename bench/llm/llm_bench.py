"""Language models at the sizes users run (`make bench-llm`, `make bench-llm-p1024`): prefill and decode
of a Llama of each size and weight format, every way of running it, interleaved in one run.

Variants: ours (ExecuTorch's Llama lowered with our OpenvinoPartitioner, int8 / int4 weights compressed by
it on the OpenVINO model, through executorch.runtime, caches grown as exported), ours-paged (the
same program with attention=paged, the default), ours-fast and ours-fast-paged (precision="fast"),
ours-cached and genai-cached (ours and genai-default loaded from a model cache their export step filled),
xnnpack (ExecuTorch's export_llama recipe: custom SDPA and KV cache ops, 8da8w / 8da4w), genai and
genai-default (OpenVINO GenAI's LLMPipeline on optimum-intel's export of the same weights, with ours'
f32 numerics and with no properties) and llamacpp (its CPU backend, the same weights as GGUF). Per size
and format: every artifact exported in a process of its own, each variant probed in a fresh process
(load time, peak RSS, greedy ids and logits against eager PyTorch), then the timed rounds, every variant
in one process taking turns, a new prompt each round. A variant that fails is reported, the others go on.

  .venv/bin/python bench/llm/llm_bench.py [--sizes smollm2-360m,...] [--formats int8,int4]
      [--variants ours,ours-paged,genai-default,llamacpp] [--rounds R] [--work DIR] [--results-dir DIR] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/
from common import paths, processes  # noqa: E402

import llm_setup  # noqa: E402
from executorch_openvino import benchmark  # noqa: E402
from executorch_openvino.benchmark.report import ratio as _vs  # noqa: E402

TIMEOUTS = {"prepare": 1200, "export": 3600, "probe": 1200, "rounds": 7200}
DEFAULT_VARIANTS = "ours,ours-paged,ours-cached,genai-default,genai-cached,llamacpp"


REPORT = {
    "description": [
        "Every variant of a size and weight format loaded in one process, one warm-up conversation each, then "
        "interleaved rounds: one conversation each per round (the prompt, then the greedy steps, from position "
        "0), the order rotated every round, a new prompt each round (the same for every variant: LLMPipeline's "
        "default backend caches prompt prefixes). Cells: median [lowest–highest] over the rounds; ratios are "
        "taken within each round. Prefill: the prompt's call and its first token (GenAI: its TTFT); decode: "
        "tokens per second of the steps after it. Memory: what the load and one conversation added, over the "
        "weights plus a full fp32 cache; each variant in a fresh process, after its runtime's libraries are "
        "loaded (OpenVINO's for ours as for GenAI): after the load, the load's peak, after a first prefill "
        "(the prompt and one token), after the probe's conversation, and the peak of it all. Correctness: greedy ids and logits "
        "against eager PyTorch on the probe's prompt."],
    "tables": [{"title": "Prefill, decode, memory", "each": "group", "columns": [
        {"title": "variant", "field": "variant"},
        {"title": "prefill ms", "field": "prefill_ms", "stat": "spread", "format": ".1f"},
        {"title": "decode tok/s", "field": "decode_tok_s", "stat": "spread", "format": ".1f"},
        _vs("decode / genai-default", "decode_tok_s", "genai-default"), _vs("decode / genai", "decode_tok_s", "genai"),
        _vs("decode / llamacpp", "decode_tok_s", "llamacpp"), _vs("decode / xnnpack", "decode_tok_s", "xnnpack"),
        _vs("prefill / genai-default", "prefill_ms", "genai-default"),
        {"title": "export s", "field": "export_s", "format": ".0f"},
        {"title": "export peak / fp32 weights", "field": "export_peak", "format": ".1f", "unit": "×"},
        {"title": "load s", "field": "load_s", "format": ".2f"},
        {"title": "peak RSS MB", "field": "peak_mb", "format": ".0f"},
        {"title": "added / (weights + cache)", "field": "memory", "format": ".2f", "unit": "×"},
        {"title": "correctness", "field": "correctness"}]},
        {"title": "Resident memory added, over weights + cache, by phase", "each": "group", "columns": [
            {"title": "variant", "field": "variant"},
            {"title": "after load", "field": "load_memory", "format": ".2f", "unit": "×"},
            {"title": "load's peak", "field": "load_peak_memory", "format": ".2f", "unit": "×"},
            {"title": "after the first prefill", "field": "prefill_memory", "format": ".2f", "unit": "×"},
            {"title": "after decode", "field": "decode_memory", "format": ".2f", "unit": "×"},
            {"title": "whole peak", "field": "memory", "format": ".2f", "unit": "×"}]}],
    "targets": [
        dict(_vs("decode ≥ 1.0× GenAI's default", "decode_tok_s", "genai-default"), at_least=1.0,
             where={"variant": ["ours-paged", "ours-fast-paged"]}),
        dict(_vs("prefill ≤ 1.0× GenAI's default", "prefill_ms", "genai-default"), at_most=1.0,
             where={"variant": ["ours-paged", "ours-fast-paged"]}),
        dict(_vs("export ≤ 1.5× optimum-intel's", "export_s", "genai-default"), at_most=1.5, where={"variant": "ours"}),
        {"title": "export peak ≤ 2× the fp32 weights (the whole process)", "field": "export_peak", "format": ".1f",
         "unit": "×", "at_most": 2.0, "where": {"variant": "ours"}},
        {"title": "memory after load and the first prefill ≤ 1.2× weights + cache", "field": "prefill_memory",
         "format": ".2f", "unit": "×", "at_most": 1.2, "where": {"variant": ["ours-paged", "ours-fast-paged"]}},
        {"title": "load's peak ≤ 1.5× weights + cache", "field": "load_peak_memory", "format": ".2f", "unit": "×",
         "at_most": 1.5, "where": {"variant": ["ours-paged", "ours-fast-paged"]}},
        dict(_vs("memory after the first prefill ≤ GenAI's default", "prefill_memory", "genai-default"),
             at_most=1.0, where={"variant": ["ours-paged", "ours-fast-paged"]}),
        dict(_vs("load ≤ GenAI's default", "load_s", "genai-default"), at_most=1.0,
             where={"variant": ["ours-paged", "ours-fast-paged"]}),
        dict(_vs("load from a model cache ≤ GenAI's from its cache", "load_s", "genai-cached"), at_most=1.0,
             where={"variant": "ours-cached"})],
    "plot": {"title": "decode tokens/s over GenAI's default", "field": "decode_tok_s", "vs": "genai-default",
             "series": ["ours", "ours-paged", "ours-fast-paged", "llamacpp"]},
}


# --- worker processes ----------------------------------------------------------------------------------------


def worker(argv: List[str]) -> int:
    """`worker KIND OUT SIZE WORK [VARIANT FORMAT [VARIANTS ROUNDS]]`: one step, its result as JSON in OUT."""
    import warnings

    import torch

    warnings.filterwarnings("ignore")
    kind, out, size, work = argv[0], Path(argv[1]), llm_setup.SIZES[argv[2]], Path(argv[3])
    started = time.perf_counter()
    try:
        if kind == "prepare":
            result = llm_setup.prepare_size(size, work)
        elif kind == "export":
            result = {"bytes": llm_setup.artifact_bytes(llm_setup.export(argv[4], argv[5], size, work))}
            # The export's peak: this process's, or its child's (optimum-cli, llama.cpp's tools).
            result["peak_kb"] = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                                    resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        else:
            import llm_runners

            prompt = torch.load(work / "reference.pt")["prompt"]
            if kind == "probe":
                result = llm_runners.probe(argv[4], argv[5], work, prompt, size.steps)
            else:
                prompts = [llm_setup.round_prompt(size, work, r) for r in range(int(argv[7]))]
                result = llm_runners.rounds(argv[6].split(","), argv[5], work, prompt, size.steps, prompts)
    except Exception as error:
        text = f"{type(error).__name__}: {error}"
        result = {"error": text if text.split(": ", 1)[-1].startswith("n/a") else text + "\n" + traceback.format_exc()}
    result["seconds"] = time.perf_counter() - started
    out.write_text(json.dumps(result))
    return 0


def run_worker(kind: str, size: str, work: Path, *rest: str) -> dict:
    """A worker step in a fresh interpreter; its error (or how it died) as {"error": ...}."""
    out = work / f"result-{kind}-{'-'.join(rest[:2]) or 'size'}.json"
    out.unlink(missing_ok=True)
    try:
        done = processes.run_python(Path(__file__).resolve(), "worker", kind, out, size, work, *rest,
                                    timeout=TIMEOUTS[kind])
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {TIMEOUTS[kind]} s"}
    if out.is_file():
        return json.loads(out.read_text())
    return {"error": f"the process died (exit {done.returncode}): {done.stderr.strip()[-1200:]}"}


def _short(error: str) -> str:
    first = (error.strip().splitlines() or ["?"])[0]
    return first.split(": ", 1)[1] if ": n/a" in first else first


# --- the run -------------------------------------------------------------------------------------------------


def measure(size_name: str, formats: List[str], variants: List[str], rounds: int, work_root: Path, run: dict) -> None:
    import torch

    from peers import decoding

    size = llm_setup.SIZES[size_name]
    work = work_root / size_name
    print(f"== {size_name}: {size.describe()}", flush=True)
    prepared = run_worker("prepare", size_name, work)
    if "error" in prepared:
        run["notes"].append(f"{size_name}: preparation failed: {_short(prepared['error'])}")
        return
    run["notes"].append(f"{size_name}: {size.describe()}; Hugging Face model against ExecuTorch's eager Llama: "
                        f"{prepared.get('hf_vs_et', prepared.get('hf'))}")
    reference = torch.load(work / "reference.pt")
    for fmt in formats:
        group = f"{size_name}, {fmt}"
        rows = {v: benchmark.add_row(run, group, v) for v in variants}
        genai_export = None  # optimum-intel exports once per format, for every GenAI variant
        for variant in variants:
            row = rows[variant]
            exported = run_worker("export", size_name, work, variant, fmt)
            probed = run_worker("probe", size_name, work, variant, fmt) if "error" not in exported else {}
            error = exported.get("error") or probed.get("error")
            if error:
                row["correctness"] = (_short(error) if ": n/a" in error.splitlines()[0] else f"failed: {_short(error)}")[:300]
                print(f"  {variant} {fmt}: {row['correctness']}", flush=True)
                continue
            if variant in llm_setup.GENAI_VARIANTS:
                genai_export = genai_export or exported
                exported_here = genai_export
            elif variant not in {**llm_setup.PAGED_VARIANTS, **llm_setup.CACHED_VARIANTS}:  # these run a twin's export
                exported_here = exported
            else:
                exported_here = None
            if exported_here is not None:
                row["export_s"] = exported_here["seconds"]
                row["export_peak"] = exported_here["peak_kb"] * 1024 / (size.parameters() * 4)
            held = exported["bytes"] + size.cache_bytes()
            row.update(load_s=probed["load_ms"] / 1e3, peak_mb=probed["peak_kb"] / 1024,
                       memory=(probed["peak_kb"] - probed["baseline_kb"]) * 1024 / held)
            for phase in ("load", "load_peak", "prefill", "decode"):  # not for llama.cpp's own process
                if f"{phase}_kb" in probed:
                    row[f"{phase}_memory"] = (probed[f"{phase}_kb"] - probed["baseline_kb"]) * 1024 / held
            got = torch.load(work / f"probe-{variant}-{fmt}.pt")
            row["correctness"] = decoding.correctness(
                decoding.compare(got["ids"], got["logits"], reference["ids"], reference["logits"], size.steps)
                if got["ids"] is not None else {"ids_equal": None})
            print(f"  {variant} {fmt}: loaded in {row['load_s']:.1f} s; {row['correctness']}", flush=True)
        # The cached variants are their twins once loaded: probed for the load, not timed again.
        ready = [v for v in variants if "load_s" in rows[v] and v not in llm_setup.CACHED_VARIANTS]
        if ready:
            timed = run_worker("rounds", size_name, work, "-", fmt, ",".join(ready), str(rounds))
            for variant, error in {**timed.get("failed", {}), **({"all": timed["error"]} if "error" in timed else {})}.items():
                run["notes"].append(f"{group}: rounds of {variant} failed: {_short(error)[:300]}")
            for variant, talks in timed.get("rounds", {}).items():
                rows[variant]["prefill_ms"] = [t["prefill_ms"] for t in talks]
                rows[variant]["decode_tok_s"] = [size.steps * 1e3 / t["decode_ms"] for t in talks]
        for stale in [*work.glob(f"*-{fmt}.pte"), *work.glob("llamacpp-*.gguf"), work / f"ov-{fmt}"]:
            shutil.rmtree(stale, ignore_errors=True) if stale.is_dir() else stale.unlink(missing_ok=True)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="smollm2-360m,qwen2.5-0.5b,llama3.2-1b",
                        help=f"comma-separated, of {', '.join(llm_setup.SIZES)} (default %(default)s; --smoke: tiny)")
    parser.add_argument("--formats", default="int8,int4", help="of fp32, int8, int4 (default %(default)s)")
    parser.add_argument("--variants", default=DEFAULT_VARIANTS,
                        help=f"of {', '.join(llm_setup.VARIANTS)} (default %(default)s)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per size and format (default 5)")
    parser.add_argument("--smoke", action="store_true", help="the tiny size, fp32, two rounds, into bench/results/quick")
    parser.add_argument("--name", help="the report's name (default llm-<sizes>-<date>)")
    parser.add_argument("--work", type=Path, help="keep the artifacts here (default: a temporary folder)")
    parser.add_argument("--results-dir", type=Path)
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.formats, args.rounds = "tiny", "fp32", 2
    args.sizes, args.formats, args.variants = args.sizes.split(","), args.formats.split(","), args.variants.split(",")
    args.results_dir = args.results_dir or (paths.QUICK_RESULTS if args.smoke else paths.RESULTS)
    for given, known, what in ((args.sizes, llm_setup.SIZES, "size"), (args.formats, llm_setup.FORMATS, "format"),
                               (args.variants, llm_setup.VARIANTS, "variant")):
        unknown = [name for name in given if name not in known]
        if unknown:
            parser.error(f"unknown {what}(s): {', '.join(unknown)}; known: {', '.join(known)}")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    return args


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "worker":
        return worker(argv[1:])
    args = parse_args(argv)
    paths.use_built_library()  # the workers load our delegate from it
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    run = benchmark.new_run("llm", "Language models", checkout=paths.REPO, report=REPORT,
                            versions=["torch", "executorch", "openvino", "openvino-genai", "optimum-intel",
                                      "transformers", "nncf"],
                            settings={"rounds": args.rounds, "sizes": ", ".join(args.sizes),
                                      "formats": ", ".join(args.formats)})
    work_root = args.work or Path(tempfile.mkdtemp(prefix="llm-bench-"))
    try:
        for size in args.sizes:
            measure(size, args.formats, args.variants, args.rounds, work_root, run)
    finally:
        if not args.work:
            shutil.rmtree(work_root, ignore_errors=True)
    name = args.name or f"llm-{'+'.join(args.sizes)}-{run['date'][:10]}"
    markdown = benchmark.save(benchmark.finish(run), args.results_dir, name)
    print(markdown.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
