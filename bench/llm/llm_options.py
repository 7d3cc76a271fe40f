"""The OpenVINO CPU options GenAI runs with, measured on ours' program (issue 30): KV-cache precision,
dynamic quantization of the activations entering compressed layers, bf16 compute. For each: prefill and
decode speed beside the delegate's default, and what it costs in accuracy against the exact setting (f32
compute, f32 cache, no dynamic quantization: what the compressed PyTorch model computes).

Native OpenVINO on the IR inside ours' .pte (the delegate's contract is equality with native OpenVINO on the
same IR and properties; the run checks it first: the .pte through ExecuTorch against the IR natively with the
delegate's default properties, same logits). The IR's other inputs (the rotary tables' rows, the cache
position, the mask's rows) are fed as ExecuTorch's portable kernels compute them.

Accuracy is teacher-forced: every setting reads the exact setting's greedy ids, so its logits are compared
position by position (largest difference over the largest |logit|, and how often its top token is the exact
setting's); then free-running, the first step its greedy ids leave the exact setting's.

    .venv/bin/python bench/llm/llm_options.py [--size smollm2-360m] [--formats int8,int4] [--rounds 5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common
from common import machine, paths, reports, stats  # noqa: E402
from common.reports import say  # noqa: E402
from common.rounds import rotated  # noqa: E402

paths.on_path(paths.PYTHON)
import llm_runners  # noqa: E402
import llm_setup  # noqa: E402

LATENCY = {"PERFORMANCE_HINT": "LATENCY"}
# name -> (OpenVINO properties, what it is). The delegate compiles with f32 compute and keeps the IR's f32
# cache; GenAI on this CPU class, with no properties, runs bf16 compute and a u8 cache.
SETTINGS: Dict[str, tuple] = {
    "exact": ({"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"},
              "f32 compute and cache, weight-only arithmetic (the reference)"),
    "delegate-default": ({"INFERENCE_PRECISION_HINT": "f32"},
                         "what the delegate compiles: f32, the IR's f32 cache, the plugin's dynamic quantization (groups of 32)"),
    "dq-128": ({"INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": "128"},
               "activations quantized in groups of 128"),
    "kv-u8": ({"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "u8"}, "the cache in u8 (per-token scales)"),
    "kv-u4": ({"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "u4"}, "the cache in u4"),
    "bf16": ({"INFERENCE_PRECISION_HINT": "bf16", "KV_CACHE_PRECISION": "f32"}, "bf16 compute, f32 cache"),
    "genai-like": ({"INFERENCE_PRECISION_HINT": "bf16", "KV_CACHE_PRECISION": "u8"},
                   "bf16 compute and a u8 cache: OpenVINO's CPU defaults here, what GenAI runs with no properties"),
}


def delegate_payload(pte: Path) -> bytes:
    """The largest executorch_openvino delegate blob in the .pte."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    from executorch_openvino import BACKEND_ID

    program = deserialize_pte_binary(pte.read_bytes()).program
    blobs = [bytes(program.backend_delegate_data[d.processed.index].data)
             for plan in program.execution_plan for d in plan.delegates if d.id == BACKEND_ID]
    return max(blobs, key=len)


def extract_ir(pte: Path, folder: Path) -> Path:
    from executorch_openvino.container.blob import parse_blob

    blob = parse_blob(delegate_payload(pte))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.xml").write_bytes(blob.ir_xml)
    (folder / "model.bin").write_bytes(blob.ir_weights)
    return folder / "model.xml"


def rope_tables(size) -> Dict[str, torch.Tensor]:
    """The rotary tables ours' IR takes as inputs (cos, sin: one row per position), as the model has them."""
    model = llm_setup.et_model(size)
    rope = model.layers[0].attention.rope
    return {"cos": rope.freqs_cos.detach().clone(), "sin": rope.freqs_sin.detach().clone()}


class IrStep:
    """ours' IR driven natively: step(tokens, position) -> the last position's logits (a copy)."""

    def __init__(self, core, model, properties: Dict[str, str], rope: Dict[str, torch.Tensor]):
        """`model`: the IR's .xml path, or an ov.Model already read."""
        compiled = core.compile_model(str(model) if isinstance(model, Path) else model, "CPU", {**LATENCY, **properties})
        self.request = compiled.create_infer_request()
        self.cos, self.sin = rope["cos"].numpy(), rope["sin"].numpy()
        self.ports: List[tuple] = []
        floats = 0
        for index, port in enumerate(compiled.inputs):
            name, kind = port.get_any_name(), port.get_element_type().get_type_name()
            if name == "tokens":
                role = "tokens"
            elif "cache_position" in name:
                role = "position"
            elif kind == "f32":
                role = ("cos", "sin")[floats]  # the rotary tables, in the order the model slices them
                floats += 1
            elif kind == "boolean":
                role = "mask"
            else:
                raise RuntimeError(f"an IR input this driver does not know: {name} ({kind})")
            self.ports.append((index, role, port.get_partial_shape()))

    def reset(self) -> None:
        self.request.reset_state()

    def __call__(self, tokens: List[int], position: int) -> torch.Tensor:
        n = len(tokens)
        feed = {}
        for index, role, shape in self.ports:
            if role == "tokens":
                feed[index] = np.array([tokens], dtype=np.int64)
            elif role == "position":
                feed[index] = np.array(position, dtype=np.int64)
            elif role in ("cos", "sin"):
                feed[index] = (self.cos if role == "cos" else self.sin)[position:position + n]
            else:
                context = shape[1].get_length()
                feed[index] = np.arange(context)[None, :] <= np.arange(position, position + n)[:, None]
        out = self.request.infer(feed)[0]
        return torch.from_numpy(np.array(out[0, -1] if out.ndim == 3 else out[0]))


def forced(step: IrStep, prompt: List[int], ids: List[int]) -> torch.Tensor:
    """Logits after the prompt and after each of `ids` fed in turn."""
    step.reset()
    rows = [step(prompt, 0)]
    for offset, token in enumerate(ids[:-1]):
        rows.append(step([token], len(prompt) + offset))
    return torch.stack(rows)


def free_running(step: IrStep, prompt: List[int], steps: int) -> llm_runners.Conversation:
    step.reset()
    return llm_runners.greedy_conversation(step, prompt, steps, keep_logits=False)


def run_format(size, fmt: str, work: Path, rounds: int, steps: int) -> dict:
    import openvino as ov

    pte, export_s = work / f"ours-{fmt}.pte", None
    if not pte.is_file():  # an earlier run's in --work is kept (its export time is then not measured)
        start = time.perf_counter()
        pte = llm_setup.export_et("ours", fmt, size, work)
        export_s = time.perf_counter() - start
    xml = extract_ir(pte, work / f"ours-{fmt}-ir")
    rope = rope_tables(size)
    core = ov.Core()
    prompt = llm_setup.round_prompt(size, work, -1)

    # The driver against the delegate: the same IR, form and properties must give the same logits.
    delegate = llm_runners.EtRunner(pte, "ours", attention="grown").conversation(prompt, 8, keep_logits=True)
    steppers = {name: IrStep(core, xml, properties, rope) for name, (properties, _) in SETTINGS.items()}
    native = steppers["delegate-default"]
    native.reset()
    mine = llm_runners.greedy_conversation(native, prompt, 8, keep_logits=True)
    check = {"ids_equal": mine["ids"] == delegate["ids"],
             "max_abs": float((mine["logits"] - delegate["logits"]).abs().max())}
    say(f"{fmt}: the native driver against the delegate: {check}")
    del delegate

    exact = free_running(steppers["exact"], prompt, steps)["ids"]
    reference = forced(steppers["exact"], prompt, exact)
    scale = float(reference.abs().max())
    accuracy = {}
    for name, step in steppers.items():
        logits = forced(step, prompt, exact)
        agree = (logits.argmax(-1) == reference.argmax(-1)).float().mean().item()
        ids = free_running(step, prompt, steps)["ids"]
        diverged = next((i for i, (a, b) in enumerate(zip(ids, exact)) if a != b), None)
        accuracy[name] = {"relative": float((logits - reference).abs().max()) / scale, "top1": agree,
                          "diverged_at": diverged}
    timings = {name: {"prefill_ms": [], "decode_tok_s": []} for name in steppers}
    names = list(steppers)
    for r in range(rounds):
        round_prompt = llm_setup.round_prompt(size, work, r)
        for name in rotated(names, r, reverse_odd=True):
            done = free_running(steppers[name], round_prompt, steps)
            timings[name]["prefill_ms"].append(done["prefill_ms"])
            timings[name]["decode_tok_s"].append(steps / done["decode_ms"] * 1e3)
        say(f"{fmt}: round {r + 1}/{rounds}")
    return {"export_s": export_s, "check": check, "accuracy": accuracy, "timings": timings}


def report(size, results: Dict[str, dict], rounds: int, steps: int, header: str) -> str:
    lines = [f"# OpenVINO's CPU options on ours' LLM program ({reports.stamp()})", "", header, "",
             f"{size.describe().split(';')[0]}; prompt {size.prompt} tokens, {steps} greedy steps, {rounds} "
             "interleaved rounds (a prompt of their own each); native OpenVINO on the IR in ours' .pte. Speed: "
             "median [lowest–highest round]; ratios within each round against `delegate-default`. Accuracy "
             "against `exact`, teacher-forced on its greedy ids (prompt and every step): the largest logit "
             "difference over the largest |logit|, the share of positions whose top token is the same; and "
             "free-running, the first step whose greedy id differs.", ""]
    for fmt, result in results.items():
        check = result["check"]
        lines += [f"## {fmt} weights", "",
                  f"The driver against the delegate (same IR, the delegate's properties), prompt and 8 steps: ids equal "
                  f"{check['ids_equal']}, logits max abs difference {check['max_abs']:.2g}.", ""]
        lines += reports.table_head(["setting", "properties", "prefill ms", "prefill / default", "decode tok/s",
                                     "decode / default", "logit difference / max", "top-1 agreement",
                                     "greedy ids leave exact's at step"], "llrrrrrrr")
        base = result["timings"]["delegate-default"]
        for name, (properties, what) in SETTINGS.items():
            timing, accuracy = result["timings"][name], result["accuracy"][name]
            props = ", ".join(f"{k}={v}" for k, v in properties.items())
            lines.append(reports.row(
                f"`{name}`: {what}", props, stats.spread(timing["prefill_ms"]),
                stats.spread(stats.ratios(timing["prefill_ms"], base["prefill_ms"]), ".2f", "×"),
                stats.spread(timing["decode_tok_s"]),
                stats.spread(stats.ratios(timing["decode_tok_s"], base["decode_tok_s"]), ".2f", "×"),
                f"{accuracy['relative']:.1e}", f"{accuracy['top1']:.1%}",
                "never" if accuracy["diverged_at"] is None else accuracy["diverged_at"]))
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="smollm2-360m", help="one of " + ", ".join(llm_setup.SIZES))
    parser.add_argument("--formats", default="int8,int4")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=64, help="greedy steps a conversation")
    parser.add_argument("--work", type=Path, help="keep the artifacts here (default: a temporary folder)")
    reports.add_results_dir(parser)
    args = parser.parse_args()
    size = llm_setup.SIZES[args.size]
    # torch only takes argmaxes here; its idle OpenMP threads would spin after each op and take the cores
    # OpenVINO's threads need (as in the LLM bench's rounds).
    torch.set_num_threads(1)
    work = args.work or Path(tempfile.mkdtemp(prefix="llm-options-"))
    work.mkdir(parents=True, exist_ok=True)
    if not (work / "reference.pt").exists():  # the weights, the tokenizer, the eager reference (the runner's metadata)
        llm_setup.prepare_size(size, work)
    load_before = machine.load_average()
    results = {fmt: run_format(size, fmt, work, args.rounds, args.steps) for fmt in args.formats.split(",")}
    header = (f"- {machine.machine(load_before, machine.load_average())}\n"
              f"- {machine.versions('openvino', 'torch', 'executorch', 'nncf')}, executorch_openvino {machine.our_version()}\n"
              f"- export time of ours' program: " + ", ".join(
                  f"{fmt} " + (f"{r['export_s']:.0f} s" if r["export_s"] else "(an earlier run's)") for fmt, r in results.items()))
    text = report(size, results, args.rounds, args.steps, header)
    reports.print_and_save(text, reports.results_dir(args.results_dir), f"llm-options-{reports.stamp()}.md")


if __name__ == "__main__":
    main()
