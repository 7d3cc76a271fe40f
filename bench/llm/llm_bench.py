"""The LLM benchmark (issue 15): prefill and decode of a Llama at two sizes and three weight formats,
every way of running it, interleaved in one run.

Variants: ours (ExecuTorch's Llama lowered with our OpenvinoPartitioner, through executorch.runtime);
XNNPACK plain (the same export, XnnpackPartitioner); XNNPACK the way ExecuTorch's export_llama does it
(its custom SDPA and KV cache ops, its 8da8w / 8da4w quantization); ExecuTorch's kernels (no
delegate); native OpenVINO (optimum-intel's stateful IR of the equivalent Hugging Face Llama, one
plain InferRequest) and OpenVINO GenAI's LLMPipeline on that IR (f32 like ours, and with no
properties). Each size and format: every artifact exported in a process of its own, a probe of each
variant in a fresh process (load time, peak RSS, greedy ids and logits against eager PyTorch), then
the timed rounds, every variant in one process taking turns. Report and plot in bench/results/.

  .venv/bin/python bench/llm/llm_bench.py [--sizes a,b] [--formats fp32,int8,int4] [--variants a,b]
                                          [--rounds R] [--results-dir DIR] [--quick]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common
from common import machine, paths, processes, reports  # noqa: E402
from common.reports import say  # noqa: E402

paths.on_path(paths.PYTHON)
import llm_setup  # noqa: E402

ALL_VARIANTS = (list(llm_setup.ET_VARIANTS) + list(llm_setup.RUNNER_VARIANTS) + list(llm_setup.PAGED_VARIANTS)
               + list(llm_setup.OV_VARIANTS)
                + list(llm_setup.LLAMACPP_BACKENDS))
TIMEOUTS = {"prepare": 1200, "export": 3600, "export-ov": 3600, "probe": 1200, "rounds": 7200}


# --- worker processes ----------------------------------------------------------------------------------------


def worker(argv: List[str]) -> int:
    """`worker KIND OUT SIZE WORK [VARIANT FORMAT [VARIANTS ROUNDS]]`: one step, its result as JSON in OUT."""
    import warnings

    warnings.filterwarnings("ignore")
    kind, out, size_name, work = argv[0], Path(argv[1]), argv[2], Path(argv[3])
    size = llm_setup.SIZES[size_name]
    started = time.perf_counter()
    try:
        if kind == "prepare":
            result = llm_setup.prepare_size(size, work)
        elif kind == "export":
            variant, fmt = argv[4], argv[5]
            export = llm_setup.export_llamacpp if variant == llm_setup.LLAMACPP else (
                lambda f, s, w: llm_setup.export_et(variant, f, s, w))
            result = {"bytes": export(fmt, size, work).stat().st_size}
        elif kind == "export-ov":
            folder = llm_setup.export_ov(argv[5], size, work)
            result = {"bytes": (folder / "openvino_model.bin").stat().st_size}
        else:
            import llm_runners
            import torch

            prompt = torch.load(work / "reference.pt")["prompt"]
            if kind == "probe":
                result = llm_runners.probe(argv[4], argv[5], work, prompt, size.steps)
            else:
                count = int(argv[7])
                prompts = [llm_setup.round_prompt(size, work, r) for r in range(count)]
                result = llm_runners.rounds(argv[6].split(","), argv[5], work, prompt, size.steps, count, prompts)
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
    """An error's first line (a traceback follows it in the JSON), or n/a's reason alone."""
    first = error.strip().splitlines()[0] if error.strip() else error
    return first.split(": ", 1)[1] if ": n/a" in first else first


# --- the run -------------------------------------------------------------------------------------------------------


def compare(reference: dict, probe_file: Path, variant: str) -> dict:
    """Greedy ids and logits of a probe against eager PyTorch (ExecuTorch's Llama; native and GenAI also
    against the Hugging Face model they were exported from)."""
    import torch

    got = torch.load(probe_file)
    if got["ids"] is None:  # llama-bench times random tokens and returns no ids
        return {"steps": len(reference["ids"]), "ids_equal": None}
    ids, eager_ids = got["ids"], reference["ids"]
    same = next((i for i, (a, b) in enumerate(zip(ids, eager_ids)) if a != b), min(len(ids), len(eager_ids)))
    result = {"steps": len(eager_ids), "ids_equal": ids == eager_ids, "first_divergence": same,
              "agreement": sum(a == b for a, b in zip(ids, eager_ids)) / max(1, len(eager_ids))}
    if got["logits"] is not None:
        logits = got["logits"]
        # Logits are comparable while the ids agree: the prompt's, and each step's up to the first divergence.
        upto = min(same + 1, len(logits), len(reference["logits"]))
        diff = (logits[:upto] - reference["logits"][:upto]).abs()
        result["prompt_max_abs"] = float(diff[0].max())
        result["max_abs"] = float(diff.max())
        result["logit_scale"] = float(reference["logits"][0].abs().max())
    if variant in llm_setup.OV_VARIANTS and "hf_ids" in reference:
        result["ids_equal_hf"] = ids == reference["hf_ids"]
    return result


def measure(size_name: str, formats: List[str], variants: List[str], rounds: int, work_root: Path) -> dict:
    import torch

    size = llm_setup.SIZES[size_name]
    work = work_root / size_name
    work.mkdir(parents=True, exist_ok=True)
    say(f"== {size_name}: {size.describe()}")
    record = {"size": size_name, "description": size.describe(), "formats": {}}
    prepared = run_worker("prepare", size_name, work)
    record["prepare"] = prepared
    if "error" in prepared:
        say(f"  preparation failed: {_short(prepared['error'])}")
        return record
    say(f"  eager models ready ({prepared['seconds']:.0f} s); Hugging Face vs ExecuTorch eager: "
        f"{prepared.get('hf_vs_et', prepared.get('hf'))}")
    reference = torch.load(work / "reference.pt")
    for fmt in formats:
        entries: Dict[str, dict] = {variant: {} for variant in variants}
        record["formats"][fmt] = {"variants": entries}
        ov_export = None
        for variant in variants:
            entry = entries[variant]
            if (variant, fmt) in llm_setup.UNAVAILABLE:
                entry["export"] = {"error": "n/a: " + llm_setup.UNAVAILABLE[variant, fmt]}
            elif variant in llm_setup.SHARED_ARTIFACTS:  # runs another variant's artifact
                needed = llm_setup.SHARED_ARTIFACTS[variant]
                entry["export"] = entries.get(needed, {}).get("export") or {
                    "error": f"n/a: needs variant {needed} (exported before it)"}
            elif variant in llm_setup.ET_VARIANTS or variant == llm_setup.LLAMACPP:
                entry["export"] = run_worker("export", size_name, work, variant, fmt)
            else:
                ov_export = ov_export or run_worker("export-ov", size_name, work, variant, fmt)
                entry["export"] = ov_export
            if "error" in entry["export"]:
                entry["error"] = entry["export"]["error"]
                say(f"  {variant} {fmt}: export failed: {_short(entry['error'])[:300]}")
                continue
            entry["probe"] = run_worker("probe", size_name, work, variant, fmt)
            if "error" in entry["probe"]:
                entry["error"] = "run: " + entry["probe"]["error"]
                say(f"  {variant} {fmt}: probe failed: {_short(entry['probe']['error'])[:300]}")
                continue
            entry["correctness"] = compare(reference, work / f"probe-{variant}-{fmt}.pt", variant)
            say(f"  {variant} {fmt}: exported in {entry['export']['seconds']:.0f} s, loaded in "
                f"{entry['probe']['load_ms'] / 1e3:.1f} s, ids equal to eager: {entry['correctness']['ids_equal']}")
        ready = [variant for variant in variants if "error" not in entries[variant]]
        if ready:
            loads = [machine.load_average()]
            timed = run_worker("rounds", size_name, work, "-", fmt, ",".join(ready), str(rounds))
            loads.append(machine.load_average())
            record["formats"][fmt]["rounds"] = timed
            record["formats"][fmt]["load_average"] = loads
            if "error" in timed:
                say(f"  {fmt} rounds failed: {_short(timed['error'])[:300]}")
            for variant, error in timed.get("failed", {}).items():
                entries[variant]["error"] = "rounds: " + error
            summary = [f"{v} {r['prefill_ms']:.1f} ms / {size.steps * 1e3 / r['decode_ms']:.1f} tok/s"
                       for v, r in (timed.get("rounds") or [{}])[-1].items()]
            say(f"  {fmt}, {rounds} rounds ({timed['seconds']:.0f} s): " + "; ".join(summary))
        for stale in list(work.glob(f"*-{fmt}.pte")) + list(work.glob(f"llamacpp-{fmt}.gguf")) + [work / f"ov-{fmt}"]:
            shutil.rmtree(stale, ignore_errors=True) if stale.is_dir() else stale.unlink(missing_ok=True)
    return record


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", help=f"comma-separated, of {', '.join(llm_setup.SIZES)} "
                        f"(default {','.join(llm_setup.DEFAULT_SIZES)}; --quick: llama-512x6)")
    parser.add_argument("--formats", default=",".join(llm_setup.FORMATS), help="weight formats (default all)")
    parser.add_argument("--variants", default=",".join(ALL_VARIANTS), help="default: all of " + ", ".join(ALL_VARIANTS))
    parser.add_argument("--rounds", type=int, help="interleaved rounds per size and format (default 4; --quick 2)")
    parser.add_argument("--quick", action="store_true", help="the small size, two rounds")
    reports.add_results_dir(parser, quick=True)
    parser.add_argument("--work", type=Path, help="keep the artifacts here (default: a temporary folder)")
    parser.add_argument("--report-from", type=Path, help="measure nothing: write the report (and plot) again from "
                        "a run's llm-<date>.json")
    args = parser.parse_args(argv)
    args.sizes = (args.sizes or ("llama-512x6" if args.quick else ",".join(llm_setup.DEFAULT_SIZES))).split(",")
    args.formats, args.variants = args.formats.split(","), args.variants.split(",")
    args.rounds = args.rounds or (2 if args.quick else 4)
    args.results_dir = reports.results_dir(args.results_dir, args.quick)
    for given, known, what in ((args.sizes, llm_setup.SIZES, "size"), (args.formats, llm_setup.FORMATS, "format"),
                               (args.variants, ALL_VARIANTS, "variant")):
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
    import llm_report

    if args.report_from:
        return write_report(json.loads(args.report_from.read_text()), args.report_from.parent,
                            args.report_from.stem.removeprefix("llm-"))
    started, load_before = time.perf_counter(), machine.load_average()
    measured = machine.our_version()  # the code measured: read before the run, which may outlast edits
    work_root = args.work or Path(tempfile.mkdtemp(prefix="llm-bench-"))
    records = []
    try:
        for size in args.sizes:
            records.append(measure(size, args.formats, args.variants, args.rounds, work_root))
    finally:
        if not args.work:
            shutil.rmtree(work_root, ignore_errors=True)
    run = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "records": records, "rounds": args.rounds,
           "load_before": load_before, "load_after": machine.load_average(),
           "seconds": time.perf_counter() - started, "variants": args.variants, "formats": args.formats,
           "executorch_openvino": measured,
           "optimum_int4_args": llm_setup.optimum_args("int4", llm_setup.SIZES[args.sizes[0]])}
    stamp = reports.stamp()
    if args.sizes != llm_setup.DEFAULT_SIZES:  # runs of other sizes the same day keep their own reports
        stamp = f"{'+'.join(args.sizes)}-{stamp}"
    args.results_dir.mkdir(parents=True, exist_ok=True)
    (args.results_dir / f"llm-{stamp}.json").write_text(json.dumps(run, indent=1))
    return write_report(run, args.results_dir, stamp)


def write_report(run: dict, directory: Path, stamp: str) -> int:
    import llm_report

    markdown, picture = directory / f"llm-{stamp}.md", directory / f"llm-{stamp}.png"
    text = "\n".join(llm_report.report(run, picture.name)) + "\n"
    say("\n" + text)
    markdown.write_text(text)
    llm_report.plot(run, picture, f"LLM decode and prefill, {stamp}")
    say(f"wrote {markdown} and {picture}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
