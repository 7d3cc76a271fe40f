"""What structured output costs a decode step (`make bench-structured`; the target of issue 47: the
mask costs at most 5 % of a decode step at a 150k-token vocabulary).

A Llama of Qwen2.5-0.5B's shape (random weights, ExecuTorch's Llama, int8 weights through
OpenvinoPartitioner(weights="int8"), vocabulary 151,936) and a byte-level tokenizer of as many tokens
(workloads/tokenizer.py, synthetic_byte_level_json), greedy, a new prompt each round, in interleaved
rounds, every variant through the engine (executorch_openvino.generation):

- plain: no constraint (the baseline the ratios divide);
- json-string: a JSON schema whose one field is a string of at least 2,000 characters, so the whole
  generation is inside it (nearly every token allowed: the mask is widest, applying it costs most);
- json-object: a JSON schema of several typed fields, compact (no whitespace between tokens), written
  object after object in an array (a narrow mask changing at every token);
- regex: free text of lower-case words, [a-z ]+ .

The engine's decode time per token (prefill excluded) over plain's; the mask's share of a step:
(variant - plain) / variant. On two cores that difference is within the rounds' spread, so the mask's
own cost is also measured apart: the same generations on a model that replays the program's logits
(recorded from a plain run) and costs nothing itself, with and without the constraint, the
difference per token over plain's real decode step (the target's figure). Results:
bench/results/structured-<date>.{md,json}.

  .venv/bin/python bench/structured/structured_bench.py [--rounds 5] [--work DIR] [--results-dir DIR] [--smoke]

--smoke: two layers of width 64 (the same vocabulary): the mask's share of a much cheaper step, in minutes.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, for workloads/
from common import paths  # noqa: E402

from executorch_openvino import benchmark  # noqa: E402
from workloads.tokenizer import synthetic_byte_level_json  # noqa: E402

SHAPE = dict(dim=896, n_layers=24, n_heads=14, n_kv_heads=2, hidden_dim=4864, vocab_size=151936)
SMOKE_SHAPE = dict(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, hidden_dim=128)
CONTEXT = 256
PROMPT, STEPS = 32, 64
TARGET = 0.05  # the mask's share of a decode step, at most
GRAMMARS = {
    "json-string": ("json_schema", {"x-guidance": {"whitespace_flexible": False}, "type": "object",
                                    "properties": {"text": {"type": "string", "minLength": 2000}},
                                    "required": ["text"]}),
    "json-object": ("json_schema", {"x-guidance": {"whitespace_flexible": False}, "type": "array", "items": {
        "type": "object", "properties": {"id": {"type": "integer"}, "ok": {"type": "boolean"},
                                         "name": {"type": "string", "maxLength": 6},
                                         "kind": {"enum": ["alpha", "beta", "gamma"]}},
        "required": ["id", "ok", "name", "kind"], "additionalProperties": False}, "minItems": 50}),
    "regex": ("regex", "[a-z ]+"),
}
REPORT = {
    "description": [
        "A Llama of Qwen2.5-0.5B's shape (ExecuTorch's, random weights, int8 weights through "
        "OpenvinoPartitioner(weights=\"int8\"), vocabulary 151,936) with a synthetic byte-level tokenizer of as many "
        "tokens; greedy, every variant through the engine, in interleaved rounds, a new prompt each round. "
        "Decode ms per token (prefill excluded), median [lowest–highest] over rounds; ratio to plain per round; the "
        "mask's share of a step = (variant − plain) / variant, target at most 5 %."],
    "tables": [
        {"title": "Decode step with a constraint", "where": {"group": "decode"}, "columns": [
            {"title": "variant", "field": "variant"},
            {"title": "ms / token", "field": "ms_per_token", "stat": "spread", "format": ".2f"},
            {"title": "over plain", "field": "ms_per_token", "vs": "plain", "format": ".3f", "unit": "×"},
            {"title": "mask share", "field": "share"},
            {"title": "target", "field": "target"},
            {"title": "tokens", "field": "tokens"}]},
        {"title": "The mask alone (a model that costs nothing, replaying the program's logits)",
         "where": {"group": "alone"}, "columns": [
            {"title": "variant", "field": "variant"},
            {"title": "engine ms / token", "field": "engine_ms", "stat": "spread", "format": ".3f"},
            {"title": "mask ms / token", "field": "mask_ms", "format": ".3f"},
            {"title": "share of plain's step", "field": "share"},
            {"title": "target", "field": "target"}]}],
}


def _model(seed: int = 0):
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs

    torch.manual_seed(seed)
    args = dict(SHAPE, max_seq_len=CONTEXT, max_context_len=CONTEXT, use_kv_cache=True, enable_dynamic_shape=True,
                max_batch_size=1)
    return construct_transformer(ModelArgs(**args)).eval()


def prepare(work: Path) -> dict:
    """The program and the tokenizer, made once in `work`."""
    from torch.export import Dim

    import executorch_openvino
    from executorch.exir import to_edge_transform_and_lower

    work.mkdir(parents=True, exist_ok=True)
    made = {}
    tokenizer = work / "tokenizer.json"
    if not tokenizer.is_file():
        text, size = synthetic_byte_level_json(SHAPE["vocab_size"])
        assert size == SHAPE["vocab_size"], size
        tokenizer.write_text(text)
    pte = work / "model.pte"
    if not pte.is_file():
        began = time.perf_counter()
        shapes = ({1: Dim("seq", min=1, max=CONTEXT - 1)}, {"input_pos": None})
        with torch.no_grad():
            exported = torch.export.export(copy.deepcopy(_model()), (torch.zeros(1, 4, dtype=torch.long),
                                                                     {"input_pos": torch.tensor([0])}),
                                           dynamic_shapes=shapes, strict=False)
        program = to_edge_transform_and_lower(
            exported, partitioner=[executorch_openvino.OpenvinoPartitioner(weights="int8")],
            constant_methods={"get_max_seq_len": CONTEXT - 1, "get_max_context_len": CONTEXT,
                              "get_eos_ids": [0]})
        pte.write_bytes(program.to_executorch().buffer)
        made["export_s"] = time.perf_counter() - began
    return made


def measure(work: Path, rounds: int) -> dict:
    from executorch_openvino.generation import Constraint, Conversation, Program

    torch.set_num_threads(1)
    program = Program.load(work / "model.pte")
    tokenizer_json = (work / "tokenizer.json").read_text()
    began = time.perf_counter()
    constraints = {name: Constraint(kind, grammar, tokenizer_json, eos_ids=[0]) for name, (kind, grammar) in GRAMMARS.items()}
    setup_s = time.perf_counter() - began
    chat = Conversation(program)
    rng = random.Random(0)
    names = ["plain"] + list(GRAMMARS)
    ms = {name: [] for name in names}
    tokens = {name: [] for name in names}
    for round_index in range(rounds + 1):  # the first round warms up, unrecorded
        prompt = [rng.randrange(1, SHAPE["vocab_size"]) for _ in range(PROMPT)]
        for name in names[round_index % len(names):] + names[: round_index % len(names)]:
            done = chat.generate(prompt, STEPS, eos_ids=[], constraint=constraints.get(name))
            decoded = max(done.statistics.generated - 1, 1)
            if round_index:
                ms[name].append(1000 * done.statistics.decode_s / decoded)
                tokens[name].append(done.statistics.generated)
    # The mask alone: the program's logits of a plain run, replayed by a model that costs nothing.
    recorded = []
    chat.generate(prompt, STEPS, eos_ids=[], on_logits=recorded.append)
    rows = np.stack(recorded)

    def replay(tokens, position):
        return rows[(position - PROMPT) % len(rows)]

    replayed = Conversation(Program.from_step(replay, SHAPE["vocab_size"], CONTEXT, CONTEXT, all_logits=False))
    alone = {name: [] for name in names}
    for repeat in range(max(rounds, 3) * 2):
        for name in names:
            done = replayed.generate(prompt, STEPS, eos_ids=[], constraint=constraints.get(name))
            alone[name].append(1000 * done.statistics.decode_s / max(done.statistics.generated - 1, 1))
    return {"ms": ms, "tokens": tokens, "setup_s": setup_s, "alone": alone}


def record(run: dict, measured: dict, made: dict) -> None:
    ms = measured["ms"]
    for name, values in ms.items():
        share = None if name == "plain" else statistics.median((v - p) / v for v, p in zip(values, ms["plain"]))
        benchmark.add_row(run, "decode", name, ms_per_token=values,
                          share="–" if share is None else f"{100 * share:.1f} %",
                          target="–" if share is None else ("met" if share <= TARGET else "not met"),
                          tokens=f"{min(measured['tokens'][name])}–{max(measured['tokens'][name])}")
    alone, plain_step = measured["alone"], statistics.median(ms["plain"])
    for name, values in alone.items():
        mask = None if name == "plain" else statistics.median(values) - statistics.median(alone["plain"])
        benchmark.add_row(run, "alone", name, engine_ms=values, mask_ms=mask,
                          share="–" if mask is None else f"{100 * mask / plain_step:.2f} %",
                          target="–" if mask is None else ("met" if mask / plain_step <= TARGET else "not met"))
    run["notes"].append(f"Making the three constraints (llguidance reading the 151,936-token tokenizer once, then "
                        f"compiling each grammar): {measured['setup_s']:.2f} s.")
    if "export_s" in made:
        run["notes"].append(f"Export: {made['export_s']:.0f} s.")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/executorch_openvino_structured"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="two layers of width 64, the same vocabulary")
    parser.add_argument("--results-dir", type=Path)
    args = parser.parse_args()
    if args.smoke:
        SHAPE.update(SMOKE_SHAPE)
        args.work, args.rounds = args.work.with_name(args.work.name + "-smoke"), min(args.rounds, 3)
    paths.use_built_library()
    run = benchmark.new_run("structured", "Structured output: the mask's cost in a decode step", checkout=paths.REPO,
                            report=REPORT, versions=["torch", "executorch", "openvino", "llguidance"],
                            settings={"shape": f"{SHAPE['n_layers']} layers, dim {SHAPE['dim']}, vocab "
                                               f"{SHAPE['vocab_size']}", "context": CONTEXT, "prompt": PROMPT,
                                      "tokens": STEPS, "rounds": args.rounds})
    made = prepare(args.work)
    record(run, measure(args.work, args.rounds), made)
    markdown = benchmark.save(benchmark.finish(run), args.results_dir or (paths.QUICK_RESULTS if args.smoke
                                                                          else paths.RESULTS))
    print(markdown.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
