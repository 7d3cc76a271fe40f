"""Hugging Face's own export path, side by side: optimum-executorch 1.1.0 with our `openvino` recipe,
optimum-executorch's `xnnpack` recipe at its fastest settings, and optimum-intel's OpenVINO export run
by OpenVINO GenAI (LLMPipeline's stateful path / WhisperPipeline), on one checkpoint per model made
from a config with random weights: a Llama of SmolLM2-135M's shape (text generation) and a Whisper
of whisper-base's shape (speech recognition), fp32, int8 and int4 weights.

Figures: export time, load time (and the cold first token), prefill ms, decode tokens/s, peak RSS of
the process running the model, greedy ids against eager PyTorch. optimum-executorch needs
transformers 5.0.0rc1, optimum-intel 4.57.x: each variant runs in a worker process of its own
environment, driven from here; per model and weight format the variants' workers stay loaded and
take turns, one conversation each per round, the order rotated every round.

  .venv/bin/python bench/hf_recipe/hf_recipe_bench.py [--models llama,whisper] [--formats fp32,int8,int4]
      [--variants ours,xnnpack,genai] [--rounds 6] [--smoke] [--optimum-python PATH] [--work DIR] [--results-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # bench/
from common import paths, processes  # noqa: E402

import hf_recipe_models as models  # noqa: E402
import hf_recipe_variants as variants  # noqa: E402
from executorch_openvino import benchmark  # noqa: E402
from executorch_openvino.benchmark.report import ratio as _vs  # noqa: E402
from executorch_openvino.benchmark.machine import load_average  # noqa: E402
from peers import decoding  # noqa: E402

say = print

WORKER = HERE / "hf_recipe_worker.py"
# Untimed conversations each worker has after its probe: every runtime's first few conversations ran up
# to 25 % slower a step on the 2-core machines here (GenAI's LLMPipeline 11.0 -> 8.8 ms from the first to
# the fifth), and five rounds did not outlast it.
WARMUP_CONVERSATIONS = 2
# Variants whose export an earlier run left in the same --work folder is used again (--reuse-exports):
# the checkpoint is made from a fixed seed, and the probe's ids against eager show a stale one.
REUSE_EXPORTS: set = set()
TIMEOUTS = {"prepare": 1800, "reference": 1800, "export": 3600, "ready": 1200, "run": 900, "quit": 120}
# optimum-executorch's environment: OPTIMUM_PYTHON, else the Makefile's .venv-optimum.
DEFAULT_OPTIMUM_PYTHON = os.environ.get("OPTIMUM_PYTHON") or str(paths.REPO / ".venv-optimum" / "bin" / "python")
OPTIMUM_DISTRIBUTIONS = ("torch", "executorch", "optimum-executorch", "optimum", "transformers", "torchao", "openvino",
                         "nncf")
MAIN_DISTRIBUTIONS = ("torch", "transformers", "optimum", "optimum-intel", "openvino", "openvino-genai",
                      "openvino-tokenizers", "nncf")


REPORT = {
    "description": [
        "What a Hugging Face user gets from each export path on the same checkpoint (random weights): ours "
        "(optimum-executorch's main_export with recipe=\"openvino\", run by its ExecuTorchModelForCausalLM / "
        "ExecuTorchModelForSpeechSeq2Seq, a Python call a token; ours-engine: the same export run by this package's engine, as its docs tell users to, the token loop in C++), its xnnpack recipe at its fastest settings (custom SDPA and KV cache, "
        "8da8w / 8da4w), and optimum-intel's export run by OpenVINO GenAI (LLMPipeline's stateful path / "
        "WhisperPipeline, ours' f32 numerics). Each export in a fresh process (its time: the export call alone); "
        "per model and weight format one serving worker per variant (load, then a first conversation: cold first "
        "token, greedy ids and logits against eager; then two untimed ones), then rounds: one conversation each per "
        "round, the order "
        "rotated, a new prompt (or 30 s of audio) each round. Cells: median [lowest–highest] over the rounds, "
        "ratios per round. Prefill: the Llama's 128-token prompt to its first token; Whisper's encoder and "
        "decoder prompt (its features are extracted before the clock)."],
    "tables": [{"title": "Export, load, prefill, decode, memory", "each": "group", "columns": [
        {"title": "variant", "field": "variant"}, {"title": "export s", "field": "export_s", "format": ".0f"},
        {"title": "artifact MB", "field": "artifact_mb", "format": ".0f"},
        {"title": "load s", "field": "load_s", "format": ".2f"},
        {"title": "cold first token s", "field": "first_token_s", "format": ".2f"},
        {"title": "prefill ms", "field": "prefill_ms", "stat": "spread", "format": ".1f"},
        {"title": "decode tok/s", "field": "decode_tok_s", "stat": "spread", "format": ".1f"},
        _vs("decode / xnnpack", "decode_tok_s", variants.XNNPACK), _vs("decode / genai", "decode_tok_s", variants.GENAI),
        _vs("prefill / xnnpack", "prefill_ms", variants.XNNPACK), _vs("prefill / genai", "prefill_ms", variants.GENAI),
        {"title": "peak RSS MB", "field": "peak_mb", "format": ".0f"},
        {"title": "added MB", "field": "added_mb", "format": ".0f"},
        {"title": "correctness (vs eager)", "field": "correctness"}]}],
    "targets": [dict(_vs("decode ≥ 1.0× the xnnpack recipe", "decode_tok_s", variants.XNNPACK), at_least=1.0,
                     where={"variant": variant}) for variant in (variants.OURS, variants.OURS_ENGINE)]
               + [dict(_vs("decode ≥ 1.0× GenAI", "decode_tok_s", variants.GENAI), at_least=1.0,
                       where={"variant": variant}) for variant in (variants.OURS, variants.OURS_ENGINE)]
               + [dict(_vs("prefill ≤ 1.0× GenAI's time", "prefill_ms", variants.GENAI), at_most=1.0,
                       where={"variant": variants.OURS_ENGINE})],
}


class Environments:
    """The Python and the environment variables of each side's workers."""

    def __init__(self, optimum_python: str):
        common = dict(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
        library = paths.use_built_library()
        # The checkout's package first on the path (the optimum environment may hold an older wheel),
        # the build's library.
        self.optimum = (optimum_python, processes.child_env(**common, PYTHONPATH=paths.PYTHON,
                                                            EXECUTORCH_OPENVINO_LIBRARY=library))
        self.main = (sys.executable, processes.child_env(**common))

    def of(self, variant: str):
        return self.optimum if variant in variants.OPTIMUM_ENV else self.main


def _short(error: str) -> str:
    return (error.strip().splitlines() or ["?"])[0]


def run_step(side, kind: str, work: Path, *args: object) -> dict:
    """A one-shot worker step (prepare, reference, export); its JSON, or {"error": ...}."""
    python, env = side
    name = "-".join([kind] + [str(a) for a in args if "/" not in str(a)])
    out = work / f"step-{name}.json"
    out.unlink(missing_ok=True)
    log = work / "logs" / f"{name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as stream:
        try:
            done = subprocess.run([python, str(WORKER), kind, *map(str, args), str(out)], stdout=stream,
                                  stderr=subprocess.STDOUT, env=env, timeout=TIMEOUTS[kind])
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {TIMEOUTS[kind]} s (log: {log})"}
    if out.is_file():
        return json.loads(out.read_text())
    tail = log.read_text()[-1500:]
    return {"error": f"the process died (exit {done.returncode}); log {log}: {tail}"}


class Served:
    """A serving worker: one variant loaded, answering one request at a time."""

    def __init__(self, side, variant: str, fmt: str, size: str, work: Path):
        python, env = side
        self.log = work / "logs" / f"serve-{variant}-{fmt}.log"
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.stderr = self.log.open("w")
        self.process = subprocess.Popen([python, str(WORKER), "serve", variant, fmt, size, str(work)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, text=True,
                                        env=env, bufsize=1)

    def receive(self, timeout: float) -> dict:
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if not ready:
            raise TimeoutError(f"no answer in {timeout:.0f} s")
        line = self.process.stdout.readline()
        if not line:
            self.process.wait(timeout=30)
            raise RuntimeError(f"the worker died (exit {self.process.returncode}): "
                               f"{self.log.read_text()[-1200:]}")
        return json.loads(line)

    def request(self, payload: dict, timeout: float) -> dict:
        self.process.stdin.write(json.dumps(payload) + "\n")
        self.process.stdin.flush()
        return self.receive(timeout)

    def close(self) -> Optional[dict]:
        """Its final memory figures (None when it no longer answers); the process is gone after."""
        final = None
        try:
            if self.process.poll() is None:
                final = self.request({"op": "quit"}, TIMEOUTS["quit"])
                self.process.wait(timeout=TIMEOUTS["quit"])
        except Exception:  # noqa: BLE001  (a worker that hangs is killed, its figures lost)
            pass
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.stderr.close()
        return final


# --- correctness ---------------------------------------------------------------------------------------------


def compare(probe: dict, reference: dict, steps: int) -> dict:
    """Greedy ids (and logits, where the variant gives them) of a probe against an eager reference."""
    return decoding.compare(probe["ids"], probe.get("logits"), reference["ids"], reference.get("logits"), steps)


# --- one model ---------------------------------------------------------------------------------------------


def measure_format(size: models.Size, fmt: str, chosen: List[str], rounds: int, work: Path, envs: Environments,
                   references: Dict[str, dict]) -> dict:
    import torch

    entries: Dict[str, dict] = {variant: {"settings": variants.describe(variant, fmt, size)} for variant in chosen}
    for variant in chosen:
        entry = entries[variant]
        earlier = work / f"step-export-{variant}-{fmt}-{size.name}.json"
        if variant in variants.SHARES_EXPORT:
            source = variants.SHARES_EXPORT[variant]
            shared = entries.get(source, {}).get("export") or {"error": f"runs {source}'s export: choose {source} too"}
            entry["export"] = dict(shared, shared_with=source)
        elif variant in REUSE_EXPORTS and earlier.is_file() and (work / f"{variant}-{fmt}").is_dir():
            entry["export"] = dict(json.loads(earlier.read_text()), earlier_run=True)
            say(f"  {variant} {fmt}: the export of an earlier run in this work folder, reused")
        else:
            entry["export"] = run_step(envs.of(variant), "export", work, variant, fmt, size.name, work)
        if "error" in entry["export"]:
            entry["error"] = "export: " + entry["export"]["error"]
            say(f"  {variant} {fmt}: export failed: {_short(entry['export']['error'])[:300]}")
        else:
            say(f"  {variant} {fmt}: exported in {entry['export']['seconds']:.0f} s "
                f"({entry['export']['bytes'] / 2**20:.0f} MB)")
    # Each worker loads and runs its probe alone (the others idle), then all take turns.
    served: Dict[str, Served] = {}
    loads = [load_average()]
    try:
        for variant in [v for v in chosen if "error" not in entries[v]]:
            entry = entries[variant]
            worker = Served(envs.of(variant), variant, fmt, size.name, work)
            try:
                entry["ready"] = worker.receive(TIMEOUTS["ready"])
                if "error" in entry["ready"]:
                    raise RuntimeError(entry["ready"]["error"])
                entry["probe"] = worker.request({"op": "run", "round": -1, "keep": True}, TIMEOUTS["run"])
                if "error" in entry["probe"]:
                    raise RuntimeError(entry["probe"]["error"])
            except Exception as error:  # noqa: BLE001  (reported; the others go on)
                entry["error"] = f"load/probe: {type(error).__name__}: {error}"
                say(f"  {variant} {fmt}: {_short(entry['error'])[:300]}")
                entry["final"] = worker.close()
                continue
            served[variant] = worker
            probe = torch.load(work / f"probe-{variant}-{fmt}.pt")
            side = "optimum" if variant in variants.OPTIMUM_ENV else "main"
            entry["correctness"] = compare(probe, references[side], size.steps)
            entry["side"] = side
            say(f"  {variant} {fmt}: loaded in {entry['ready']['load_ms'] / 1e3:.2f} s, first conversation "
                f"prefill {entry['probe']['prefill_ms']:.0f} ms; ids equal to eager: "
                f"{entry['correctness']['ids_equal']} ({entry['correctness']['agreement'] * 100:.0f}%)")
        def talk(variant: str, round_index: int, what: str) -> Optional[dict]:
            """One conversation of a served variant; None when it failed (the worker is then closed)."""
            try:
                answer = served[variant].request({"op": "run", "round": round_index}, TIMEOUTS["run"])
            except Exception as error:  # noqa: BLE001
                answer = {"error": f"{type(error).__name__}: {error}"}
            if "error" not in answer:
                return answer
            entries[variant]["error"] = f"{what}: {_short(answer['error'])}"
            say(f"  {variant} {fmt}: {what} failed: {_short(answer['error'])[:300]}")
            entries[variant]["final"] = served.pop(variant).close()
            return None

        for _ in range(WARMUP_CONVERSATIONS):
            for variant in list(served):
                talk(variant, -1, "warm-up")
        per_round: List[Dict[str, dict]] = []
        order = list(served)
        for r in range(rounds if served else 0):
            results = {}
            for variant in benchmark.round_order(order, r):
                if variant in served and (answer := talk(variant, r, f"round {r}")) is not None:
                    results[variant] = answer
            per_round.append(results)
            say(f"  {fmt} round {r + 1}/{rounds}: " + "; ".join(
                f"{v} {t['prefill_ms']:.0f} ms / {size.steps * 1e3 / t['decode_ms']:.1f} tok/s"
                for v, t in results.items()))
    finally:
        for variant, worker in served.items():
            entries[variant]["final"] = worker.close()
    loads.append(load_average())
    # The same weight format's ours against GenAI: both compress with NNCF the same way.
    cross = {}
    probes = {v: torch.load(work / f"probe-{v}-{fmt}.pt") for v in chosen
              if (work / f"probe-{v}-{fmt}.pt").is_file() and "probe" in entries[v]}
    for a, b in ((variants.OURS, variants.GENAI), (variants.OURS, variants.XNNPACK)):
        if a in probes and b in probes:
            cross[f"{a}-vs-{b}"] = compare(probes[a], probes[b], size.steps)
    return {"variants": entries, "rounds": per_round, "order": list(entries), "load_average": loads,
            "cross": cross}


def measure(kind: str, size_name: str, formats: List[str], chosen: List[str], rounds: int, work_root: Path,
            envs: Environments, keep: bool) -> dict:
    import torch

    size = models.SIZES[size_name]
    work = work_root / size_name
    work.mkdir(parents=True, exist_ok=True)
    say(f"== {size_name}: {size.describe()}")
    record = {"kind": kind, "size": models.size_record(size), "formats": {}}
    record["prepare"] = run_step(envs.main, "prepare", work, size_name, work, rounds)
    if "error" in record["prepare"]:
        say(f"  preparation failed: {_short(record['prepare']['error'])}")
        return record
    say(f"  checkpoint saved by transformers {record['prepare']['transformers']} "
        f"({record['prepare']['checkpoint_seconds']:.0f} s); eager greedy ids: "
        f"{record['prepare']['distinct_ids']} distinct of {len(record['prepare']['ids'])}")
    record["reference"] = run_step(envs.optimum, "reference", work, size_name, work)
    if "error" in record["reference"]:
        say(f"  the optimum environment cannot load it: {_short(record['reference']['error'])}")
        return record
    say(f"  loaded by transformers {record['reference']['transformers']}: ids equal "
        f"{record['reference']['ids_equal']}, logits max abs difference {record['reference']['logits_max_abs']:.2g}")
    references = {"main": torch.load(work / "reference-main.pt"), "optimum": torch.load(work / "reference-optimum.pt")}
    for fmt in formats:
        record["formats"][fmt] = measure_format(size, fmt, chosen, rounds, work, envs, references)
        if not keep:
            for variant in chosen:
                shutil.rmtree(work / f"{variant}-{fmt}", ignore_errors=True)
    return record


# --- the run ---------------------------------------------------------------------------------------------------


def versions(side, names) -> Dict[str, str]:
    """The distributions' versions in a side's environment."""
    python, env = side
    code = ("import importlib.metadata as m, json, sys\n"
            "def v(n):\n  try: return m.version(n)\n  except Exception: return 'not installed'\n"
            f"print(json.dumps({{n: v(n) for n in {list(names)!r}}}))")
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env)
    try:
        return processes.last_json(done.stdout)
    except ValueError:
        return {"error": done.stderr.strip()[-300:]}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(models.KINDS), help="llama, whisper (default both)")
    parser.add_argument("--sizes", help="a size per model, comma-separated, of " + ", ".join(models.SIZES)
                        + f" (default {', '.join(models.DEFAULT_SIZES.values())}; --smoke: the smoke sizes)")
    parser.add_argument("--formats", default=",".join(models.FORMATS), help="fp32, int8, int4 (default all)")
    parser.add_argument("--variants", default=",".join(variants.VARIANTS), help="ours, xnnpack, genai (default all)")
    parser.add_argument("--reuse-exports", default="", metavar="VARIANTS",
                        help="with --work: use these variants' exports from an earlier run there (their export "
                        "time is that run's), e.g. xnnpack,genai while ours changes")
    parser.add_argument("--rounds", type=int, help="interleaved rounds per model and format (default 6; --smoke 2)")
    parser.add_argument("--smoke", action="store_true", help="tiny models, two rounds: every variant end to end")
    parser.add_argument("--optimum-python", default=DEFAULT_OPTIMUM_PYTHON,
                        help="optimum-executorch's environment's Python (default $OPTIMUM_PYTHON, else "
                             ".venv-optimum/bin/python)")
    parser.add_argument("--work", type=Path, help="keep checkpoints, artifacts and logs here (default: a temporary "
                        "folder, removed)")
    parser.add_argument("--results-dir", type=Path)
    args = parser.parse_args(argv)
    args.models = args.models.split(",")
    sizes = args.sizes.split(",") if args.sizes else [
        (models.SMOKE_SIZES if args.smoke else models.DEFAULT_SIZES)[kind] for kind in args.models]
    if len(sizes) != len(args.models):
        parser.error("--sizes needs one size per model")
    args.sizes = sizes
    args.formats, args.variants = args.formats.split(","), args.variants.split(",")
    REUSE_EXPORTS.update(v for v in args.reuse_exports.split(",") if v)
    args.rounds = args.rounds or (2 if args.smoke else 6)
    args.results_dir = args.results_dir or (paths.QUICK_RESULTS if args.smoke else paths.RESULTS)
    for given, known, what in ((args.models, models.KINDS, "model"), (args.formats, models.FORMATS, "format"),
                               (args.variants, variants.VARIANTS, "variant"), (args.sizes, models.SIZES, "size")):
        unknown = [name for name in given if name not in known]
        if unknown:
            parser.error(f"unknown {what}(s): {', '.join(unknown)}; known: {', '.join(known)}")
    for kind, size in zip(args.models, args.sizes):
        if models.SIZES[size].kind != kind:
            parser.error(f"size {size} is not a {kind}")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if not Path(args.optimum_python).is_file():
        parser.error(f"no optimum-executorch environment at {args.optimum_python} (make venv-optimum, or "
                     "--optimum-python / OPTIMUM_PYTHON)")
    return args


def record_rows(run: dict, record: dict) -> None:
    """The run's rows from one model's record: one per variant and weight format."""
    size = models.SIZES[record["size"]["name"]]
    for note in ("prepare", "reference"):
        if "error" in record.get(note, {}):
            run["notes"].append(f"{size.name}: {note} failed: {_short(record[note]['error'])}")
    for fmt, measured in record["formats"].items():
        for variant, entry in measured["variants"].items():
            export, ready, probe, final = (entry.get(k) or {} for k in ("export", "ready", "probe", "final"))
            talks = [r[variant] for r in measured["rounds"] if variant in r]
            peak = final.get("peak_kb") or probe.get("peak_kb")
            row = benchmark.add_row(
                run, f"{size.name}, {fmt}", variant, export_s=export.get("seconds"),
                artifact_mb=export["bytes"] / 2**20 if "bytes" in export else None,
                load_s=ready["load_ms"] / 1e3 if "load_ms" in ready else None,
                first_token_s=(ready["load_ms"] + probe["prefill_ms"]) / 1e3 if "prefill_ms" in probe else None,
                prefill_ms=[t["prefill_ms"] for t in talks] or None,
                decode_tok_s=[size.steps * 1e3 / t["decode_ms"] for t in talks] or None,
                peak_mb=peak / 1024 if peak else None,
                added_mb=(peak - ready["baseline_kb"]) / 1024 if peak and ready.get("baseline_kb") else None,
                correctness=decoding.correctness(entry.get("correctness", {})))
            if entry.get("error"):
                row["correctness"] = f"failed: {_short(entry['error'])}"[:300]
            if export.get("earlier_run"):
                run["notes"].append(f"{size.name}, {fmt}, {variant}: the export of an earlier run in the same work "
                                    "folder (its export time is that run's)")


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    envs = Environments(args.optimum_python)
    versions_of = {"main": versions(envs.main, MAIN_DISTRIBUTIONS), "optimum": versions(envs.optimum, OPTIMUM_DISTRIBUTIONS)}
    run = benchmark.new_run("hf-recipe", "optimum-executorch's openvino recipe against its xnnpack recipe and GenAI",
                            checkout=paths.REPO, report=REPORT,
                            settings={"rounds": args.rounds, "optimum-executorch's environment": args.optimum_python,
                                      **{f"{side} environment": ", ".join(f"{k} {v}" for k, v in found.items())
                                         for side, found in versions_of.items()}})
    work_root = args.work or Path(tempfile.mkdtemp(prefix="hf-recipe-bench-"))
    try:
        for kind, size in zip(args.models, args.sizes):
            run["notes"].append(f"{size}: {models.SIZES[size].describe()}")
            record_rows(run, measure(kind, size, args.formats, args.variants, args.rounds, work_root, envs,
                                     keep=bool(args.work)))
    finally:
        if not args.work:
            shutil.rmtree(work_root, ignore_errors=True)
    markdown = benchmark.save(benchmark.finish(run), args.results_dir)
    print(markdown.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
