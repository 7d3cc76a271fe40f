"""What serving costs (`make bench-serving`): executorch-openvino-worker driven by ExecuTorch's own
WorkerClient (the server's side of the protocol), on the LLM suite's program of one size (bench/llm:
ExecuTorch's Llama, random weights, the default paged attention):

  cold turn       a new session given a history of H tokens: the whole history is prefilled
  warm turn       the same session's next turn (the history, its answer, a short question): only the
                  new tokens are prefilled; time to the first token against the cold turn's
  1 session       one session decoding alone: tokens per second
  N sessions      N sessions taking turns through the one worker (the server runs one request at a time)
  N in parallel   N conversations on one load, each on its own thread through the engine (no server)
  N batched       N batched conversations (continuous batching: their steps in one call) on the same
                  model exported through the openvino recipe with every position's logits (export-hf
                  --logits all, in optimum-executorch's environment), against one conversation of it
  GenAI           the peer: OpenVINO GenAI's ContinuousBatchingPipeline on optimum-intel's IR of the same
                  checkpoint (f32 numerics, as ours), N prompts against one; decode time is a generation
                  of 1 + 64 tokens less one of 1 token, so the prompts' prefill cancels

Memory: the worker's resident memory after loading, and what each session's history adds against the
size of its KV cache (2 x layers x KV heads x head size x 4 bytes a position, in blocks of 32).

    python bench/serving/serving_bench.py [--size smollm2-135m] [--format int8] [--history 1024] [--rounds 3]
                                          [--optimum-python .venv-optimum/bin/python]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from common import paths  # noqa: E402
import llm_setup  # noqa: E402

from executorch_openvino import benchmark  # noqa: E402

QUESTION, ANSWER, SESSIONS = 16, 64, 4
REPORT = {
    "description": [
        "executorch-openvino-worker driven by ExecuTorch's WorkerClient. Warm resume: a session holding a history of "
        "H tokens and its answer gets its next turn (a 16-token question); the time to its first token against a cold "
        "turn (a new session given the same whole conversation). Sessions: 64 greedy tokens a turn, tokens per second "
        "of all sessions together, against one session alone. Median [lowest–highest] over rounds."],
    "tables": [
        {"title": "Warm resume", "columns": [
            {"title": "turn", "field": "turn"},
            {"title": "prompt tokens", "field": "prompt_tokens", "format": ".0f"},
            {"title": "prefilled", "field": "prefilled", "format": ".0f"},
            {"title": "first token, ms", "field": "first_token_ms", "format": ".1f"},
            {"title": "/ cold", "field": "first_token_ms", "vs": "cold turn", "format": ".3f", "unit": "×"}],
         "where": {"table": "resume"}},
        {"title": "Sessions on one load", "columns": [
            {"title": "program", "field": "program"},
            {"title": "how", "field": "variant"},
            {"title": "tokens/s, all sessions", "field": "decode_tok_s", "format": ".1f"},
            {"title": "/ one session", "field": "decode_tok_s", "vs_field": "baseline", "format": ".2f", "unit": "×"},
            {"title": "ids equal to alone", "field": "ids_equal_alone"},
            {"title": "logits max abs diff", "field": "logits_max_abs_diff", "format": ".3g"}],
         "where": {"table": "sessions"}},
        {"title": "Memory", "columns": [
            {"title": "what", "field": "variant"},
            {"title": "MB", "field": "mb", "format": ".1f"}],
         "where": {"table": "memory"}},
    ],
    "targets": [
        dict(title="warm turn's first token ≤ 0.10× a cold prefill of the whole conversation", field="first_token_ms",
             vs="cold turn", at_most=0.10, where={"variant": "warm turn"}),
        dict(title=f"{SESSIONS} sessions: aggregate decode ≥ 1.5× one session's", field="decode_tok_s",
             vs="1 session", at_least=1.5, where={"table": "sessions", "variant": f"{SESSIONS} sessions in turn"}),
        dict(title=f"{SESSIONS} sessions: aggregate decode ≥ 1.5× one session's", field="decode_tok_s",
             vs="1 session", at_least=1.5, where={"table": "sessions", "variant": f"{SESSIONS} in parallel threads"}),
        dict(title=f"{SESSIONS} sessions: aggregate decode ≥ 1.5× one session's", field="decode_tok_s",
             vs="1 conversation", at_least=1.5,
             where={"table": "sessions", "variant": f"{SESSIONS} batched conversations"}),
    ],
}


def worker_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@dataclass
class Request:  # the fields WorkerClient.generate reads off its config
    prompt_segments: list
    session_id: str
    max_new_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int = 0
    seed: int = 0
    stop: list = field(default_factory=list)


class Turn:
    """One request through the client: (first token seconds, done stats, wall seconds)."""

    def __init__(self, client, session, ids, count):
        first, stats = [], []
        began = time.perf_counter()
        request = Request([{"ids": [int(i) for i in ids]}], session, count)
        client.generate(None, request, lambda piece: first or first.append(time.perf_counter()), stats.append)
        self.wall = time.perf_counter() - began
        self.first_token = (first[0] if first else time.perf_counter()) - began
        self.stats = stats[0]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="smollm2-135m", choices=sorted(llm_setup.SIZES))
    parser.add_argument("--format", default="int8", choices=llm_setup.FORMATS)
    parser.add_argument("--history", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", type=Path, default=paths.REPO / "build" / "serving-work")
    parser.add_argument("--results-dir", type=Path, default=paths.RESULTS)
    parser.add_argument("--optimum-python", default=os.environ.get("OPTIMUM_PYTHON") or
                        str(paths.REPO / ".venv-optimum" / "bin" / "python"),
                        help="optimum-executorch's environment, for the batched conversations' export (skipped, "
                             "with a note, without it)")
    args = parser.parse_args(argv)
    from executorch.examples.llm_server.python.worker_client import spawn_worker

    size = llm_setup.SIZES[args.size]
    work = args.work / size.name
    if not (work / "weights.pt").exists():
        llm_setup.prepare_size(size, work)
    pte = work / f"ours-{args.format}.pte"
    if not pte.exists():
        llm_setup.export("ours", args.format, size, work)
    tokenizer = work / "tokenizer.json"
    run = benchmark.new_run("serving", f"Serving: warm resume and sessions ({size.name}, {args.format})",
                            checkout=paths.REPO, report=REPORT, versions=["torch", "executorch", "openvino"],
                            settings={"size": size.describe(), "format": args.format, "history": args.history,
                                      "rounds": args.rounds, "sessions": SESSIONS})
    rng = np.random.default_rng(0)
    command = [sys.executable, "-m", "executorch_openvino.serving.worker", "--model_path", str(pte),
               "--tokenizer_path", str(tokenizer), "--max-sessions", str(SESSIONS + 2)]
    client = spawn_worker(command)
    pid = client._proc.pid
    memory = {"worker after load": worker_rss_mb(pid)}
    group = f"{size.name}, {args.format}"
    cold, warm, prompt_tokens, prefilled = [], [], {}, {}
    for r in range(args.rounds + 1):
        history = rng.integers(3, size.vocab, args.history, dtype=np.int64).tolist()
        question = rng.integers(3, size.vocab, QUESTION, dtype=np.int64).tolist()
        first = Turn(client, f"resume-{r}", history, ANSWER)
        conversation = history + first.stats.generated_token_ids + question
        w = Turn(client, f"resume-{r}", conversation, 8)
        c = Turn(client, f"cold-{r}", conversation, 8)
        client.close_session(f"resume-{r}")
        client.close_session(f"cold-{r}")
        if r == 0:
            continue  # untimed: the first turns of a process run slower
        cold.append(1e3 * c.first_token)
        warm.append(1e3 * w.first_token)
        prompt_tokens = {"cold turn": c.stats.num_prompt_tokens, "warm turn": w.stats.num_prompt_tokens}
        prefilled = {"cold turn": c.stats.prefilled_prompt_tokens, "warm turn": w.stats.prefilled_prompt_tokens}
    for name, times in (("cold turn", cold), ("warm turn", warm)):
        benchmark.add_row(run, group, name, table="resume", turn=name, first_token_ms=times,
                          prompt_tokens=prompt_tokens[name], prefilled=prefilled[name])

    # Sessions taking turns through the worker, each holding a history of its own.
    alone, in_turn = [], []
    for r in range(args.rounds):
        names = [f"s{r}-{i}" for i in range(SESSIONS)]
        histories = {n: rng.integers(3, size.vocab, 128, dtype=np.int64).tolist() for n in names}
        for n in names:
            Turn(client, n, histories[n], 1)  # prefilled before the clock starts
        t = Turn(client, names[0], histories[names[0]], ANSWER)
        alone.append(t.stats.num_generated_tokens / t.wall)
        began, tokens = time.perf_counter(), 0
        for n in names:
            t = Turn(client, n, histories[n], ANSWER)
            tokens += t.stats.num_generated_tokens
        in_turn.append(tokens / (time.perf_counter() - began))
        if r == args.rounds - 1:
            memory[f"worker with {SESSIONS} sessions of ~{128 + ANSWER} positions"] = worker_rss_mb(pid)
        for n in names:
            client.close_session(n)
    # What one session's long history adds to the worker.
    before = worker_rss_mb(pid)
    Turn(client, "memory", rng.integers(3, size.vocab, args.history, dtype=np.int64).tolist(), 1)
    memory[f"one session's {args.history}-token history"] = worker_rss_mb(pid) - before
    memory[f"its KV cache ({-(-args.history // 32) * 32} positions)"] = kv_mb(size, args.history)
    client.close()

    # N conversations on one load in threads of this process: the engine runs without the GIL.
    from executorch_openvino.generation import Conversation, Program

    programs = [Program.load(pte) for _ in range(SESSIONS)]
    chats = [Conversation(p) for p in programs]
    parallel = []
    for r in range(args.rounds):
        prompts = [rng.integers(3, size.vocab, 128, dtype=np.int64).tolist() for _ in chats]
        for chat, prompt in zip(chats, prompts):
            chat.generate(prompt, 0)
        counts = [0] * len(chats)

        def decode(i):
            counts[i] = chats[i].generate(prompts[i], ANSWER, eos_ids=[]).statistics.generated

        elapsed = on_threads(decode, len(chats))
        parallel.append(sum(counts) / elapsed)
    for fmt in dict.fromkeys((args.format, "fp32")):  # fp32: eager's numerics, where batching changes no id
        batched_rows(run, args, fmt, size, work, rng)
    genai_rows(run, args, size, work, rng)
    bench_export = "this bench's export (ExecuTorch's Llama)"
    for name, rates in (("1 session", alone), (f"{SESSIONS} sessions in turn", in_turn),
                        (f"{SESSIONS} in parallel threads", parallel)):
        benchmark.add_row(run, group, name, table="sessions", program=bench_export, baseline="1 session",
                          decode_tok_s=rates)
    for name, mb in memory.items():
        benchmark.add_row(run, group, name, table="memory", mb=mb)
    markdown = benchmark.save(benchmark.finish(run), args.results_dir)
    print(markdown.read_text())
    return 0


def kv_mb(size, positions: int) -> float:
    """A conversation's KV caches in f32 for `positions`, in whole blocks of 32."""
    return 2 * size.layers * size.kv_heads * size.head_dim * 4 * (-(-positions // 32) * 32) / 2**20


def on_threads(job, count: int) -> float:
    """Runs job(0) .. job(count - 1) each on a thread of its own; the seconds until all are done."""
    threads = [threading.Thread(target=job, args=(i,)) for i in range(count)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - began


def recipe_program(args, fmt: str, work: Path) -> Path:
    """The size's checkpoint through the openvino recipe with every position's logits (what batched
    conversations need), exported once in optimum-executorch's environment."""
    out = work / f"recipe-all-{fmt}"
    if not (out / "model.pte").exists():
        environment = dict(os.environ, PYTHONPATH=str(paths.PYTHON), HF_HUB_OFFLINE="1")
        weights = [] if fmt == "fp32" else ["--weights", fmt]
        subprocess.run([args.optimum_python, "-m", "executorch_openvino", "export-hf", str(work / "hf"),
                        "--task", "text-generation", *weights, "--logits", "all", "--max-seq-len", "1280",
                        "--out", str(out)], check=True, env=environment)
    return out / "model.pte"


def batched_rows(run, args, fmt: str, size, work: Path, rng) -> None:
    """One conversation of the recipe's program decoding alone, then SESSIONS batched conversations of
    it decoding at once (their prompts fed before the clock), each checked against its greedy ids alone."""
    from executorch_openvino.generation import Conversation, Program

    group = f"{size.name}, {fmt}, recipe logits=all"
    if not Path(args.optimum_python).is_file() or not (work / "hf").is_dir():
        run.setdefault("notes", []).append(f"{group}: not run (no optimum-executorch environment at "
                                           f"{args.optimum_python}, or no checkpoint)")
        return
    program = Program.load(recipe_program(args, fmt, work))
    one = Conversation(program)
    members = [Conversation(program, batched=True) for _ in range(SESSIONS)]
    alone, together, agreed, largest = [], [], [], 0.0
    for r in range(args.rounds + 1):
        prompts = [rng.integers(3, size.vocab, 128, dtype=np.int64).tolist() for _ in members]
        expected = [Decoded() for _ in members]
        for i, prompt in enumerate(prompts):
            one.generate(prompt, 1, eos_ids=[])  # the prompt held: what follows is decode alone
            began = time.perf_counter()
            expected[i].take(one.generate(prompt, ANSWER, eos_ids=[], on_logits=expected[i].row))
            expected[i].seconds = time.perf_counter() - began
        got = [Decoded() for _ in members]
        for member, prompt in zip(members, prompts):
            member.generate(prompt, 1, eos_ids=[])  # the prompts held before the clock, each alone

        def decode(i):
            got[i].take(members[i].generate(prompts[i], ANSWER, eos_ids=[], on_logits=got[i].row))

        elapsed = on_threads(decode, len(members))
        if r == 0:
            continue  # untimed: the first calls of a batch of this shape compile its kernels
        alone.append(float(np.median([len(e.tokens) / e.seconds for e in expected])))
        together.append(sum(len(g.tokens) for g in got) / elapsed)
        for a, b in zip(expected, got):
            same = next((j for j, (x, y) in enumerate(zip(a.tokens, b.tokens)) if x != y), len(a.tokens))
            agreed.append(same)
            # Up to and with the first differing choice: the same history, so the rows compare.
            pairs = zip(a.rows[:same + 1], b.rows[:same + 1])
            largest = max([largest] + [float(np.abs(x - y).max()) for x, y in pairs])
    # What more conversations cost once the calls' shapes have run: each its slot of the caches.
    before = worker_rss_mb(os.getpid())
    more = [Conversation(program, batched=True) for _ in range(SESSIONS)]
    for member in more:
        member.generate(rng.integers(3, size.vocab, 128, dtype=np.int64).tolist(), ANSWER, eos_ids=[])
    positions = 128 + ANSWER
    benchmark.add_row(run, group, f"{SESSIONS} more batched conversations of {positions} positions add ({fmt})",
                      table="memory", mb=worker_rss_mb(os.getpid()) - before)
    benchmark.add_row(run, group, f"their KV caches ({SESSIONS} x {-(-positions // 32) * 32} positions)",
                      table="memory", mb=SESSIONS * kv_mb(size, positions))
    program_name = f"recipe export, logits=all, {fmt}"
    shared = dict(table="sessions", program=program_name, baseline="1 conversation")
    benchmark.add_row(run, group, "1 conversation", decode_tok_s=alone, **shared)
    benchmark.add_row(run, group, f"{SESSIONS} batched conversations", decode_tok_s=together, **shared,
                      shared_calls=program.batch_counts()["shared"],
                      ids_equal_alone=f"{sum(a == ANSWER for a in agreed)} of {len(agreed)} conversations "
                                      f"(the others up to step {min(agreed)} at least)",
                      logits_max_abs_diff=largest)


def genai_rows(run, args, size, work: Path, rng) -> None:
    """GenAI's continuous batching on the same checkpoint: one prompt decoding, then SESSIONS at once."""
    group = f"{size.name}, {args.format}, GenAI"
    try:
        import openvino
        import openvino_genai

        folder = llm_setup.export("genai", args.format, size, work)
    except (ImportError, RuntimeError) as error:
        run.setdefault("notes", []).append(f"{group}: not run ({error})")
        return
    scheduler = openvino_genai.SchedulerConfig()
    scheduler.cache_size, scheduler.max_num_seqs = 1, SESSIONS * 2  # GB of KV cache
    pipe = openvino_genai.ContinuousBatchingPipeline(str(folder), scheduler, "CPU", llm_setup.genai.F32_PROPERTIES)

    def seconds(prompts, count):
        config = openvino_genai.GenerationConfig()
        config.max_new_tokens = config.min_new_tokens = count
        config.do_sample, config.ignore_eos = False, True
        began = time.perf_counter()
        pipe.generate([openvino.Tensor(np.array([p], dtype=np.int64)) for p in prompts], [config] * len(prompts))
        return time.perf_counter() - began

    rates = {1: [], SESSIONS: []}
    for r in range(args.rounds + 1):
        for count in rates:
            prompts = [rng.integers(3, size.vocab, 128, dtype=np.int64).tolist() for _ in range(count)]
            decode_s = seconds(prompts, ANSWER + 1) - seconds(prompts, 1)
            if r > 0:  # the first round compiles the pipeline's kernels for these shapes
                rates[count].append(count * ANSWER / decode_s)
    shared = dict(table="sessions", program="optimum-intel's IR, GenAI's ContinuousBatchingPipeline",
                  baseline="1 prompt")
    benchmark.add_row(run, group, "1 prompt", decode_tok_s=rates[1], **shared)
    benchmark.add_row(run, group, f"{SESSIONS} prompts at once", decode_tok_s=rates[SESSIONS], **shared)


@dataclass
class Decoded:
    """A generation's ids, each step's row of logits, its seconds."""
    tokens: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    seconds: float = 0.0

    def row(self, values) -> bool:
        self.rows.append(np.array(values, copy=True))
        return False

    def take(self, done) -> None:
        self.tokens = done.tokens


if __name__ == "__main__":
    sys.exit(main())
