"""How each variant of the LLM benchmark runs one conversation (a prompt, then greedy steps), and the two
measurements made in worker processes: a probe (a fresh process: load time, peak RSS, greedy ids and
logits) and interleaved rounds (every variant of one size and weight format in one process, taking
turns). Every conversation starts at position 0 of the model's own cache."""

from __future__ import annotations

import resource
import time
from pathlib import Path
from typing import Dict, List, Optional

import torch

import llm_setup
from executorch_openvino import benchmark
from executorch_openvino.benchmark.memory import peak_kb, reset_peak, rss_kb
from peers import decoding, genai, llamacpp


class EtRunner:
    """XNNPACK's .pte through executorch.runtime, its greedy steps by the engine over the method (a
    program of its own per runner: load_method hands back the same method for the same program)."""

    def __init__(self, path: Path):
        from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401  (XNNPACK's program's kernels)
        from executorch.runtime import Runtime

        self.method = Runtime.get().load_program(path).load_method("forward")

    def _call(self, tokens: List[int], position: int) -> torch.Tensor:
        out = self.method.execute([torch.tensor([tokens], dtype=torch.long), torch.tensor([position])])[0]
        return out[0, -1] if out.dim() == 3 else out[0]

    def conversation(self, prompt: List[int], steps: int, keep_logits: bool = False) -> decoding.Conversation:
        return decoding.greedy(self._call, prompt, steps, keep_logits)


class EngineRunner:
    """Ours through the generation engine, as every front runs it (Program.load under the variant's
    options; a new conversation each time, fed from position 0). The logits each token was chosen from
    come from the engine's observer when kept."""

    def __init__(self, path: Path, attention: str, cache_dir: Optional[Path] = None):
        import executorch_openvino
        from executorch_openvino.generation import Program

        options = {"cache_dir": str(cache_dir)} if cache_dir is not None else {}
        with executorch_openvino.using_options(attention=attention, **options):
            self.program = Program.load(path)

    def conversation(self, prompt: List[int], steps: int, keep_logits: bool = False) -> decoding.Conversation:
        import numpy as np

        from executorch_openvino.generation import Conversation

        rows = []
        done = Conversation(self.program).generate(list(prompt), steps + 1, eos_ids=[],
                                                   on_logits=rows.append if keep_logits else None)
        stats = done.statistics
        return decoding.Conversation(prefill_ms=stats.prefill_s * 1e3, decode_ms=stats.decode_s * 1e3, ids=done.tokens,
                                     logits=torch.from_numpy(np.stack(rows)) if keep_logits else None)


def make_runner(variant: str, fmt: str, work: Path):
    twin = {**llm_setup.PAGED_VARIANTS, **llm_setup.CACHED_VARIANTS}.get(variant, variant)
    artifact = work / f"{twin}-{fmt}.pte"
    if variant in llm_setup.CACHED_VARIANTS:
        cache = llm_setup.cache_folder(variant, fmt, work)
        if twin in llm_setup.GENAI_VARIANTS:
            return genai.GenaiRunner(work / f"ov-{fmt}", {"CACHE_DIR": str(cache)})
        return EngineRunner(artifact, "grown", cache_dir=cache)
    if variant in llm_setup.GENAI_VARIANTS:
        return genai.GenaiRunner(work / f"ov-{fmt}", llm_setup.GENAI_VARIANTS[variant])
    if variant == llm_setup.LLAMACPP:
        kind = llm_setup.LLAMACPP_TYPES[fmt]
        return llamacpp.Runner(work / ("llamacpp-fp32.gguf" if kind is None else f"llamacpp-fp32-{kind}.gguf"))
    if variant in llm_setup.OURS_VARIANTS:
        return EngineRunner(artifact, "paged" if variant in llm_setup.PAGED_VARIANTS else "grown")
    return EtRunner(artifact)


def import_for(variant: str) -> None:
    """The imports a variant's process needs before the RSS baseline (so the baseline holds them, and
    OpenVINO's libraries for ours as for GenAI, which loads them at import: the runtime's own libraries
    are not the model's memory)."""
    if llm_setup.CACHED_VARIANTS.get(variant, variant) in llm_setup.GENAI_VARIANTS:
        import openvino_genai  # noqa: F401
    elif variant != llm_setup.LLAMACPP:
        import executorch.runtime  # noqa: F401
        if variant in llm_setup.OURS_VARIANTS:
            import executorch_openvino

            executorch_openvino.info()  # opens OpenVINO's libraries


def probe(variant: str, fmt: str, work: Path, prompt: List[int], steps: int) -> dict:
    """In a fresh process: load, a conversation of the prompt and one token (the first prefill), then
    the probe's conversation; load time, resident memory after each phase, the load's peak and the
    whole peak, ids and logits (saved next to the artifacts as probe-<variant>-<fmt>.pt)."""
    import_for(variant)
    baseline = rss_kb()
    if not reset_peak():
        raise RuntimeError("the peak of resident memory (VmHWM) cannot be reset here")
    start = time.perf_counter()
    runner = make_runner(variant, fmt, work)
    load_ms = (time.perf_counter() - start) * 1e3
    phases = {"load_kb": rss_kb(), "load_peak_kb": peak_kb()}
    runner.conversation(prompt, 1)
    phases["prefill_kb"] = rss_kb()
    talk = runner.conversation(prompt, steps, keep_logits=True)
    phases["decode_kb"] = rss_kb()
    peak = peak_kb()
    if variant == llm_setup.LLAMACPP:  # its own process: all of its memory is what it added
        baseline, peak = 0, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        phases = {}
    torch.save({"ids": talk["ids"], "logits": talk["logits"]}, work / f"probe-{variant}-{fmt}.pt")
    return {"load_ms": load_ms, "baseline_kb": baseline, "peak_kb": peak, **phases}


def rounds(variants: List[str], fmt: str, work: Path, prompt: List[int], steps: int,
           prompts: List[List[int]]) -> dict:
    """Every variant loaded in this process, one warm-up conversation each (on `prompt`), then one round
    per prompt of `prompts`: the variants take turns (the engine's order), one conversation each."""
    # torch only makes the token tensors and takes the argmax here; its idle OpenMP threads would spin after
    # each op and take the cores from the runtimes' own threads: one thread, for every variant alike.
    torch.set_num_threads(1)
    runners, failed = {}, {}
    for variant in variants:
        try:
            runners[variant] = make_runner(variant, fmt, work)
            runners[variant].conversation(prompt, steps)
        except Exception as error:  # reported, the others go on
            failed[variant] = f"{type(error).__name__}: {error}"
    per_round: Dict[str, List[dict]] = {variant: [] for variant in runners}
    for r in range(len(prompts)):
        for variant in benchmark.round_order(list(runners), r):
            talk = runners[variant].conversation(prompts[r], steps)
            per_round[variant].append({"prefill_ms": talk["prefill_ms"], "decode_ms": talk["decode_ms"]})
    return {"rounds": per_round, "failed": failed}
