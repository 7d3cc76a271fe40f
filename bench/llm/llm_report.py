"""The LLM benchmark's report (Markdown) and plot, from the run llm_bench.py records."""

from __future__ import annotations

import datetime
import statistics
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import llm_setup
from common import machine
from common.reports import pyplot, row, save_figure, table_head
from common.stats import spread

GENAI, GENAI_DEFAULT, NATIVE, OURS, OURS_RUNNER = "genai", "genai-default", "native", "ours", "ours-runner"
XNNPACKS = ("xnnpack", "xnnpack-custom")
TARGET_DECODE, TARGET_PREFILL, TARGET_MEMORY = 1.0, 1.1, 1.1
DESCRIPTIONS = {
    OURS: "ExecuTorch's Llama (KV cache, dynamic prompt) lowered with our OpenvinoPartitioner (caches as OpenVINO "
          "state), executorch.runtime, loaded with attention=grown (the default until 2026-12-06); int8/int4: "
          "executorch_openvino.quantization's NNCF weight compression",
    "ours-fast": "the same with OpenvinoPartitioner(precision=\"fast\"): the CPU's own default precision (bf16 "
                 "compute where the CPU has bf16, as GenAI's default; every other property the delegate's own)",
    "ours-paged": "ours' program loaded with the attention=paged option: its grown caches rewritten at load for "
                  "OpenVINO's paged attention (the form GenAI's default runs), the caches held by the delegate",
    "ours-fast-paged": "ours-fast's program loaded with attention=paged",
    OURS_RUNNER: "ours' program driven by ExecuTorch's LLM runner (TextLLMRunner: its C++ prefill and generation "
                 "loop behind Python bindings) with the benchmark's tokenizer, fed the prompt's text; timed by the "
                 "runner's stats (time to first token, then the generated tokens after the first)",
    "xnnpack": "the same export, XnnpackPartitioner; int8/int4: ExecuTorch's 8da8w / 8da4w",
    "xnnpack-custom": "as ExecuTorch's export_llama does it for XNNPACK: custom SDPA and KV cache ops, "
                      "XnnpackDynamicallyQuantizedPartitioner then XnnpackPartitioner; 8da8w / 8da4w",
    "et-kernels": "the same export with no delegate: the kernels in ExecuTorch's Python runtime; int8: weight-only "
                  "int8 (export_llama's int8); no int4 (see its row)",
    NATIVE: "optimum-intel's stateful IR of the equivalent Hugging Face Llama (same weights), one ov.InferRequest "
            "loop (input_ids, attention_mask, position_ids, beam_idx: the request's own tensors, reshaped and written "
            "in place, as GenAI does), f32 compute and KV cache",
    GENAI: "openvino_genai.LLMPipeline on that IR, token ids in (TokenizedInputs), greedy, ignore_eos; "
           "INFERENCE_PRECISION_HINT f32, KV_CACHE_PRECISION f32 (ours' numerics); its default attention backend "
           "(paged attention, continuous batching); timed by its TTFT and TPOT",
    "genai-sdpa": "the same with ATTENTION_BACKEND SDPA: LLMPipeline's stateful path (the IR's own ReadValue/Assign "
                  "caches and attention, the form ours runs), so the difference to genai is the backend's",
    llm_setup.LLAMACPP: "llama.cpp's CPU backend (llama-cpp-python 0.3.36's vendored source, GGML_NATIVE), the same "
                        "weights as GGUF: F32, Q8_0, Q4_0 (its own int4, groups of 32); its llama-bench with a prompt "
                        "of the same length and the same number of generated tokens, 2 threads, in the same rounds; "
                        "peak RSS: its process's",
    llm_setup.LLAMACPP_OPENVINO: "llama.cpp's own OpenVINO backend (ggml-openvino, the same source, built against "
                                 "the openvino wheel's C++ package) on the same GGUF, the CPU device, stateful "
                                 "(GGML_OPENVINO_STATEFUL_EXECUTION=1); llama-bench as above",
    GENAI_DEFAULT: "LLMPipeline with no properties (what a user gets: OpenVINO's default precision for this "
                   "CPU, bf16 where it has bf16 instructions, and its default KV cache precision)",
}


class FormatRun:
    """One size and weight format: each variant's per-round prefill ms and decode tokens/s."""

    def __init__(self, size: llm_setup.Size, data: dict):
        self.size, self.data = size, data
        self.variants: Dict[str, dict] = data.get("variants", {})
        self.rounds: List[Dict[str, dict]] = (data.get("rounds") or {}).get("rounds", [])

    def prefill(self, variant: str) -> List[float]:
        return [r[variant]["prefill_ms"] for r in self.rounds if variant in r]

    def decode(self, variant: str) -> List[float]:
        return [self.size.steps * 1e3 / r[variant]["decode_ms"] for r in self.rounds if variant in r]

    def fastest_xnnpack(self, r: dict) -> Optional[float]:
        rates = [self.size.steps * 1e3 / r[v]["decode_ms"] for v in XNNPACKS if v in r]
        return max(rates) if rates else None

    def decode_ratios(self, variant: str, reference: str) -> List[float]:
        """Per round: the variant's tokens/s over the reference's (reference "xnnpack*": the faster XNNPACK)."""
        out = []
        for r in self.rounds:
            if variant not in r:
                continue
            mine = self.size.steps * 1e3 / r[variant]["decode_ms"]
            theirs = (self.fastest_xnnpack(r) if reference == "xnnpack*" else
                      self.size.steps * 1e3 / r[reference]["decode_ms"] if reference in r else None)
            if theirs:
                out.append(mine / theirs)
        return out

    def prefill_ratios(self, variant: str, reference: str) -> List[float]:
        return [r[variant]["prefill_ms"] / r[reference]["prefill_ms"] for r in self.rounds
                if variant in r and reference in r]

    def memory(self, variant: str) -> Optional[Tuple[float, float, float]]:
        """(peak RSS MB, MB added by load + conversation, that over one copy of the weights plus the cache)."""
        entry = self.variants.get(variant, {})
        probe, export = entry.get("probe", {}), entry.get("export", {})
        if "peak_kb" not in probe or "bytes" not in export:
            return None
        added = (probe["peak_kb"] - probe["baseline_kb"]) * 1024
        return probe["peak_kb"] / 1024, added / 2**20, added / (export["bytes"] + self.size.cache_bytes())

    def status(self, variant: str) -> Optional[str]:
        """None when measured, else "n/a: why" or "failed: error"."""
        entry = self.variants.get(variant)
        if entry is None:
            return "n/a: not run"
        if entry.get("error"):
            error = entry["error"].strip().splitlines()[0]
            return "n/a: " + error.split("n/a: ", 1)[1] if "n/a: " in error else "failed: " + error
        return None if self.decode(variant) else "failed: not timed"


def _ratio_cell(values: List[float]) -> str:
    return spread(values, ".2f") + "×" if values else "–"


def _correctness(entry: dict) -> str:
    check = entry.get("correctness")
    if not check:
        return "–"
    if check["ids_equal"] is None:
        return "– (llama-bench times random ids)"
    ids = (f"ids = eager ({check['steps']}/{check['steps']})" if check["ids_equal"] else
           f"ids differ from step {check['first_divergence']} ({check['agreement'] * 100:.0f}% equal)")
    if "ids_equal_hf" in check:
        ids += "; = HF eager" if check["ids_equal_hf"] else "; ≠ HF eager"
    if "max_abs" in check:
        ids += f"; logits max abs err {check['prompt_max_abs']:.2g} (prompt), {check['max_abs']:.2g} (to divergence)"
    return ids


def table(run: FormatRun, fmt: str) -> List[str]:
    lines = [f"### {fmt} weights", "",
             *table_head(["variant", "prefill ms", "decode tok/s", "decode / genai", "decode / genai-default",
                          "decode / native", "decode / fastest XNNPACK", "decode / llamacpp", "prefill / native",
                          "prefill / genai-default", "load s", "peak RSS MB",
                          "added MB / (weights + cache)", "added − (weights + cache)",
                          "correctness (vs eager PyTorch)"], "l" + "r" * 13 + "l")]
    for variant, entry in run.variants.items():
        why = run.status(variant)
        if why:
            lines.append(f"| {variant} | {why[:240].replace('|', '/')} |" + " |" * 14)
            continue
        memory = run.memory(variant)
        probe = entry.get("probe", {})
        held = entry.get("export", {}).get("bytes", 0) + run.size.cache_bytes()
        lines.append(
            f"| {variant} | {spread(run.prefill(variant), '.2f')} | {spread(run.decode(variant))} | "
            f"{_ratio_cell(run.decode_ratios(variant, GENAI))} | {_ratio_cell(run.decode_ratios(variant, GENAI_DEFAULT))} | "
            f"{_ratio_cell(run.decode_ratios(variant, NATIVE))} | {_ratio_cell(run.decode_ratios(variant, 'xnnpack*'))} | "
            f"{_ratio_cell(run.decode_ratios(variant, llm_setup.LLAMACPP))} | "
            f"{_ratio_cell(run.prefill_ratios(variant, NATIVE))} | {_ratio_cell(run.prefill_ratios(variant, GENAI_DEFAULT))} | "
            f"{probe['load_ms'] / 1e3:.2f} | "
            + (f"{memory[0]:.0f} | {memory[1]:.0f} MB / {held / 2**20:.0f} MB = {memory[2]:.2f}× | "
               f"{memory[1] - held / 2**20:+.0f} MB | " if memory else "– | – | – | ")
            + f"{_correctness(entry)} |")
    loads = run.data.get("load_average")
    if loads:
        lines += ["", f"Load average (1 min) {loads[0]:.2f} when the rounds started, {loads[1]:.2f} when they ended."]
    genai = [r[GENAI] for r in run.rounds if GENAI in r]
    if genai:
        own = [run.size.steps * 1e3 / g["own_decode_ms"] for g in genai]
        lines += [f"GenAI (f32) timed by us around generate(): {spread([g['wall_ms'] for g in genai], '.1f')} ms a "
                  f"conversation, {spread(own)} tok/s after its TTFT (its TPOT gives the column above)."]
    return lines


def targets(runs: List[Tuple[str, str, FormatRun]]) -> List[str]:
    lines = table_head(["size", "format", "decode ≥ 1.0× genai", "decode ≥ 1.0× fastest XNNPACK",
                        "prefill ≤ 1.1× native", "ids (fp32: identical to eager)",
                        "peak RSS added ≤ 1.1× weights + cache"])

    def check(values: List[float], ok) -> str:
        if not values:
            return "n/a"
        value = statistics.median(values)
        return f"{'met' if ok(value) else '**not met**'} ({value:.2f}×)"

    for size, fmt, run, ours in [(*r, v) for r in runs for v in (OURS, OURS_RUNNER) if v in r[2].variants]:
        if run.status(ours):
            lines.append(f"| {size} | {fmt} | {ours}: {run.status(ours)[:120]} | | | | |")
            continue
        entry = run.variants[ours]
        check_ids = entry.get("correctness", {})
        ids = ("–" if not check_ids else
               ("met" if check_ids["ids_equal"] else "**not met**") if fmt == "fp32" else
               f"{check_ids['agreement'] * 100:.0f}% equal, first divergence at step {check_ids['first_divergence']}"
               if not check_ids["ids_equal"] else "identical")
        memory = run.memory(ours)
        lines.append(f"| {size} | {fmt} ({ours}) | "
                     f"{check(run.decode_ratios(ours, GENAI), lambda v: v >= TARGET_DECODE)} | "
                     f"{check(run.decode_ratios(ours, 'xnnpack*'), lambda v: v >= TARGET_DECODE)} | "
                     f"{check(run.prefill_ratios(ours, NATIVE), lambda v: v <= TARGET_PREFILL)} | {ids} | "
                     + (f"{'met' if memory[2] <= TARGET_MEMORY else '**not met**'} ({memory[2]:.2f}×) |" if memory
                        else "n/a |"))
    return lines


def sizes_targets(runs: List[Tuple[str, str, FormatRun]]) -> List[str]:
    """Issue 30's targets, for the runs with GenAI's default path: ours through ExecuTorch's runner against it
    (decode >= 1.0x, prefill <= 1.0x its time, export <= 1.5x optimum-intel's, memory added <= 1.3x weights +
    cache), and llama.cpp beside it."""
    lines = table_head(["size", "weights", "decode tok/s: ours / GenAI / llama.cpp", "decode ≥ 1.0× GenAI",
                        "decode vs llama.cpp", "prefill ≤ 1.0× GenAI's time", "export ≤ 1.5× optimum-intel's",
                        "memory added ≤ 1.3× (weights + cache)"])

    def verdict(value: Optional[float], ok: bool) -> str:
        return "n/a" if value is None else f"{'met' if ok else '**not met**'} {value:.2f}×"

    for size, fmt, run in runs:
        if OURS_RUNNER not in run.variants or GENAI_DEFAULT not in run.variants or run.status(OURS_RUNNER):
            continue
        rates = [statistics.median(run.decode(v)) if run.decode(v) else None
                 for v in (OURS_RUNNER, GENAI_DEFAULT, llm_setup.LLAMACPP)]
        decode = run.decode_ratios(OURS_RUNNER, GENAI_DEFAULT)
        versus = run.decode_ratios(OURS_RUNNER, llm_setup.LLAMACPP)
        prefill = run.prefill_ratios(OURS_RUNNER, GENAI_DEFAULT)
        ours_s = run.variants[OURS_RUNNER].get("export", {}).get("seconds")
        theirs_s = run.variants[GENAI_DEFAULT].get("export", {}).get("seconds")
        export = ours_s / theirs_s if ours_s and theirs_s else None
        memory, genai_memory = run.memory(OURS_RUNNER), run.memory(GENAI_DEFAULT)
        decode_mid = statistics.median(decode) if decode else None
        prefill_mid = statistics.median(prefill) if prefill else None
        lines.append(row(
            size, fmt, " / ".join("–" if r is None else f"{r:.1f}" for r in rates),
            verdict(decode_mid, decode_mid is not None and decode_mid >= 1.0),
            f"{statistics.median(versus):.2f}×" if versus else "–",
            verdict(prefill_mid, prefill_mid is not None and prefill_mid <= 1.0),
            verdict(export, export is not None and export <= 1.5) + (f" ({ours_s:.0f} / {theirs_s:.0f} s)" if export else ""),
            verdict(memory and memory[2], bool(memory) and memory[2] <= 1.3)
            + (f" (GenAI {genai_memory[2]:.2f}×)" if genai_memory else "")))
    return lines if len(lines) > 2 else []


def report(run: dict, picture: str) -> List[str]:
    import openvino

    now = run.get("date") or datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    versions = machine.versions("torch", "executorch", "openvino-genai", "openvino-tokenizers", "optimum-intel",
                                "transformers", "nncf")
    lines = [f"# LLM benchmark, {now}", "",
             f"- {machine.machine(run['load_before'], run['load_after'])}; total time {run['seconds'] / 60:.0f} min",
             f"- openvino {openvino.get_version()}, {versions}, executorch_openvino "
             f"{run.get('executorch_openvino') or machine.our_version()}",
             f"- {run['rounds']} interleaved rounds per size and weight format: every variant loaded in one process, one "
             "conversation each per round (the prompt, then the greedy steps, from position 0), the order rotated "
             "every round, after one warm-up conversation each. Each round has a prompt of its own (the same for "
             "every variant): LLMPipeline's default backend caches prompt prefixes, so a prompt repeated would "
             "spare it the prefill. Cells: median over the rounds [lowest–highest]; "
             "ratios are taken within each round, then summarised the same way.",
             "", f"![plot]({picture})", ""]
    runs = []
    for record in run["records"]:
        size = llm_setup.SIZES[record["size"]]
        lines += [f"## {record['size']}: {record['description']}", ""]
        prepared = record.get("prepare", {})
        if "error" in prepared:
            lines += [f"Preparation failed: {prepared['error'].splitlines()[0]}", ""]
            continue
        check = prepared.get("hf_vs_et")
        if check:
            lines += [f"The Hugging Face model against ExecuTorch's eager Llama (same weights): prompt logits max abs "
                      f"difference {check['prompt_max_abs']:.2g}, greedy ids equal: {check['ids_equal']}.", ""]
        for fmt, data in record["formats"].items():
            format_run = FormatRun(size, data)
            runs.append((record["size"], fmt, format_run))
            lines += table(format_run, fmt) + [""]
            timed = data.get("rounds") or {}
            if "error" in timed:
                lines += [f"The rounds failed: {timed['error'].splitlines()[0]}", ""]
    lines += ["## Targets (issue 15), ours", "", *targets(runs), ""]
    issue30 = sizes_targets(runs)
    if issue30:
        lines += ["## Targets (issue 30): ours through ExecuTorch's runner against GenAI's default path", "",
                  *issue30, ""]
    ran = {variant for record in run["records"] for data in record.get("formats", {}).values()
           for variant in data.get("variants", {})}
    lines += ["## Variants", ""] + [f"- `{name}`: {text}." for name, text in DESCRIPTIONS.items() if name in ran]
    # Runs before 2026-12-02 18:30 did not record it: optimum-intel's own default then (asymmetric).
    optimum_int4 = " ".join(run.get("optimum_int4_args") or
                            ["--weight-format int4 --group-size 128 --ratio 1.0 (asymmetric, its default; the "
                             "embedding and the head int8)"])
    lines += ["", "## How it is measured", "",
              "- Prefill: the call on the whole prompt (one call for every variant) up to its first token "
              "(argmax included); GenAI: its TTFT; ExecuTorch's runner: its time to the first token. Decode: the "
              "greedy steps after it, steps / time; GenAI: 1 / TPOT "
              "(it generates steps + 1 tokens, the first from the prompt, so the decode calls are as many).",
              "- torch, which only makes the token tensors and takes the argmax in the rounds' process, runs with "
              "one thread (torch.set_num_threads(1)) for every variant: its idle OpenMP threads would otherwise "
              "spin after each op and take cores from the runtimes' own threads.",
              "- Memory: in a fresh process per variant, with that variant's imports done: RSS before the load, "
              "peak RSS (VmHWM, reset first) after the load and one conversation. Added = peak − RSS before; "
              "weights = the artifact's size (.pte, or openvino_model.bin), cache = both caches of every layer "
              "in fp32 over the whole context. Load s: the same process, program (or pipeline) load and compile.",
              "- Correctness: that probe's greedy ids and logits against eager PyTorch (ExecuTorch's Llama, fp32); "
              "logits are compared up to the first step where the ids differ. Quantized weights are compared "
              "with the fp32 eager model, so their differences are the quantization's.",
              f"- Quantization: int8 per output channel, asymmetric; int4 in groups of "
              f"{llm_setup.SIZES['llama-512x6'].group} (ours: our helper's default, symmetric, the embedding and "
              f"the head in asymmetric int8; XNNPACK: 8da4w; optimum-intel: {optimum_int4}).",
              "- Two cores shared with other work: compare within one run, and read the ranges."]
    return lines


def plot(run: dict, path: Path, title: str) -> None:
    plt = pyplot()

    records = [r for r in run["records"] if r.get("formats")]
    if not records:
        return
    figure, axes = plt.subplots(2, len(records), figsize=(7 * len(records), 8), squeeze=False)
    variants = run["variants"]
    colours = dict(zip(variants, plt.cm.tab10.colors))
    for column, record in enumerate(records):
        size = llm_setup.SIZES[record["size"]]
        formats = list(record["formats"])
        width = 0.8 / max(1, len(variants))
        for row, (label, get) in enumerate((("decode tokens/s (higher is better)", FormatRun.decode),
                                            (f"prefill ms, {size.prompt}-token prompt (lower is better)",
                                             FormatRun.prefill))):
            ax = axes[row][column]
            for k, variant in enumerate(variants):
                xs, ys, low, high = [], [], [], []
                for i, fmt in enumerate(formats):
                    values = get(FormatRun(size, record["formats"][fmt]), variant)
                    if values:
                        xs.append(i + (k - (len(variants) - 1) / 2) * width)
                        ys.append(statistics.median(values))
                        low.append(ys[-1] - min(values))
                        high.append(max(values) - ys[-1])
                if xs:
                    ax.bar(xs, ys, width, yerr=[low, high], label=variant, color=colours[variant], capsize=2)
            ax.set_xticks(range(len(formats)))
            ax.set_xticklabels(formats)
            ax.set_ylabel(label, fontsize=9)
            ax.set_title(record["size"], fontsize=10)
            if row == 0 and column == 0:
                ax.legend(fontsize=7, ncol=2)
    figure.suptitle(title, fontsize=11)
    save_figure(figure, path)
