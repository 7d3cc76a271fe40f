"""OpenVINO's paged attention on ours' LLM program, natively (issue 30): does it close the prefill gap to
GenAI, and does going back in a conversation become free?

Ours keeps each KV cache as OpenVINO state in the growing form the CPU plugin fuses with attention
(ir_passes/grown_cache.py). GenAI's default LLMPipeline runs another form: the caches are plain inputs in
blocks, and one PagedAttentionExtension node per layer reads and writes them, told by small integer inputs
where the conversation stands (past_lens, the blocks it owns). On one IR, GenAI prefilled 1024 tokens 1.57x
faster that way than with its stateful path (llm-sizes-2026-12-05.md). In that form, a call at an earlier
position is an ordinary call (past_lens says how much of the cache counts), where the grown form must copy
its caches out and back (docs/conversation-state.md).

This study, which led to the delegate's attention=paged option (src/openvino_state/paged_attention.cpp
does the same rewrite at load, in C++; the LLM bench's ours-paged variants measure it through ExecuTorch),
takes the IR in ours' .pte, rewrites it with OpenVINO's own SDPAToPagedAttention pass
(openvino._offline_transformations.paged_attention_transformation), adapts the result to ours' layout
(`to_paged`), and drives both forms natively with the same properties, with nothing of ours between:
- check: greedy ids and logits of the two forms over the prompt and every step (teacher-forced on the
  grown form's ids); then the paged form going back k positions into the prompt and redoing them, against
  its own first pass;
- speed: interleaved rounds, prefill and decode of each form, ratios within each round.

    .venv/bin/python bench/llm/paged_attention.py [--size qwen2.5-0.5b-p1024] [--formats int8] [--rounds 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common
from common import machine, paths, reports, stats  # noqa: E402
from common.reports import say  # noqa: E402
from common.rounds import rotated  # noqa: E402

paths.on_path(paths.PYTHON)
import llm_options  # noqa: E402
import llm_runners  # noqa: E402
import llm_setup  # noqa: E402

BLOCK = 32  # positions a cache block holds: the CPU plugin's block size
# name -> (OpenVINO properties for both forms, the paged caches' element type, what it is).
SETTINGS: Dict[str, tuple] = {
    "f32": ({"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32"}, "f32",
            "f32 compute and caches: the delegate's default"),
    "bf16": ({"INFERENCE_PRECISION_HINT": "bf16", "KV_CACHE_PRECISION": "bf16"}, "bf16",
             "bf16 compute and caches, where the CPU has bf16 (precision=\"fast\"; GenAI's default computes in bf16)"),
}
PAGED_INPUTS = ("past_lens", "subsequence_begins", "block_indices", "block_indices_begins", "max_context_len",
                "position_ids")


def to_paged(xml: Path, kv_heads: int, head_dim: int, cache_type: str):
    """Ours' IR (grown caches) rewritten with OpenVINO's SDPAToPagedAttention, adapted to ours' layout."""
    import openvino as ov
    from openvino import opset13 as ops
    from openvino._offline_transformations import paged_attention_transformation

    model = ov.Core().read_model(xml)
    # The pass finds the token input by its name (LLM exports call it input_ids).
    (tokens,) = [p for p in model.get_parameters() if p.get_output_tensor(0).get_any_name() == "tokens"]
    tokens.set_friendly_name("input_ids")
    tokens.get_output_tensor(0).set_names({"input_ids"})
    paged_attention_transformation(model)
    # The pass makes every token a batch row of its own ([tokens] unsqueezed to [tokens, 1]), where
    # ExecuTorch's Llama reshapes with a batch of 1: keep the [1, tokens] input, drop the Unsqueeze.
    for target in list(tokens.output(0).get_target_inputs()):
        unsqueeze = target.get_node()
        if unsqueeze.get_type_name() == "Unsqueeze":
            for user in list(unsqueeze.output(0).get_target_inputs()):
                user.replace_source_output(tokens.output(0))
    tokens.set_partial_shape(ov.PartialShape([1, -1]))
    element = getattr(ov.Type, cache_type)
    for attention in [op for op in model.get_ops() if op.get_type_name() == "PagedAttentionExtension"]:
        # Its query, key and value are [batch, heads x width] rows with the batch kept (1 here): make them
        # one row a token; and its output back to [1, tokens, heads, width] for the Transpose after it.
        heads = None
        for port in range(3):
            reshape = attention.input(port).get_source_output().get_node()
            if reshape.get_type_name() != "Reshape":
                raise LookupError(f"input {port} of {attention.get_friendly_name()} is no Reshape")
            shape = reshape.input(0).get_partial_shape()  # [1, tokens, heads, width]
            heads = heads or shape
            reshape.input(1).replace_source_output(
                ops.constant(np.array([-1, shape[2].get_length() * shape[3].get_length()], np.int64)).output(0))
        for target in list(attention.output(0).get_target_inputs()):
            back = target.get_node()
            if back.get_type_name() != "Reshape":
                raise LookupError(f"the output of {attention.get_friendly_name()} goes to no Reshape")
            back.input(1).replace_source_output(ops.constant(
                np.array([1, -1, heads[2].get_length(), heads[3].get_length()], np.int64)).output(0))
        # The CPU plugin reads the caches' head count and width from these.
        info = attention.get_rt_info()
        for key, value in (("num_k_heads", kv_heads), ("k_head_size", head_dim), ("num_v_heads", kv_heads),
                           ("v_head_size", head_dim)):
            info[key] = value
        for port in (3, 4):
            cache = attention.input(port).get_source_output().get_node()
            cache.set_partial_shape(ov.PartialShape([-1, kv_heads, BLOCK, head_dim]))
            cache.set_element_type(element)
    model.validate_nodes_and_infer_types()
    return model


class PagedStep:
    """The paged IR driven natively: step(tokens, position) -> the last position's logits (a copy). One
    conversation in blocks 0, 1, ... of caches as long as the context; any position up to the length
    already computed may start a call."""

    def __init__(self, core, model, properties: Dict[str, str], rope: Dict[str, torch.Tensor], context: int):
        import openvino as ov

        compiled = core.compile_model(model, "CPU", {**llm_options.LATENCY, **properties})
        self.request = compiled.create_infer_request()
        self.cos, self.sin = rope["cos"].numpy(), rope["sin"].numpy()
        self.ports: List[tuple] = []
        self.length = 0
        blocks = -(-context // BLOCK)
        floats = 0
        for index, port in enumerate(compiled.inputs):
            name, kind = port.get_any_name(), port.get_element_type()
            if name.startswith(("key_cache.", "value_cache.")):
                shape = [blocks] + [d.get_length() for d in list(port.get_partial_shape())[1:]]
                self.request.set_input_tensor(index, ov.Tensor(kind, shape))  # kept across calls
                continue
            if name == "input_ids":
                role = "tokens"
            elif "cache_position" in name:
                role = "position"
            elif name in PAGED_INPUTS:
                role = name
            elif kind.get_type_name() == "f32":
                role = ("cos", "sin")[floats]  # the rotary tables, in the order the model slices them
                floats += 1
            elif kind.get_type_name() == "boolean":
                role = "mask"  # still an input; the paged attention is causal without it
            else:
                raise RuntimeError(f"an IR input this driver does not know: {name} ({kind})")
            self.ports.append((index, role, port.get_partial_shape()))

    def reset(self) -> None:
        self.length = 0  # the caches' old contents are past every later call's past_lens

    def __call__(self, tokens: List[int], position: int) -> torch.Tensor:
        if position > self.length:
            raise ValueError(f"position {position} is past the {self.length} positions computed")
        n = len(tokens)
        blocks = -(-(position + n) // BLOCK)
        values = {
            "tokens": np.array([tokens], dtype=np.int64),
            "position": np.array(position, dtype=np.int64),
            "cos": self.cos[position:position + n], "sin": self.sin[position:position + n],
            "past_lens": np.array([position], np.int32),
            "subsequence_begins": np.array([0, n], np.int32),
            "block_indices": np.arange(blocks, dtype=np.int32),
            "block_indices_begins": np.array([0, blocks], np.int32),
            "max_context_len": np.array(position + n, np.int32),
            "position_ids": np.arange(position, position + n, dtype=np.int64),
        }
        feed = {}
        for index, role, shape in self.ports:
            if role == "mask":
                context = shape[1].get_length()
                feed[index] = np.arange(context)[None, :] <= np.arange(position, position + n)[:, None]
            else:
                feed[index] = values[role]
        out = self.request.infer(feed)[0]
        self.length = position + n
        return torch.from_numpy(np.array(out.reshape(-1, out.shape[-1])[-1]))


def check(grown, paged, prompt: List[int], steps: int, back: int) -> dict:
    """The two forms on the grown form's greedy ids, position by position; then the paged form going back."""
    ids = llm_options.free_running(grown, prompt, steps)["ids"]
    reference = llm_options.forced(grown, prompt, ids)
    mine = llm_options.forced(paged, prompt, ids)
    paged_ids = llm_options.free_running(paged, prompt, steps)["ids"]
    # The paged form has just run prompt + steps; go back into the prompt and redo it, then the steps.
    redo = [paged(prompt[-back:], len(prompt) - back)]
    for offset, token in enumerate(ids[:-1]):
        redo.append(paged([token], len(prompt) + offset))
    redone = torch.stack(redo)
    scale = float(reference.abs().max())
    return {"ids_equal": paged_ids == ids, "relative": float((mine - reference).abs().max()) / scale,
            "top1": float((mine.argmax(-1) == reference.argmax(-1)).float().mean()),
            "back": back, "back_relative": float((redone - mine).abs().max()) / scale,
            "back_top1": float((redone.argmax(-1) == mine.argmax(-1)).float().mean())}


def run_format(size, fmt: str, work: Path, settings: List[str], rounds: int, steps: int) -> dict:
    import openvino as ov

    pte = work / f"ours-{fmt}.pte"
    if not pte.is_file():
        pte = llm_setup.export_et("ours", fmt, size, work)
    xml = llm_options.extract_ir(pte, work / f"ours-{fmt}-ir")
    rope = llm_options.rope_tables(size)
    core = ov.Core()
    prompt = llm_setup.round_prompt(size, work, -1)
    results = {}
    for name in settings:
        properties, cache_type, _ = SETTINGS[name]
        forms = {"grown": llm_options.IrStep(core, xml, properties, rope),
                 "paged": PagedStep(core, to_paged(xml, size.kv_heads, size.head_dim, cache_type), properties, rope,
                                    size.context)}
        checked = check(forms["grown"], forms["paged"], prompt, min(steps, 16), min(8, len(prompt) - 1))
        say(f"{fmt} {name}: {checked}")
        timings = {form: {"prefill_ms": [], "decode_tok_s": []} for form in forms}
        for r in range(rounds):
            round_prompt = llm_setup.round_prompt(size, work, r)
            for form in rotated(list(forms), r, reverse_odd=True):
                done = llm_options.free_running(forms[form], round_prompt, steps)
                timings[form]["prefill_ms"].append(done["prefill_ms"])
                timings[form]["decode_tok_s"].append(steps / done["decode_ms"] * 1e3)
            say(f"{fmt} {name}: round {r + 1}/{rounds}")
        results[name] = {"check": checked, "timings": timings}
        del forms
    return results


def report(size, results: Dict[str, dict], rounds: int, steps: int, header: str) -> str:
    lines = [f"# OpenVINO's paged attention on ours' LLM program ({reports.stamp()})", "", header, "",
             f"{size.describe().split(';')[0]}; prompt {size.prompt} tokens, {steps} greedy steps, {rounds} "
             f"interleaved rounds (a prompt of their own each); native OpenVINO on the IR in ours' .pte (`grown`) "
             f"and the same IR rewritten by OpenVINO's SDPAToPagedAttention (`paged`, caches in blocks of {BLOCK}), "
             "the same properties. Speed: median [lowest–highest round]; ratios within each round, paged over "
             "grown. Check: teacher-forced on grown's greedy ids, the largest logit difference over the largest "
             "|logit| and the share of positions with the same top token; then paged going back k positions into "
             "the prompt and redoing them and the steps, against its own first pass.", ""]
    for fmt, by_setting in results.items():
        lines += [f"## {fmt} weights", ""]
        lines += reports.table_head(["setting", "properties", "prefill ms: grown / paged", "prefill time paged / grown",
                                     "decode tok/s: grown / paged", "decode speed paged / grown",
                                     "paged vs grown: difference / max, top-1", "greedy ids equal",
                                     "going back k: difference / max, top-1"], "llrrrrrrr")
        for name, result in by_setting.items():
            properties, _, what = SETTINGS[name]
            grown, paged, c = result["timings"]["grown"], result["timings"]["paged"], result["check"]
            lines.append(reports.row(
                f"`{name}`: {what}", ", ".join(f"{k}={v}" for k, v in properties.items()),
                f"{stats.spread(grown['prefill_ms'])} / {stats.spread(paged['prefill_ms'])}",
                stats.spread(stats.ratios(paged["prefill_ms"], grown["prefill_ms"]), ".2f", "×"),
                f"{stats.spread(grown['decode_tok_s'])} / {stats.spread(paged['decode_tok_s'])}",
                stats.spread(stats.ratios(paged["decode_tok_s"], grown["decode_tok_s"]), ".2f", "×"),
                f"{c['relative']:.1e}, {c['top1']:.1%}", str(c["ids_equal"]),
                f"k={c['back']}: {c['back_relative']:.1e}, {c['back_top1']:.1%}"))
        lines.append("")
    return "\n".join(lines)


def bf16_capable() -> bool:
    import openvino as ov

    return "BF16" in ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="qwen2.5-0.5b-p1024", help="one of " + ", ".join(llm_setup.SIZES))
    parser.add_argument("--formats", default="int8")
    parser.add_argument("--settings", default="f32,bf16", help="of " + ", ".join(SETTINGS) +
                        " (bf16 is left out on a CPU without it)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=64, help="greedy steps a conversation")
    parser.add_argument("--work", type=Path, help="keep the artifacts here (default: a temporary folder)")
    reports.add_results_dir(parser)
    args = parser.parse_args()
    size = llm_setup.SIZES[args.size]
    torch.set_num_threads(1)  # torch only takes argmaxes here (see llm_options)
    settings = [s for s in args.settings.split(",") if s != "bf16" or bf16_capable()]
    work = args.work or Path(tempfile.mkdtemp(prefix="paged-attention-"))
    work.mkdir(parents=True, exist_ok=True)
    if not (work / "reference.pt").exists():
        llm_setup.prepare_size(size, work)
    load_before = machine.load_average()
    results = {fmt: run_format(size, fmt, work, settings, args.rounds, args.steps) for fmt in args.formats.split(",")}
    header = (f"- {machine.machine(load_before, machine.load_average())}\n"
              f"- {machine.versions('openvino', 'torch', 'executorch', 'nncf')}, executorch_openvino {machine.our_version()}")
    text = report(size, results, args.rounds, args.steps, header)
    reports.print_and_save(text, reports.results_dir(args.results_dir), f"paged-attention-{size.name}-{reports.stamp()}.md")


if __name__ == "__main__":
    main()
