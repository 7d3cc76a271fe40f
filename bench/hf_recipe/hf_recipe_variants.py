"""The variants of the optimum recipe benchmark: how each is exported from the shared checkpoint and
how it runs one conversation (the Llama: the prompt, then greedy steps; Whisper: 30 s of audio, its
decoder prompt, then greedy steps).

  ours     optimum-executorch's main_export with recipe "openvino" (recipe_kwargs weights= / group_size=),
           run by optimum-executorch's ExecuTorchModelForCausalLM / ExecuTorchModelForSpeechSeq2Seq
  ours-engine  the same export, run by this package's generation engine, as its docs tell users to
           (generation.Conversation on the program; Whisper: speech.WhisperProgram, a window's greedy
           loop whole in the engine): no Python per token
  xnnpack  the same with recipe "xnnpack" at its fastest settings (Llama: custom SDPA and custom KV
           cache), quantized by the task loader: 8da8w / 8da4w linears, 8w embeddings
  genai    optimum-intel's OpenVINO export (optimum-cli export openvino ...-with-past, --weight-format)
           run by OpenVINO GenAI: LLMPipeline with ATTENTION_BACKEND=SDPA (its stateful path), or
           WhisperPipeline (a stateful decoder)

ours, ours-engine and xnnpack run in optimum-executorch's environment (transformers 5.0.0rc1), genai in the main
one (transformers 4.57.6, optimum-intel, GenAI).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import List, Optional, Tuple

import hf_recipe_models as models
from peers import decoding, genai

OURS, OURS_ENGINE, XNNPACK, GENAI = "ours", "ours-engine", "xnnpack", "genai"
VARIANTS = (OURS, OURS_ENGINE, XNNPACK, GENAI)
OPTIMUM_ENV = {OURS, OURS_ENGINE, XNNPACK}  # the rest run in the main environment
SHARES_EXPORT = {OURS_ENGINE: OURS}  # runs another variant's export (which must be chosen too)
# OpenVINO properties of GenAI: ours' numerics (f32 compute and KV cache, its default "exact"
# precision) and latency hint (bench/llm's), and for LLMPipeline its stateful path.
LLM_PIPELINE_PROPERTIES = {"ATTENTION_BACKEND": "SDPA"}

# XNNPACK's quantized linears (int8 dynamic activations: its fast path) per weight format; the Llama's
# embedding int8 too, as ours and optimum-intel keep it.
XNNPACK_QLINEAR = {"int8": "8da8w", "int4": "8da4w"}


def recipe_kwargs(variant: str, fmt: str, size: models.Size) -> dict:
    if variant != OURS or fmt == "fp32":
        return {}
    return {"weights": "int8"} if fmt == "int8" else {"weights": "int4", "group_size": size.group}


def task(size: models.Size) -> str:
    return "text-generation" if size.kind == models.LLAMA else "automatic-speech-recognition"


def et_export_options(variant: str, fmt: str, size: models.Size) -> dict:
    """main_export's keyword arguments (besides the checkpoint and output folder)."""
    options = {"task": task(size), "recipe": "openvino" if variant == OURS else "xnnpack", "max_seq_len": size.context}
    if variant == OURS:
        options["recipe_kwargs"] = recipe_kwargs(variant, fmt, size)
        return options
    if size.kind == models.LLAMA:
        options.update(use_custom_sdpa=True, use_custom_kv_cache=True)
    if fmt != "fp32":
        options["qlinear"] = XNNPACK_QLINEAR[fmt]
        if size.kind == models.LLAMA:
            options["qembedding"] = "8w"
        else:
            # No qembedding: it also quantizes Whisper's positional embeddings, which index their weight
            # (weight[position_ids]), and torchao's quantized tensor has no aten.index: the export fails.
            # Its loader takes the encoder's linears and the group size (text-generation's is fixed at 32).
            options["qlinear_encoder"] = XNNPACK_QLINEAR[fmt]
            if fmt == "int4":
                options.update(qlinear_group_size=size.group, qlinear_encoder_group_size=size.group)
    return options


def optimum_intel_arguments(fmt: str, size: models.Size, checkpoint: Path, out: Path) -> List[str]:
    """optimum-cli's arguments: the LLM benchmark's weight formats (int8 asymmetric per channel; int4
    symmetric in groups, every linear layer, the embedding and the head int8_asym: ours' scheme)."""
    kind = "text-generation-with-past" if size.kind == models.LLAMA else "automatic-speech-recognition-with-past"
    return ["export", "openvino", "--model", str(checkpoint), "--task", kind, *genai.optimum_args(fmt, size.group),
            str(out)]


def describe(variant: str, fmt: str, size: models.Size) -> str:
    """The exact settings, for the report."""
    if variant in SHARES_EXPORT:
        runner = "generation.Conversation" if size.kind == models.LLAMA else "speech.WhisperProgram.transcribe"
        return f"{SHARES_EXPORT[variant]}'s export, run by executorch_openvino's engine ({runner})"
    if variant == GENAI:
        arguments = optimum_intel_arguments(fmt, size, Path("<checkpoint>"), Path("<out>"))[4:-1]
        pipeline = ("LLMPipeline, ATTENTION_BACKEND=SDPA" if size.kind == models.LLAMA else "WhisperPipeline")
        return f"optimum-cli export openvino {' '.join(arguments)}; {pipeline}, f32 compute and KV cache, LATENCY"
    options = et_export_options(variant, fmt, size)
    shown = ", ".join(f"{k}={v!r}" for k, v in options.items() if k not in ("task",))
    return f"main_export({shown})"


# --- exports (one per worker process) ----------------------------------------------------------------------


def _folder_bytes(folder: Path, suffixes: Tuple[str, ...]) -> int:
    return sum(p.stat().st_size for p in folder.iterdir() if p.suffix in suffixes and "tokenizer" not in p.name)


def export(variant: str, fmt: str, size: models.Size, checkpoint: Path, out: Path) -> dict:
    """Exports one variant into `out`; the seconds of the export call alone (imports done first)."""
    import shutil

    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    if variant in OPTIMUM_ENV:
        import executorch_openvino.optimum  # noqa: F401  (registers the openvino recipes)
        from optimum.exporters.executorch import main_export
        from optimum.exporters.executorch.recipes import xnnpack  # noqa: F401

        if variant == OURS and fmt != "fp32":
            import nncf  # noqa: F401
        options = et_export_options(variant, fmt, size)
        start = time.perf_counter()
        main_export(str(checkpoint), output_dir=str(out), **options)
        seconds = time.perf_counter() - start
        return {"seconds": seconds, "bytes": _folder_bytes(out, (".pte", ".ptd")),
                "files": sorted(p.name for p in out.iterdir()), "executorch_openvino": _package_origin()}
    import nncf  # noqa: F401
    import openvino_tokenizers  # noqa: F401
    from optimum.commands.optimum_cli import main as optimum_cli
    from optimum.exporters.openvino import main_export  # noqa: F401  (imported before the clock)

    argv = sys.argv
    sys.argv = ["optimum-cli", *optimum_intel_arguments(fmt, size, checkpoint, out)]
    try:
        start = time.perf_counter()
        optimum_cli()
        seconds = time.perf_counter() - start
    finally:
        sys.argv = argv
    missing = [name for name in ("openvino_tokenizer.xml", "openvino_detokenizer.xml") if not (out / name).is_file()]
    if size.kind == models.WHISPER and missing:
        raise RuntimeError(f"optimum-intel did not convert the tokenizer ({', '.join(missing)} missing); "
                           "WhisperPipeline needs both")
    return {"seconds": seconds, "bytes": _folder_bytes(out, (".bin",)), "files": sorted(p.name for p in out.iterdir())}


def _package_origin() -> str:
    import executorch_openvino

    return str(Path(executorch_openvino.__file__).resolve().parent)


# --- runners (in the serving worker) ----------------------------------------------------------------------


class EtCausalLM:
    """optimum-executorch's ExecuTorchModelForCausalLM on the exported program; the prompt in one forward
    call, then one call a token (its own forward(input_ids, cache_position))."""

    def __init__(self, folder: Path, checkpoint: Path):
        from optimum.executorch import ExecuTorchModelForCausalLM
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(checkpoint)
        self.model = ExecuTorchModelForCausalLM.from_pretrained(str(folder), config=config)

    def _step(self, tokens: List[int], position: int):
        import torch

        logits = self.model.forward(torch.tensor([tokens], dtype=torch.long),
                                    torch.arange(position, position + len(tokens), dtype=torch.long))
        return logits[0, -1]

    def conversation(self, given, steps: int, keep_logits: bool) -> dict:
        return dict(decoding.greedy(self._step, given, steps, keep_logits))


def _features(extractor, samples):
    """The log-mel features of 30 s of audio, and the milliseconds they took (timed apart from the
    runtimes: every Whisper variant gets them before its clock starts)."""
    begin = time.perf_counter()
    features = extractor(samples, sampling_rate=models.SAMPLE_RATE, return_tensors="pt").input_features
    return features, (time.perf_counter() - begin) * 1e3


class EtWhisper:
    """optimum-executorch's ExecuTorchModelForSpeechSeq2Seq: its forward runs the encoder once, then the
    decoder a token a call (the program's decoder takes one token); the features come from the
    checkpoint's WhisperFeatureExtractor before the clock starts (timed apart: features_ms)."""

    def __init__(self, folder: Path, checkpoint: Path):
        from optimum.executorch import ExecuTorchModelForSpeechSeq2Seq
        from transformers import AutoConfig, WhisperFeatureExtractor

        self.model = ExecuTorchModelForSpeechSeq2Seq.from_pretrained(str(folder),
                                                                     config=AutoConfig.from_pretrained(checkpoint))
        self.extractor = WhisperFeatureExtractor.from_pretrained(checkpoint)
        self.start_ids = models.decoder_prompt(checkpoint)

    def conversation(self, samples, steps: int, keep_logits: bool) -> dict:
        import torch

        features, features_ms = _features(self.extractor, samples)
        state = {"encoded": None}

        def step(tokens: List[int], position: int):  # the program's decoder takes one token a call
            for offset, token in enumerate(tokens):
                logits, state["encoded"] = self.model.forward(features, torch.tensor([[token]], dtype=torch.long),
                                                              torch.tensor([position + offset], dtype=torch.long),
                                                              state["encoded"])
            return logits[0, -1]

        return dict(decoding.greedy(step, self.start_ids, steps, keep_logits), features_ms=features_ms)


class EngineCausalLM:
    """The package's engine on the program: the prompt, then greedy steps, all in one generate call
    (its statistics give the prefill: the prompt to its first token, and the decode)."""

    def __init__(self, folder: Path, checkpoint: Path):
        from executorch_openvino.generation import Conversation, Program

        self.program = Program.load(folder / "model.pte")
        self.conversation_type = Conversation

    def conversation(self, given, steps: int, keep_logits: bool) -> dict:
        rows = []
        talk = self.conversation_type(self.program)  # a new one each time: the prompt fed whole
        result = talk.generate(list(given), steps + 1, eos_ids=[],
                               on_logits=(lambda row: rows.append(row) or False) if keep_logits else None)
        return _engine_result(result, rows, keep_logits)


class EngineWhisper:
    """speech.WhisperProgram: the encoder once, then the window's greedy loop whole in the engine. The
    prefill: the encoder and the decoder prompt to the first token."""

    def __init__(self, folder: Path, checkpoint: Path):
        from transformers import WhisperFeatureExtractor

        from executorch_openvino.speech import WhisperProgram

        self.program = WhisperProgram(folder)
        self.extractor = WhisperFeatureExtractor.from_pretrained(checkpoint)
        self.start_ids = models.decoder_prompt(checkpoint)

    def conversation(self, samples, steps: int, keep_logits: bool) -> dict:
        features, features_ms = _features(self.extractor, samples)
        begin = time.perf_counter()
        states = self.program.encode(features)
        encoder_ms = (time.perf_counter() - begin) * 1e3
        rows = []
        # The engine's own conversation on the program (WhisperProgram.transcribe's, with the logits seen).
        result = self.program._conversation.generate(
            list(self.start_ids), steps + 1, eos_ids=[],
            on_logits=(lambda row: rows.append(row) or False) if keep_logits else None)
        del states
        return dict(_engine_result(result, rows, keep_logits, before_ms=encoder_ms), features_ms=features_ms)


def _engine_result(result, rows, keep_logits: bool, before_ms: float = 0.0) -> dict:
    import torch

    stats = result.statistics
    return dict(prefill_ms=before_ms + stats.first_token_s * 1e3, decode_ms=stats.decode_s * 1e3,
                ids=list(result.tokens),
                logits=torch.from_numpy(__import__("numpy").stack(rows)).float() if keep_logits else None)


def genai_llm(folder: Path, checkpoint: Path):
    """LLMPipeline on its stateful path (ATTENTION_BACKEND=SDPA), with ours' f32 numerics."""
    return genai.GenaiRunner(folder, dict(genai.F32_PROPERTIES, **LLM_PIPELINE_PROPERTIES))


def genai_whisper(folder: Path, checkpoint: Path):
    return genai.GenaiWhisper(folder, genai.F32_PROPERTIES)


RUNNERS = {(OURS, models.LLAMA): EtCausalLM, (XNNPACK, models.LLAMA): EtCausalLM, (GENAI, models.LLAMA): genai_llm,
           (OURS_ENGINE, models.LLAMA): EngineCausalLM,
           (OURS, models.WHISPER): EtWhisper, (XNNPACK, models.WHISPER): EtWhisper,
           (OURS_ENGINE, models.WHISPER): EngineWhisper, (GENAI, models.WHISPER): genai_whisper}


def imports_for(variant: str) -> None:
    """What a serving worker imports before its memory baseline (so that the baseline holds them)."""
    import torch  # noqa: F401

    if variant in OPTIMUM_ENV:
        if variant in (OURS, OURS_ENGINE):
            import executorch_openvino  # noqa: F401  (registers our delegate with ExecuTorch's runtime)
        import optimum.executorch.modeling  # noqa: F401  (loads ExecuTorch's kernels, custom ops included)
        import transformers  # noqa: F401
    else:
        import openvino_genai  # noqa: F401


def threads(variant: str) -> Optional[int]:
    """ExecuTorch's thread pool size in this process (XNNPACK's threads), None for GenAI."""
    if variant not in OPTIMUM_ENV:
        return None
    from executorch.extension.pybindings.portable_lib import _threadpool_get_thread_count

    return int(_threadpool_get_thread_count())


def make_runner(variant: str, size: models.Size, folder: Path, checkpoint: Path):
    return RUNNERS[variant, size.kind](folder, checkpoint)

