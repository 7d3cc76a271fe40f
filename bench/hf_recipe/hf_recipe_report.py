"""The optimum recipe benchmark's report (Markdown), from the run hf_recipe_bench.py records."""

from __future__ import annotations

import statistics
from typing import Dict, List, Optional

import hf_recipe_variants as variants
from common import machine
from common.reports import row, table_head
from common.stats import spread

OURS, XNNPACK, GENAI = variants.OURS, variants.XNNPACK, variants.GENAI
TARGET_DECODE = 1.0  # the issue's: ours' decode at least the xnnpack recipe's and GenAI's, same weight format
COMPRESSED_AT_MOST = 0.5  # an int8 / int4 artifact's size over the fp32 one's
DESCRIPTIONS = {
    OURS: "optimum-executorch 1.1.0, `main_export(..., recipe=\"openvino\", recipe_kwargs=...)` (our recipe: every "
          "method lowered with OpenvinoPartitioner; int8 / int4: `weights=` NNCF weight compression), run by "
          "optimum-executorch's `ExecuTorchModelForCausalLM` / `ExecuTorchModelForSpeechSeq2Seq` (ExecuTorch's "
          "pybindings), our library from the checkout's build",
    XNNPACK: "optimum-executorch 1.1.0, `recipe=\"xnnpack\"`; Llama: `use_custom_sdpa` and `use_custom_kv_cache` "
             "(ExecuTorch's custom SDPA and KV cache ops: its fastest path); int8 / int4: the task loader's torchao "
             "`qlinear` 8da8w / 8da4w (int8 dynamic activations, XNNPACK's fast kernels) and `qembedding` 8w; "
             "Whisper's loader also `qlinear_encoder` and the group size (the Llama's is fixed at 32 by the "
             "text-generation task); same runtime classes",
    GENAI: "optimum-intel 1.27 `optimum-cli export openvino` (stateful `...-with-past`, `--weight-format`, with "
           "openvino-tokenizers' tokenizer and detokenizer) of the same checkpoint, run by OpenVINO GenAI: "
           "`LLMPipeline` with `ATTENTION_BACKEND=SDPA` (its stateful path; token ids in) / `WhisperPipeline` "
           "(raw audio in), f32 compute and KV cache, LATENCY (ours' numerics)",
}


class FormatRun:
    """One model and weight format: each variant's figures, round by round."""

    def __init__(self, steps: int, data: dict):
        self.steps, self.data = steps, data
        self.variants: Dict[str, dict] = data.get("variants", {})
        self.rounds: List[Dict[str, dict]] = data.get("rounds", [])

    def prefill(self, variant: str) -> List[float]:
        return [r[variant]["prefill_ms"] for r in self.rounds if variant in r]

    def decode(self, variant: str) -> List[float]:
        return [self.steps * 1e3 / r[variant]["decode_ms"] for r in self.rounds if variant in r]

    def extra(self, variant: str, key: str) -> List[float]:
        return [r[variant][key] for r in self.rounds if variant in r and key in r[variant]]

    def decode_ratios(self, variant: str, reference: str) -> List[float]:
        """Per round: the variant's tokens/s over the reference's."""
        return [r[reference]["decode_ms"] / r[variant]["decode_ms"] for r in self.rounds
                if variant in r and reference in r]

    def prefill_ratios(self, variant: str, reference: str) -> List[float]:
        return [r[variant]["prefill_ms"] / r[reference]["prefill_ms"] for r in self.rounds
                if variant in r and reference in r]

    def status(self, variant: str) -> Optional[str]:
        entry = self.variants.get(variant)
        if entry is None:
            return "not run"
        if entry.get("error"):
            return "failed: " + entry["error"].strip().splitlines()[0]
        return None if self.decode(variant) else "failed: not timed"


def _ratio(values: List[float]) -> str:
    return spread(values, ".2f") + "×" if values else "–"


def _mb(kb: Optional[float]) -> str:
    return f"{kb / 1024:.0f}" if kb else "–"


def _correctness(entry: dict) -> str:
    check = entry.get("correctness")
    if not check:
        return "–"
    text = (f"ids = eager ({check['steps']}/{check['steps']})" if check["ids_equal"] else
            f"ids differ from step {check['first_divergence']} ({check['agreement'] * 100:.0f}% equal)")
    if "max_abs" in check:
        text += (f"; logits max abs err {check['prompt_max_abs']:.2g} (first token), "
                 f"{check['max_abs']:.2g} (to divergence)")
    return text


def table(run: FormatRun, fmt: str, kind: str, fp32_bytes: Dict[str, int]) -> List[str]:
    prefill = "prefill ms (128-token prompt)" if kind == "llama" else "prefill ms (encoder + decoder prompt)"
    lines = [f"### {fmt} weights", "",
             *table_head(["variant", "export s", "artifact MB", "load s", "cold first token s", prefill,
                          "decode tok/s", "decode tok/s / xnnpack's", "decode tok/s / genai's", "prefill ms / xnnpack's",
                          "prefill ms / genai's",
                          "peak RSS MB", "added MB", "correctness (vs eager PyTorch, fp32)"], "l" + "r" * 12 + "l")]
    for variant, entry in run.variants.items():
        export, ready, probe, final = (entry.get(k) or {} for k in ("export", "ready", "probe", "final"))
        exported = "error" not in export and "seconds" in export
        cells = [variant, (f"{export['seconds']:.0f}" + (" (earlier run)" if export.get("reused") else "")) if exported
                 else "–",
                 f"{export['bytes'] / 2**20:.0f}" if exported else "–",
                 f"{ready['load_ms'] / 1e3:.2f}" if "load_ms" in ready else "–",
                 f"{(ready['load_ms'] + probe['prefill_ms']) / 1e3:.2f}" if "load_ms" in ready and "prefill_ms" in probe
                 else "–"]
        why = run.status(variant)
        if why:
            lines.append(row(*cells, why[:300].replace("|", "/"), *[""] * 8))
            continue
        peak = final.get("peak_kb") or probe.get("peak_kb")
        added = (peak - ready["baseline_kb"]) if peak and ready.get("baseline_kb") else None
        cells += [spread(run.prefill(variant), ".1f"), spread(run.decode(variant), ".1f"),
                  _ratio(run.decode_ratios(variant, XNNPACK)) if variant != XNNPACK else "1",
                  _ratio(run.decode_ratios(variant, GENAI)) if variant != GENAI else "1",
                  _ratio(run.prefill_ratios(variant, XNNPACK)) if variant != XNNPACK else "1",
                  _ratio(run.prefill_ratios(variant, GENAI)) if variant != GENAI else "1",
                  _mb(peak), _mb(added), _correctness(entry)]
        lines.append(row(*cells))
    loads = run.data.get("load_average")
    if loads:
        lines += ["", f"Load average (1 min) {loads[0]:.2f} when this format's workers started, {loads[1]:.2f} when "
                  "its rounds ended."]
    if kind == "whisper":
        parts = []
        for variant in run.variants:
            features, encoder = run.extra(variant, "features_ms"), run.extra(variant, "encoder_ms")
            if features:
                parts.append(f"{variant} {spread(features, '.0f')} ms" + (
                    f" (its encoder alone: {spread(encoder, '.0f')} ms)" if encoder else ""))
        if parts:
            lines += ["Feature extraction of the 30 s (outside the prefill column): " + "; ".join(parts) + " — "
                      "ExecuTorch's variants use transformers' WhisperFeatureExtractor (NumPy), GenAI its own C++ one."]
    for variant, entry in run.variants.items():
        size = (entry.get("export") or {}).get("bytes")
        # int8 weights are a quarter of fp32's, int4 less: above half, the weights were not compressed.
        if fmt != "fp32" and size and fp32_bytes.get(variant) and size > COMPRESSED_AT_MOST * fp32_bytes[variant]:
            lines += [f"**The {fmt} artifact of `{variant}` is {size / fp32_bytes[variant]:.0%} of its fp32 one: most "
                      "of its weight bytes were not compressed.**"]
    genai_wall = run.extra(GENAI, "wall_ms")
    if genai_wall:
        lines += [f"GenAI timed by us around generate(): {spread(genai_wall, '.0f')} ms a conversation."]
    for pair, check in run.data.get("cross", {}).items():
        a, b = pair.split("-vs-")
        lines += [f"{a} against {b} (same weights, same format): greedy ids "
                  + ("identical" if check["ids_equal"] else
                     f"{check['agreement'] * 100:.0f}% equal, first divergence at step {check['first_divergence']}")
                  + "."]
    return lines


def _check(values: List[float]) -> str:
    if not values:
        return "n/a"
    value = statistics.median(values)
    return f"{'met' if value >= TARGET_DECODE else '**not met**'} ({spread(values, '.2f')}×)"


def targets(runs) -> List[str]:
    lines = table_head(["model", "format", "ours' decode ≥ 1.0× xnnpack recipe",
                        "ours' decode ≥ 1.0× GenAI (stateful)", "fp32 ids identical to eager"])
    for model, fmt, run in runs:
        why = run.status(OURS)
        if why:
            lines.append(row(model, fmt, f"n/a: ours {why[:200]}", "n/a", "n/a"))
            continue
        versus = []
        for other in (XNNPACK, GENAI):
            other_why = run.status(other)
            versus.append(f"n/a: {other} {other_why[:150]}" if other_why else _check(run.decode_ratios(OURS, other)))
        check = run.variants[OURS].get("correctness", {})
        ids = ("–" if fmt != "fp32" or not check else "met" if check["ids_equal"] else
               f"**not met** (from step {check['first_divergence']})")
        lines.append(row(model, fmt, *versus, ids))
    return lines


def report(run: dict) -> List[str]:
    load = machine.machine(run.get("load_before"), run.get("load_after"))
    versions = run.get("versions", {})
    lines = [f"# optimum-executorch `openvino` recipe against `xnnpack` and optimum-intel + GenAI, {run['date']}", "",
             f"- {load}; total time {run.get('seconds', 0) / 60:.0f} min. The machine ran other work during the run "
             "(its two cores were shared): absolute figures are noisy; the ratios, taken within each round of "
             "interleaved turns, are the comparable ones.",
             f"- executorch_openvino {run.get('executorch_openvino')}" + (
                 f"; **ours ran the package in `{run['package']}`, not the checkout's**" if run.get("package") else ""),
             "- optimum-executorch's environment (ours, xnnpack; " + f"`{run.get('optimum_python')}`): "
             + ", ".join(f"{k} {v}" for k, v in versions.get("optimum", {}).items()),
             "- main environment (genai): " + ", ".join(f"{k} {v}" for k, v in versions.get("main", {}).items()),
             f"- {run['rounds']} interleaved rounds per model and weight format: every variant loaded in a worker "
             "process of its environment, one conversation each per round, the order rotated every round, each "
             "round a new input (the same for every variant). Cells: median over the rounds [lowest–highest]; "
             "ratios are taken within each round, then summarised the same way.", ""]
    runs = []
    for record in run["records"]:
        size = record["size"]
        lines += [f"## {size['name']}: {size['description']}", ""]
        prepared, loaded = record.get("prepare", {}), record.get("reference", {})
        if "error" in prepared:
            lines += [f"Preparation failed: {prepared['error'].splitlines()[0]}", ""]
            continue
        lines += [f"The checkpoint (save_pretrained by transformers {prepared.get('transformers')}) "
                  + (f"loads in transformers {loaded['transformers']} too: eager greedy ids "
                     f"{'identical' if loaded['ids_equal'] else 'different'}, logits max abs difference "
                     f"{loaded['logits_max_abs']:.2g}." if "error" not in loaded else
                     f"does not load in optimum-executorch's environment: {loaded['error'].splitlines()[0]}")
                  + f" Its eager greedy ids hold {prepared.get('distinct_ids')} distinct tokens of "
                  f"{len(prepared.get('ids', []))}.", ""]
        fp32_bytes = {variant: entry["export"]["bytes"] for variant, entry in
                      record.get("formats", {}).get("fp32", {}).get("variants", {}).items()
                      if "bytes" in (entry.get("export") or {})}
        for fmt, data in record.get("formats", {}).items():
            format_run = FormatRun(size["steps"], data)
            runs.append((size["name"], fmt, format_run))
            lines += table(format_run, fmt, record["kind"], fp32_bytes) + [""]
    lines += ["## Targets (the issue's), ours", "", *targets(runs), ""]
    notes = (run.get("notes") or "").strip()
    if notes:
        lines += ["## Why", "", notes, ""]
    lines += ["## Variants", ""] + [f"- `{name}`: {text}." for name, text in DESCRIPTIONS.items()]
    settings = {}
    for record in run["records"]:
        for fmt, data in record.get("formats", {}).items():
            for variant, entry in data.get("variants", {}).items():
                settings[(record["size"]["name"], fmt, variant)] = entry.get("settings", "")
    lines += ["", "Exact settings:", ""] + [f"- {m} {f} `{v}`: `{s}`" for (m, f, v), s in settings.items()]
    lines += ["", "## How it is measured", "",
              "- One checkpoint per model, made from a config with random weights and saved once with "
              "`save_pretrained` (main environment); every variant exports from it.",
              "- Export s: the export call alone, in a fresh process of the variant's environment, after its imports "
              "(optimum-executorch's `main_export`; optimum-intel's `optimum-cli export openvino` run in-process), "
              "loading the checkpoint, quantization, lowering and writing included. Artifact MB: the .pte, or the "
              "OpenVINO models' .bin files (tokenizers left out).",
              "- Load s: in a fresh worker process, with the variant's imports done: `from_pretrained` of the "
              "exported folder (ExecuTorch's pybindings load methods, and so compile the OpenVINO model, at the "
              "first call), or the GenAI pipeline's constructor (it compiles). Cold first token s: load plus the "
              "first conversation's prefill, which catches what a variant defers to its first call.",
              "- Prefill: Llama: the 128-token prompt in one call to its first token (argmax included); GenAI: its "
              "TTFT. Whisper: the encoder on 30 s of features and the decoder prompt "
              "<|startoftranscript|><|notimestamps|> to the first token; GenAI: TTFT less its own feature "
              "extraction. Decode: the greedy steps after the first token, steps / time; GenAI: 1 / TPOT "
              "(it generates steps + 1 tokens, ignore_eos).",
              "- Peak RSS: VmHWM of the worker process at its end (reset after its imports; load, first "
              "conversation and every round included); added: that peak less the RSS after the imports.",
              "- Correctness: the first conversation's greedy ids (and logits, ExecuTorch's variants) against eager "
              "PyTorch fp32 of the same checkpoint in the variant's environment; quantized formats are compared "
              "with fp32 eager, so their differences are the quantization's.",
              "- torch, which only makes the token tensors and takes the argmax in the workers, runs with one thread "
              "(bench/llm's reason: its idle OpenMP threads would take cores from the runtimes')."]
    return lines
