"""Speculative decoding and going back, measured (`make bench-speculative`).

A Llama of SmolLM2-135M's shape (random weights, ExecuTorch's Llama with full logits, int8 weights
through OpenvinoPartitioner(weights="int8")), prompt of 128 random tokens, 128 greedy tokens, in
interleaved rounds, every variant through the generation engine (executorch_openvino.generation):

- plain: no drafts (the baseline every ratio divides);
- lookup: prompt lookup; random weights fall into repeating cycles under greedy decoding, so drafts
  get accepted (the acceptance is measured and reported beside the speed);
- draft-4l: a 4-layer model sharing the target's embedding, output layer and first 4 layers (random
  weights give no cheap model that agrees with the target: its drafts are all rejected);
- draft-int4: the target's own weights in int4 (a smaller .pte that mostly agrees with it: the case of
  a draft model that lands); both drafts return the last position's logits only, as a draft needs;
- rejected: a drafter whose drafts the target never chooses (the cost when nothing lands), free to
  ask as prompt lookup is (probed at every plain step, never fed); rejected-paused: the same for a
  drafter that costs time to ask, as a draft program (probed after longer pauses, never fed);
- static, static-lookup: the same with OpenvinoPartitioner(grow_caches=False) (going back is free,
  each step attends over the whole context);
- controlled-<q>: the target in f32 (where a call's ids do not depend on how many tokens it carries)
  with a drafter that proposes plain greedy decoding's next tokens, each right with probability q:
  decode speed against a chosen acceptance, the drafter's quality taken out (ratios to plain-f32);
- paged, paged-lookup, paged-rejected, paged-rejected-paused, paged-f32, paged-controlled-<q>: the same
  programs loaded with attention=paged (OpenVINO's paged attention, rewritten at load: going back costs
  nothing); their ratios are to paged (paged-f32 for the f32 rows), their ids compared with paged's own
  plain greedy ids (int8's dynamic quantization parts the two forms at near-ties);
- genai, genai-lookup: OpenVINO GenAI's LLMPipeline on optimum-intel's int8 IR of the same weights (the
  equivalent Hugging Face Llama; bench/peers/genai.py), no properties (what its users get), plain and
  with its own prompt lookup (prompt_lookup=True, 5 drafts, n-grams up to 3), the same prompt ids;
- llamacpp, llamacpp-lookup: llama.cpp's CPU backend on the same weights as GGUF Q8_0 (bench/peers):
  llama-bench (plain decode), llama-lookup (its prompt lookup decoding, 5 drafts), the same prompt
  (ASCII text: the GGUF's byte vocabulary makes each character the id ours is given).

Also what a call costs: going back (cutting the caches) at several lengths, a call of 1 + 5 tokens,
and a call whose token count differs from the last one's (OpenVINO prepares its graph anew). Every
variant's ids are checked equal to plain greedy's. Results: bench/results/speculative-<date>.{md,json}.

  .venv/bin/python bench/speculative/speculative_bench.py [--rounds 5] [--work DIR] [--results-dir DIR] [--smoke]

--smoke: a Llama of two layers, width 64, a few rounds, into bench/results/quick; GenAI and llama.cpp
are reported n/a where they are not installed or built.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/
from common import paths  # noqa: E402

from executorch_openvino import benchmark  # noqa: E402
from peers import genai, llamacpp  # noqa: E402

SHAPE = dict(dim=576, n_layers=30, n_heads=9, n_kv_heads=3, hidden_dim=1536, vocab_size=49152)
SMOKE_SHAPE = dict(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, hidden_dim=128, vocab_size=512)
CONTEXT = 512
PROMPT, STEPS = 128, 128
DRAFT_LAYERS = 4
CONTROLLED = (1.0, 0.95, 0.9, 0.8, 0.6)  # the controlled drafter's per-token probabilities of being right
COST_LENGTHS = [128, 256, 500]  # positions held when going back is timed
REPORT = {
    "description": [
        "A Llama (ExecuTorch's, full logits, random weights) with int8 weights through "
        "OpenvinoPartitioner(weights=\"int8\"); every variant through the generation engine, "
        "in interleaved rounds, a new prompt each round. Ratio: decode tokens/s over the row the variant is "
        "compared with (plain, plain-f32, paged or paged-f32), per round, median [lowest–highest]. A controlled "
        "drafter proposes plain greedy decoding's next tokens, each right with probability q (a wrong id "
        "otherwise): the speed at a chosen acceptance, whatever drafts it. GenAI's rows: LLMPipeline on "
        "optimum-intel's int8 IR of the same weights, no properties, its decode speed after its first token; "
        "llama.cpp's: its own tools on the same weights as Q8_0, its decode speed as they report it."],
    "tables": [
        {"title": "Decoding", "where": {"group": "decode"}, "columns": [
            {"title": "variant", "field": "variant"},
            {"title": "decode tok/s", "field": "decode_tok_s", "stat": "spread", "format": ".1f"},
            {"title": "× its plain", "field": "decode_tok_s", "vs_field": "base", "format": ".2f"},
            {"title": "acceptance", "field": "acceptance", "format": ".0%"},
            {"title": "model calls", "field": "calls", "format": ".0f"},
            {"title": "ids = its plain greedy's", "field": "same_ids"}]},
        {"title": "What a call costs: going back 4 positions between calls of 6 tokens", "where": {"group": "costs"},
         "columns": [{"title": "positions held", "field": "variant"},
                     {"title": "grown, ms", "field": "grown_ms", "format": ".1f"},
                     {"title": "paged, ms", "field": "paged_ms", "format": ".1f"}]}],
}


def _model(layers: int, seed: int = 0):
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs

    layers = min(layers, SHAPE["n_layers"])
    torch.manual_seed(seed)
    args = dict(SHAPE, n_layers=layers, max_seq_len=CONTEXT, max_context_len=CONTEXT, use_kv_cache=True,
                enable_dynamic_shape=True, max_batch_size=1, generate_full_logits=True)
    return construct_transformer(ModelArgs(**args)).eval()


def _export(model, path: Path, weights: str = "int8", **partitioner) -> float:
    from torch.export import Dim

    import executorch_openvino
    from executorch.exir import to_edge_transform_and_lower

    began = time.perf_counter()
    tokens = torch.zeros(1, 4, dtype=torch.long)
    shapes = ({1: Dim("seq", min=1, max=CONTEXT - 1)}, {"input_pos": None})
    with torch.no_grad():
        exported = torch.export.export(copy.deepcopy(model), (tokens, {"input_pos": torch.tensor([0])}),
                                       dynamic_shapes=shapes, strict=False)
    program = to_edge_transform_and_lower(
        exported, partitioner=[executorch_openvino.OpenvinoPartitioner(weights=weights, **partitioner)],
        constant_methods={"get_max_seq_len": CONTEXT - 1, "get_max_context_len": CONTEXT})
    path.write_bytes(program.to_executorch().buffer)
    return time.perf_counter() - began


def prepare(work: Path, build_llamacpp: bool = True) -> dict:
    work.mkdir(parents=True, exist_ok=True)
    made = {}
    target = _model(SHAPE["n_layers"])
    draft = _model(DRAFT_LAYERS)
    state = {k: v for k, v in target.state_dict().items()
             if not k.startswith("layers.") or int(k.split(".")[1]) < DRAFT_LAYERS}
    draft.load_state_dict(state, strict=False)
    # A draft program needs the last position's logits only (it drafts one token per call after
    # catching up): with every position's, each catch-up also computes and copies out the output
    # layer over every token it feeds.
    draft.generate_full_logits = False
    target_int4 = copy.deepcopy(target)
    target_int4.generate_full_logits = False
    for name, model, options in (("target", target, {}), ("static", target, {"grow_caches": False}),
                                 ("target-f32", target, {"weights": None}), ("draft", draft, {}),
                                 ("draft-int4", target_int4, {"weights": "int4", "group_size": 64})):
        path = work / f"{name}.pte"
        if not path.exists():
            made[name] = _export(model, path, **options)
            print(f"exported {name} in {made[name]:.0f} s", flush=True)
    try:  # the peers need requirements-bench.txt (GenAI) and a llama.cpp build: n/a without them
        if not (work / "ov-int8" / "openvino_model.xml").exists():
            began = time.perf_counter()
            dims = dict(dim=SHAPE["dim"], layers=SHAPE["n_layers"], heads=SHAPE["n_heads"], kv_heads=SHAPE["n_kv_heads"],
                        hidden=SHAPE["hidden_dim"], vocab=SHAPE["vocab_size"], context=CONTEXT)
            genai.hf_llama(target.state_dict(), **dims).save_pretrained(work / "hf")
            genai.export(work / "hf", "int8", 128, work / "ov-int8")
            made["genai"] = time.perf_counter() - began
    except Exception as error:  # noqa: BLE001  (reported as n/a)
        made["genai"] = str(error).splitlines()[0][:200]
    if not (work / "target-Q8_0.gguf").exists() and (build_llamacpp or llamacpp.built()):
        began = time.perf_counter()
        f32 = llamacpp.write_gguf(target.state_dict(), dim=SHAPE["dim"], layers=SHAPE["n_layers"], heads=SHAPE["n_heads"],
                                  kv_heads=SHAPE["n_kv_heads"], hidden=SHAPE["hidden_dim"], vocab=SHAPE["vocab_size"],
                                  context=CONTEXT, path=work / "target.gguf")
        llamacpp.quantize(f32, "Q8_0")
        f32.unlink()
        made["llamacpp"] = time.perf_counter() - began
    return made


def _prompt(rng) -> str:
    """PROMPT characters of ASCII text (no "ab": the GGUF's one merge), so ids = bytes on both sides."""
    letters = np.array(list("bcdefghijklmnopqrstuvwxyz ,."))
    return "".join(rng.choice(letters, PROMPT))


def _rejected(never):
    """A drafter whose drafts the target never chooses (ids it did not choose in the plain run)."""
    return lambda history, limit: [never[history[-1] % len(never)]] * limit


def _controlled(reference, q: float, seed: int):
    """A drafter of plain greedy decoding's next tokens (`reference`: prompt + plain's ids), each right with
    probability q, a wrong id otherwise; nothing once the history has left the reference."""
    reference, rng = list(reference), np.random.default_rng(seed)

    def draft(history, limit):
        n = len(history)
        if list(history) != reference[:n]:
            return []
        right = reference[n:n + limit]
        return [t if rng.random() < q else (t + 1) % SHAPE["vocab_size"] for t in right]

    return draft


WIDE = 6  # the calls speculative decoding makes: the last token and 5 drafts


def _call_costs(path: Path, attention: str, lengths) -> dict:
    """ms of a plain step, of a call of WIDE tokens, of going back 4 positions between calls of WIDE
    tokens (at `length` positions held), and of a call whose token count differs from the last one's:
    single calls of the program's method, through ExecuTorch's runtime (no generation loop)."""
    import executorch_openvino
    from executorch.runtime import Runtime

    with executorch_openvino.using_options(attention=attention):
        method = Runtime.get().load_program(path).load_method("forward")
    rng = np.random.default_rng(1)

    def step(tokens, position):
        return method.execute([torch.tensor([list(tokens)]), torch.tensor([position])])

    def timed(tokens, position):
        began = time.perf_counter()
        step(tokens, position)
        return (time.perf_counter() - began) * 1000

    def prefill(tokens, start):
        step(tokens, start)

    wide = list(range(1, WIDE + 1))
    costs = {"cut_ms": {}}
    for length in lengths:
        prefill(rng.integers(0, SHAPE["vocab_size"], length - WIDE).tolist(), 0)
        timed(wide, length - WIDE)  # `length` held
        cut, kept = [], []
        for _ in range(5):
            cut.append(timed(wide, length - 4))  # goes back 4 positions: length + 2 held
            kept.append(timed(wide, length + 2))  # continues: length + 8 held
            step(wide, length - WIDE)  # back to `length` held (a cut not timed)
        costs["cut_ms"][length] = statistics.median(c - k for c, k in zip(cut, kept))
    prefill(rng.integers(0, SHAPE["vocab_size"], 100).tolist(), 0)
    position, same, changed = 100, {1: [], WIDE: []}, {1: [], WIDE: []}
    for count in [1] * 8 + [WIDE] * 8:  # steady widths: after the first call of each
        same[count].append(timed(wide[:count], position))
        position += count
    for count in [1, WIDE] * 6:  # alternating widths
        changed[count].append(timed(wide[:count], position))
        position += count
    costs["step_ms"] = statistics.median(same[1][1:])
    costs["wide_ms"] = statistics.median(same[WIDE][1:])
    costs["width_change_ms"] = statistics.median(
        [statistics.median(changed[1]) - costs["step_ms"], statistics.median(changed[WIDE]) - costs["wide_ms"]])
    return costs


def _load(path: Path, attention: str):
    """The program loaded with its caches grown (as exported) or paged; named either way, since paged is
    the default since 2026-12-06 and the rows before it are grown."""
    import executorch_openvino
    from executorch_openvino.generation import Program

    with executorch_openvino.using_options(attention=attention):
        return Program.load(path)


def _base(name: str) -> str:
    """The row a variant's ratio divides by."""
    if name == "paged-f32" or name.startswith("paged-controlled"):
        return "paged-f32"
    if name.startswith("paged"):
        return "paged"
    return "plain-f32" if name == "plain-f32" or name.startswith("controlled") else "plain"


def measure(work: Path, rounds: int) -> dict:
    torch.set_num_threads(1)
    from executorch_openvino.generation import Conversation

    def generate(program, prompt, steps, **drafting):
        """A new conversation on `program` (fed from position 0), `steps` greedy tokens, no end id."""
        return Conversation(program).generate(prompt, steps, eos_ids=[], max_draft=5, **drafting)

    programs = {name: _load(work / f"{name}.pte", "grown")
                for name in ("target", "static", "target-f32", "draft", "draft-int4")}
    programs["paged"] = _load(work / "target.pte", "paged")
    programs["paged-f32"] = _load(work / "target-f32.pte", "paged")
    rng = np.random.default_rng(0)
    results = {}
    gguf = work / "target-Q8_0.gguf"
    try:
        genai_runners = {name: genai.GenaiRunner(work / "ov-int8", None, prompt_lookup=name == "genai-lookup")
                         for name in ("genai", "genai-lookup")}
    except Exception:  # noqa: BLE001  (not installed, or no export: the rows say n/a)
        genai_runners = {}
    for round_index in range(rounds):
        text = _prompt(rng)
        prompt = list(text.encode())
        plain = generate(programs["target"], prompt, STEPS)
        never = sorted(set(range(SHAPE["vocab_size"])) - set(plain.tokens))[:8]
        plain_f32 = generate(programs["target-f32"], prompt, STEPS)
        reference = prompt + plain_f32.tokens
        plain_paged = generate(programs["paged"], prompt, STEPS)
        expected_of = {id(programs["target-f32"]): plain_f32, id(programs["paged-f32"]): plain_f32,
                       id(programs["paged"]): plain_paged}
        lookup = dict(lookup=True)
        rejected = dict(drafter=_rejected(never), drafter_free_to_ask=True)
        rejected_paused = dict(drafter=_rejected(never), drafter_free_to_ask=False)
        variants = {
            "plain": (programs["target"], {}),
            "lookup": (programs["target"], lookup),
            "draft-4l": (programs["target"], dict(draft=programs["draft"])),
            "draft-int4": (programs["target"], dict(draft=programs["draft-int4"])),
            "rejected": (programs["target"], rejected),
            "rejected-paused": (programs["target"], rejected_paused),
            "static": (programs["static"], {}),
            "static-lookup": (programs["static"], lookup),
            "plain-f32": (programs["target-f32"], {}),
        }
        for q in CONTROLLED:
            variants[f"controlled-{q:.2f}"] = (programs["target-f32"], dict(drafter=_controlled(reference, q, round_index)))
        variants.update({
            "paged": (programs["paged"], {}),
            "paged-lookup": (programs["paged"], lookup),
            "paged-rejected": (programs["paged"], rejected),
            "paged-rejected-paused": (programs["paged"], rejected_paused),
            "paged-f32": (programs["paged-f32"], {}),
        })
        for q in CONTROLLED:
            variants[f"paged-controlled-{q:.2f}"] = (programs["paged-f32"],
                                                     dict(drafter=_controlled(reference, q, 100 + round_index)))
        for name in [*genai_runners, *(("llamacpp", "llamacpp-lookup") if gguf.exists() else ())]:
            variants[name] = (None, None)
        order = list(variants)
        order = order[round_index % len(order):] + order[: round_index % len(order)]  # interleaved
        for name in order:
            row = results.setdefault(name, {"decode_tok_s": [], "acceptance": [], "calls": [], "same_ids": []})
            if name in genai_runners:
                # As ours' are counted: STEPS tokens, the decode time after the first (its wall time less TTFT).
                talk = genai_runners[name].conversation(prompt, STEPS - 1)
                row["decode_tok_s"].append((STEPS - 1) / (talk["own_decode_ms"] / 1e3))
                continue
            if name == "llamacpp":
                row["decode_tok_s"].append(llamacpp.bench(gguf, PROMPT, STEPS)["decode_tok_s"])
                continue
            if name == "llamacpp-lookup":
                found = llamacpp.lookup(gguf, text, STEPS, draft=5, context=CONTEXT)
                row["decode_tok_s"].append(found["decode_tok_s"])
                row["acceptance"].append(found["accepted"] / found["drafted"] if found["drafted"] else None)
                continue
            program, drafting = variants[name]
            done = generate(program, prompt, STEPS, **drafting)
            stats = done.statistics
            row["decode_tok_s"].append((stats.generated - 1) / stats.decode_s)
            row["acceptance"].append(stats.acceptance)
            row["calls"].append(stats.calls)
            expected = expected_of.get(id(program), plain)
            row["same_ids"].append(next((i for i, (a, b) in enumerate(zip(done.tokens, expected.tokens)) if a != b),
                                        None))
        print(f"round {round_index + 1}/{rounds} done", flush=True)
    del programs  # their compiled models, before the methods timed alone load
    return {"variants": results, "call_costs": _call_costs(work / "target.pte", "grown", COST_LENGTHS),
            "call_costs_paged": _call_costs(work / "target.pte", "paged", COST_LENGTHS)}


def record(run: dict, measured: dict, made: dict) -> None:
    """The run's rows: one per decoding variant, one per length going back was timed at."""
    variants = measured["variants"]
    for name, row in variants.items():
        diverged = [i for i in row["same_ids"] if i is not None]
        same = ("– (its own ids)" if not row["same_ids"] else "all" if not diverged else
                f"{len(row['same_ids']) - len(diverged)} of {len(row['same_ids'])} rounds; else from step "
                + ", ".join(map(str, diverged)))
        benchmark.add_row(run, "decode", name, base=_base(name), decode_tok_s=row["decode_tok_s"],
                          acceptance=[a for a in row["acceptance"] if a is not None] or None,
                          calls=row["calls"] or None, same_ids=same)
    grown, paged = measured["call_costs"], measured["call_costs_paged"]
    for length, ms in grown["cut_ms"].items():
        benchmark.add_row(run, "costs", str(length), grown_ms=ms, paged_ms=paged["cut_ms"][length])
    plain, paged_plain = variants["plain"]["decode_tok_s"], variants["paged"]["decode_tok_s"]
    run["notes"] += [
        f"A plain step of the int8 target: {grown['step_ms']:.1f} ms grown, {paged['step_ms']:.1f} ms paged; a call of "
        f"{WIDE} tokens {grown['wide_ms']:.1f} / {paged['wide_ms']:.1f} ms; a call whose token count differs from the "
        f"last one's {grown['width_change_ms']:.1f} / {paged['width_change_ms']:.1f} ms more (OpenVINO prepares its "
        "graph for the new shapes: speculative calls therefore keep one width).",
        f"Paged plain decoding runs at {statistics.median(p / g for p, g in zip(paged_plain, plain)):.2f}× grown's.",
        "Export times: " + ", ".join(f"{name} {value:.0f} s" if isinstance(value, float) else f"{name}: {value}"
                                     for name, value in made.items())]


def main() -> int:
    global CONTEXT, PROMPT, STEPS, COST_LENGTHS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/executorch_openvino_speculative"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="a Llama of two layers, width 64: end to end in minutes")
    parser.add_argument("--results-dir", type=Path)
    args = parser.parse_args()
    if args.smoke:
        SHAPE.update(SMOKE_SHAPE)
        CONTEXT, PROMPT, STEPS, COST_LENGTHS = 256, 16, 16, [32, 64]
        args.work, args.rounds = args.work.with_name(args.work.name + "-smoke"), min(args.rounds, 2)
    paths.use_built_library()
    run = benchmark.new_run("speculative", "Speculative decoding and going back", checkout=paths.REPO,
                            report=REPORT, versions=["torch", "executorch", "openvino", "openvino-genai"],
                            settings={"shape": f"{SHAPE['n_layers']} layers, dim {SHAPE['dim']}, vocab "
                                               f"{SHAPE['vocab_size']}", "context": CONTEXT, "prompt": PROMPT,
                                      "tokens": STEPS, "rounds": args.rounds})
    made = prepare(args.work, build_llamacpp=not args.smoke)
    record(run, measure(args.work, args.rounds), made)
    markdown = benchmark.save(benchmark.finish(run), args.results_dir or (paths.QUICK_RESULTS if args.smoke
                                                                          else paths.RESULTS))
    print(markdown.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
