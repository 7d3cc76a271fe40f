"""How each variant of the LLM benchmark runs one conversation (a prompt, then greedy steps), and the
two measurements made in worker processes: a probe (a fresh process: load time, peak RSS, greedy ids
and logits) and interleaved rounds (every variant of one size and weight format in one process, taking
turns). Every conversation starts at position 0 of the model's own cache (GenAI and native: state reset).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np
import torch

import llm_setup
from executorch_openvino.benchmark.memory import peak_kb, reset_peak, rss_kb
from common.rounds import rotated

# OpenVINO properties of native OpenVINO and GenAI's "genai" variant: the numerics ours uses (f32 compute,
# f32 KV cache) and its latency hint; "genai-default" is LLMPipeline with no properties at all.
F32_PROPERTIES = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32", "PERFORMANCE_HINT": "LATENCY"}


class Conversation(dict):
    """prefill_ms, decode_ms (all steps), ids, logits (the prompt's last row and one a step; None where
    the variant gives none), and GenAI's own metrics where it has them."""


def greedy_conversation(step, prompt: List[int], steps: int, keep_logits: bool) -> Conversation:
    """The prompt in one call, then `steps` greedy one-token calls, timed; `step(tokens, position)`
    returns the last position's logits (a view the next call may overwrite: copied when kept)."""
    rows = []
    start = time.perf_counter()
    row = step(prompt, 0)
    token = int(row.argmax())
    prefilled = time.perf_counter()
    rows.append(row.clone() if keep_logits else None)
    ids, position = [token], len(prompt)
    for _ in range(steps):
        row = step([token], position)
        position += 1
        token = int(row.argmax())
        ids.append(token)
        if keep_logits:
            rows.append(row.clone())
    done = time.perf_counter()
    return Conversation(prefill_ms=(prefilled - start) * 1e3, decode_ms=(done - prefilled) * 1e3,
                        ids=ids[:steps], logits=torch.stack(rows).float() if keep_logits else None)


class EtRunner:
    """A .pte through executorch.runtime; a program of its own per runner (load_method hands back the
    same method for the same program)."""

    def __init__(self, path: Path, variant: str, attention: Optional[str] = None):
        if variant in llm_setup.OURS_VARIANTS:
            import executorch_openvino  # registers our delegate; sets the attention option below
        if variant == "xnnpack-custom":
            from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401  (their kernels too)
        from executorch.runtime import Runtime

        if attention is None:  # not ours (only ours' variants are given one): the option is not read
            self.method = Runtime.get().load_program(path).load_method("forward")
            return
        # The option is read when the method loads (its model compiles), so one process can hold both kinds.
        with executorch_openvino.using_options(attention=attention):
            self.method = Runtime.get().load_program(path).load_method("forward")

    def _call(self, tokens: List[int], position: int) -> torch.Tensor:
        out = self.method.execute([torch.tensor([tokens], dtype=torch.long), torch.tensor([position])])[0]
        return out[0, -1] if out.dim() == 3 else out[0]

    def conversation(self, prompt: List[int], steps: int, keep_logits: bool = False) -> Conversation:
        return greedy_conversation(self._call, prompt, steps, keep_logits)


class NativeRunner:
    """optimum-intel's stateful IR driven by one plain ov.InferRequest: input_ids, attention_mask,
    position_ids and beam_idx as optimum-intel feeds them, the state reset per conversation. The inputs
    are the request's own tensors, reshaped and written in place each call, as GenAI's loop does:
    handing the request new tensors every call cost about 0.4 ms a decode step (int4, 23 M parameters)."""

    def __init__(self, folder: Path):
        import openvino as ov

        core = ov.Core()
        compiled = core.compile_model(str(folder / "openvino_model.xml"), "CPU", F32_PROPERTIES)
        self.request = compiled.create_infer_request()
        names = {port.get_any_name() for port in compiled.inputs}
        self.inputs = {name: self.request.get_tensor(name) for name in
                       ("input_ids", "attention_mask", "position_ids", "beam_idx") if name in names}

    def _call(self, tokens: List[int], position: int) -> torch.Tensor:
        n = len(tokens)
        values = {"input_ids": np.array([tokens], dtype=np.int64),
                  "attention_mask": np.ones((1, position + n), dtype=np.int64),
                  "position_ids": np.arange(position, position + n, dtype=np.int64)[None],
                  "beam_idx": np.zeros(1, dtype=np.int32)}
        for name, tensor in self.inputs.items():
            tensor.shape = values[name].shape
            tensor.data[...] = values[name]
        self.request.infer()
        return torch.from_numpy(self.request.get_tensor("logits").data[0, -1])  # a view: reused next call

    def conversation(self, prompt: List[int], steps: int, keep_logits: bool = False) -> Conversation:
        self.request.reset_state()
        return greedy_conversation(self._call, prompt, steps, keep_logits)


class GenaiRunner:
    """openvino_genai.LLMPipeline on the same IR, fed token ids (TokenizedInputs: no tokenizer is
    involved), greedy, ignore_eos, steps + 1 new tokens (the first comes from the prompt, as ours' does:
    `steps` decode calls each). Timed by us around generate() and by its perf metrics (TTFT, TPOT).
    With `prompt_lookup`, its own prompt-lookup decoding (5 drafts, n-grams up to 3)."""

    def __init__(self, folder: Path, properties: Optional[Dict[str, str]], prompt_lookup: bool = False):
        import openvino_genai

        self.genai, self.prompt_lookup = openvino_genai, prompt_lookup
        extra = {"prompt_lookup": True} if prompt_lookup else {}
        self.pipe = openvino_genai.LLMPipeline(str(folder), "CPU", **(properties or {}), **extra)

    def conversation(self, prompt: List[int], steps: int, keep_logits: bool = False) -> Conversation:
        import openvino as ov

        config = self.genai.GenerationConfig()
        # Not min_new_tokens: below it GenAI's sampler never picks the end token, which then changes the ids.
        config.max_new_tokens = steps + 1
        config.ignore_eos, config.do_sample = True, False
        if self.prompt_lookup:
            config.num_assistant_tokens, config.max_ngram_size = 5, 3
        inputs = self.genai.TokenizedInputs(ov.Tensor(np.array([prompt], dtype=np.int64)),
                                            ov.Tensor(np.ones((1, len(prompt)), dtype=np.int64)))
        start = time.perf_counter()
        result = self.pipe.generate(inputs, config)
        wall_ms = (time.perf_counter() - start) * 1e3
        metrics = result.perf_metrics
        ttft, tpot = metrics.get_ttft().mean, metrics.get_tpot().mean
        return Conversation(prefill_ms=ttft, decode_ms=tpot * steps, ids=list(result.tokens[0])[:steps], logits=None,
                            wall_ms=wall_ms, own_decode_ms=wall_ms - ttft, ttft_ms=ttft, tpot_ms=tpot)


class TextRunner:
    """ExecuTorch's LLM runner (executorch.extension.llm.runner.TextLLMRunner: its C++ prefill and
    generation loop, behind Python bindings) on a program carrying its metadata, with the benchmark's
    tokenizer. Fed the prompt's text (which encodes to the prompt's ids, llm_text.as_text), greedy,
    steps + 1 new tokens; timed by when its pieces arrive; the ids are read back from the pieces (every
    token of the tokenizer decodes to a text of its own)."""

    def __init__(self, path: Path, work: Path):
        import executorch_openvino  # registers our delegate
        from executorch.extension.llm.runner import GenerationConfig, TextLLMRunner

        from workloads import tokenizer as llm_text

        self.work, self.text, self.config_type = work, llm_text, GenerationConfig
        # As the rows before paged attention became the default (the variant's process runs it alone).
        executorch_openvino.set_options(attention="grown")
        self.runner = TextLLMRunner(str(path), str(work / llm_text.TOKENIZER_FILE))
        tokenizer = llm_text.load(work)
        self.ids_of_pieces: Dict[str, int] = {}
        for i in range(tokenizer.get_vocab_size()):
            self.ids_of_pieces.setdefault(tokenizer.decode([i], skip_special_tokens=False), i)

    def conversation(self, prompt: List[int], steps: int, keep_logits: bool = False) -> Conversation:
        # Timed by when the pieces arrive (the runner's stats count whole milliseconds).
        pieces, times, stats = [], [], []

        def arrived(piece: str) -> None:
            times.append(time.perf_counter())
            pieces.append(piece)

        config = self.config_type(temperature=0.0, echo=False, max_new_tokens=steps + 1)
        text = self.text.as_text(self.work, prompt)
        start = time.perf_counter()
        self.runner.generate(text, config, token_callback=arrived, stats_callback=stats.append)
        wall_ms = (time.perf_counter() - start) * 1e3
        self.runner.reset()
        if len(times) < 2:
            raise RuntimeError(f"the runner generated {len(times)} tokens")
        decoded = len(times) - 1  # the first token comes with the prompt
        # Normalised to `steps` decode calls should the runner have stopped early (at its end token).
        decode_ms = (times[-1] - times[0]) * 1e3 * steps / decoded
        ids = [self.ids_of_pieces.get(piece, -1) for piece in pieces]
        return Conversation(prefill_ms=(times[0] - start) * 1e3, decode_ms=decode_ms, ids=ids[:steps], logits=None,
                            wall_ms=wall_ms, generated=len(times),
                            # It loads the program at the first generate, timed in its stats.
                            runner_load_ms=stats[0].model_load_end_ms - stats[0].model_load_start_ms if stats else 0)


class LlamaCppRunner:
    """llama.cpp's llama-bench on the size's GGUF: a prompt of the conversation's length and `steps`
    generated tokens (random ids: llama-bench returns no ids), two threads; its prompt and generation
    rates as this conversation's times. Its peak memory is the child process's."""

    def __init__(self, path: Path, backend: str = "cpu"):
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llamacpp"))
        import llamacpp

        self.llamacpp, self.path, self.backend = llamacpp, path, backend
        if not path.is_file():
            raise FileNotFoundError(path)

    def conversation(self, prompt: List[int], steps: int, keep_logits: bool = False) -> Conversation:
        rates = self.llamacpp.bench(self.path, len(prompt), steps, backend=self.backend)
        return Conversation(prefill_ms=len(prompt) * 1e3 / rates["prompt_tok_s"],
                            decode_ms=steps * 1e3 / rates["decode_tok_s"], ids=None, logits=None)


def make_runner(variant: str, fmt: str, work: Path):
    if variant in llm_setup.LLAMACPP_BACKENDS:
        return LlamaCppRunner(work / f"{llm_setup.LLAMACPP}-{fmt}.gguf", llm_setup.LLAMACPP_BACKENDS[variant])
    if variant in llm_setup.OV_VARIANTS:
        folder = work / f"ov-{fmt}"
        if variant == "native":
            return NativeRunner(folder)
        properties = {"genai": F32_PROPERTIES, "genai-sdpa": dict(F32_PROPERTIES, ATTENTION_BACKEND="SDPA")}
        return GenaiRunner(folder, properties.get(variant))
    if variant in llm_setup.RUNNER_VARIANTS:
        return TextRunner(work / f"{llm_setup.RUNNER_VARIANTS[variant]}-{fmt}.pte", work)
    if variant in llm_setup.PAGED_VARIANTS:
        return EtRunner(work / f"{llm_setup.PAGED_VARIANTS[variant]}-{fmt}.pte", variant, attention="paged")
    # ours and ours-fast: the grown caches, named so (paged attention is the default since 2026-12-06).
    return EtRunner(work / f"{variant}-{fmt}.pte", variant,
                    attention="grown" if variant in llm_setup.OURS_VARIANTS else None)


def import_for(variant: str) -> None:
    """The imports a variant's process needs before the RSS baseline (so the baseline holds them)."""
    if variant in llm_setup.OV_VARIANTS:
        import openvino  # noqa: F401
        if variant != "native":
            import openvino_genai  # noqa: F401
    elif variant in llm_setup.RUNNER_VARIANTS:
        import executorch_openvino  # noqa: F401
        from executorch.extension.llm.runner import TextLLMRunner  # noqa: F401
    else:
        import executorch.runtime  # noqa: F401
        if variant in llm_setup.OURS_VARIANTS:
            import executorch_openvino  # noqa: F401
        if variant == "xnnpack-custom":
            from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401  (their kernels too)


def probe(variant: str, fmt: str, work: Path, prompt: List[int], steps: int) -> dict:
    """In a fresh process: load, one conversation; load time, RSS and peak RSS, ids and logits
    (saved next to the artifacts as probe-<variant>-<fmt>.pt)."""
    import_for(variant)
    baseline = rss_kb()
    if not reset_peak():
        raise RuntimeError("the peak of resident memory (VmHWM) cannot be reset here")
    start = time.perf_counter()
    runner = make_runner(variant, fmt, work)
    load_ms = (time.perf_counter() - start) * 1e3
    after_load = rss_kb()
    talk = runner.conversation(prompt, steps, keep_logits=True)
    load_ms += talk.get("runner_load_ms", 0)  # ExecuTorch's runner loads at its first generate
    peak = peak_kb()
    if variant in llm_setup.LLAMACPP_BACKENDS:  # its own process: all of its memory is what it added
        import resource

        baseline, peak = 0, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    torch.save({"ids": talk["ids"], "logits": talk["logits"]}, work / f"probe-{variant}-{fmt}.pt")
    return {"load_ms": load_ms, "baseline_kb": baseline, "after_load_kb": after_load, "peak_kb": peak,
            "prefill_ms": talk["prefill_ms"], "decode_ms": talk["decode_ms"]}


def rounds(variants: List[str], fmt: str, work: Path, prompt: List[int], steps: int, count: int,
           prompts: List[List[int]]) -> dict:
    """Every variant loaded in this process, one warm-up conversation each (on `prompt`), then `count`
    rounds in which the variants take turns, one conversation each on that round's prompt (`prompts`,
    the same for every variant), the order rotated by one every round."""
    # torch here only makes the token tensors and takes the argmax; its idle OpenMP threads spin after
    # each op and take the two cores from the runtimes' own threads (measured: ours 3.2 -> 2.0 ms a
    # decode step): one thread, for every variant alike.
    torch.set_num_threads(1)
    runners, failed = {}, {}
    for variant in variants:
        try:
            runners[variant] = make_runner(variant, fmt, work)
            runners[variant].conversation(prompt, steps)
        except Exception as error:  # reported, the others go on
            failed[variant] = f"{type(error).__name__}: {error}"
    order = list(runners)
    per_round: List[Dict[str, dict]] = []
    for r in range(count):
        results = {}
        for variant in rotated(order, r):
            talk = runners[variant].conversation(prompts[r], steps)
            talk.pop("logits")
            results[variant] = dict(talk)
        per_round.append(results)
    return {"rounds": per_round, "failed": failed, "order": order}
