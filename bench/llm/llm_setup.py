"""The LLM benchmark's models and the artifacts every variant runs (llm_bench.py).

One architecture per size, built twice with the same random weights: ExecuTorch's own Llama
(executorch.examples.models.llama, KV cache, prompts of any length in one call), which ours and
XNNPACK export, and a Hugging Face LlamaConfig model holding its weights (peers.genai.hf_llama), which
optimum-intel exports for OpenVINO GenAI; the preparation checks on the prompt's logits that both
compute the same function. llama.cpp gets the same weights as GGUF (peers.llamacpp).
"""

from __future__ import annotations

import copy
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Dict, List, Optional

import torch

from peers import decoding, genai, llamacpp
from workloads import tokenizer

FORMATS = ("fp32", "int8", "int4")
SEED = 1234


@dataclass(frozen=True)
class Size:
    name: str
    dim: int
    layers: int
    heads: int
    kv_heads: int
    hidden: int
    vocab: int
    context: int
    prompt: int = 128
    steps: int = 128
    group: int = 128  # int4 weights: the group size of every variant that takes one

    @property
    def head_dim(self) -> int:
        return self.dim // self.heads

    def parameters(self) -> int:
        attention = self.dim * self.dim * 2 + self.dim * self.kv_heads * self.head_dim * 2
        return 2 * self.vocab * self.dim + self.layers * (attention + 3 * self.dim * self.hidden + 2 * self.dim) + self.dim

    def cache_bytes(self) -> int:
        """Both caches of every layer, fp32, the whole context."""
        return 2 * self.layers * self.kv_heads * self.head_dim * self.context * 4

    def describe(self) -> str:
        return (f"dim {self.dim}, {self.layers} layers, {self.heads} heads, {self.kv_heads} KV heads, hidden "
                f"{self.hidden}, vocab {self.vocab}, context {self.context}; {self.parameters() / 1e6:.1f} M "
                f"parameters; prompt {self.prompt} tokens, {self.steps} greedy steps")

    def dims(self) -> dict:
        return dict(dim=self.dim, layers=self.layers, heads=self.heads, kv_heads=self.kv_heads, hidden=self.hidden,
                    vocab=self.vocab, context=self.context)


# The sizes users run: the shapes of SmolLM2-135M, SmolLM2-360M, Qwen2.5-0.5B and Llama-3.2-1B (untied here), random
# weights; prompts of 128 and 1024 tokens, 128 generated. "tiny": the smoke run's, seconds to export and run.
SIZES: Dict[str, Size] = {size.name: size for size in (
    Size("smollm2-135m", 576, 30, 9, 3, 1536, 49152, 1280, group=64),  # 576 is no multiple of 128
    Size("smollm2-360m", 960, 32, 15, 5, 2560, 49152, 1280, group=64),  # 960 is no multiple of 128
    Size("smollm2-360m-p1024", 960, 32, 15, 5, 2560, 49152, 1280, prompt=1024, group=64),
    Size("qwen2.5-0.5b", 896, 24, 14, 2, 4864, 151936, 1280),
    Size("qwen2.5-0.5b-p1024", 896, 24, 14, 2, 4864, 151936, 1280, prompt=1024),
    Size("llama3.2-1b", 2048, 16, 32, 8, 8192, 128256, 1280),
    Size("llama3.2-1b-p1024", 2048, 16, 32, 8, 8192, 128256, 1280, prompt=1024),
    Size("tiny", 64, 2, 4, 2, 128, 256, 32, prompt=8, steps=8, group=32),
)}


def round_prompt(size: Size, work: Path, round_index: int) -> List[int]:
    """Round `round_index`'s prompt (the probe's is round -1): whole-word tokens, a new draw each round
    (the same for every variant), since LLMPipeline's default backend caches prompt prefixes."""
    return tokenizer.prompt(work, size.prompt, SEED + 2 + round_index)


def et_model(size: Size, state: Optional[dict] = None) -> torch.nn.Module:
    """ExecuTorch's Llama of this size: random weights from SEED, or `state`."""
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs

    torch.manual_seed(SEED)
    model = construct_transformer(ModelArgs(
        dim=size.dim, n_layers=size.layers, n_heads=size.heads, n_kv_heads=size.kv_heads, vocab_size=size.vocab,
        hidden_dim=size.hidden, max_seq_len=size.context, max_context_len=size.context, norm_eps=1e-5,
        rope_freq_base=10000.0, use_kv_cache=True, enable_dynamic_shape=True, max_batch_size=1)).eval()
    with torch.no_grad():  # non-trivial norm weights, so a mix-up of the norms would show
        for name, parameter in model.named_parameters():
            if name.endswith("norm.weight"):
                parameter.uniform_(0.8, 1.2)
    if state is not None:
        model.load_state_dict(state, strict=False)
    return model


def _et_step(model):
    def step(tokens: List[int], position: int):
        with torch.no_grad():
            out = model(torch.tensor([tokens]), {"input_pos": torch.tensor([position])})
        return (out[0, -1] if out.dim() == 3 else out[0]).float()

    return step


def _hf_step(model):
    from transformers import DynamicCache

    cache = DynamicCache()

    def step(tokens: List[int], position: int):
        with torch.no_grad():
            out = model(input_ids=torch.tensor([tokens]), past_key_values=cache, use_cache=True,
                        position_ids=torch.arange(position, position + len(tokens)).unsqueeze(0))
        return out.logits[0, -1].float()

    return step


def prepare_size(size: Size, work: Path) -> dict:
    """The eager model's weights (weights.pt), the tokenizer, its greedy ids and logits on the probe's
    prompt (reference.pt), and, with transformers, the Hugging Face model holding the same weights (hf/)."""
    work.mkdir(parents=True, exist_ok=True)
    model = et_model(size)
    torch.save(model.state_dict(), work / "weights.pt")
    tokenizer.train(work, size.vocab, SEED)
    prompt = round_prompt(size, work, -1)
    eager = decoding.greedy(_et_step(copy.deepcopy(model)), prompt, size.steps, keep_logits=True)
    reference = {"prompt": prompt, "ids": eager["ids"], "logits": eager["logits"]}
    info = {"size": asdict(size)}
    try:
        hf = genai.hf_llama(model.state_dict(), **size.dims())
    except ImportError as error:
        info["hf"] = f"n/a: {error}"
    else:
        hf.save_pretrained(work / "hf")
        theirs = decoding.greedy(_hf_step(hf), prompt, size.steps, keep_logits=True)
        info["hf_vs_et"] = {"prompt_max_abs": float((theirs["logits"][0] - eager["logits"][0]).abs().max()),
                            "ids_equal": theirs["ids"] == eager["ids"]}
    torch.save(reference, work / "reference.pt")
    (work / "size.json").write_text(json.dumps(info, indent=1))
    return info


# --- the exports ---------------------------------------------------------------------------------------------


def _dynamic_export(model, size: Size, export=None):
    from torch.export import Dim

    shapes = ({1: Dim("seq", min=1, max=size.context - 1)}, {"input_pos": None})
    with torch.no_grad():
        return (export or torch.export.export)(model, (torch.zeros(1, 4, dtype=torch.long),
                                                       {"input_pos": torch.tensor([0])}),
                                               dynamic_shapes=shapes, strict=False)


def _ours_program(model, size: Size, fmt: str, precision: Optional[str] = None):
    """Our partitioner on ExecuTorch's Llama; int8 / int4 weights compressed by the partitioner on the OpenVINO
    model (weights="int8" / "int4"), as optimum-intel compresses GenAI's: one torch.export, no second one for
    NNCF (the FX-level helpers of executorch_openvino.quantization export twice)."""
    import executorch_openvino

    weights = {} if fmt == "fp32" else {"weights": fmt, **({"group_size": size.group} if fmt == "int4" else {})}
    return _dynamic_export(model, size), [executorch_openvino.OpenvinoPartitioner(precision=precision, **weights)]


def _xnnpack_program(model, size: Size, fmt: str):
    """As ExecuTorch's export_llama does it for XNNPACK: its custom SDPA and KV cache ops, 8da8w / 8da4w
    (int8 dynamic activations), dynamically quantized linears partitioned first, then the rest."""
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (XnnpackDynamicallyQuantizedPartitioner,
                                                                           XnnpackPartitioner)
    from executorch.examples.models.llama.source_transformation.custom_kv_cache import (
        replace_kv_cache_with_custom_kv_cache)
    from executorch.examples.models.llama.source_transformation.quantize import quantize
    from executorch.examples.models.llama.source_transformation.sdpa import replace_sdpa_with_custom_op
    from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401  (llama::custom_sdpa, update_cache)

    if fmt != "fp32":
        model = quantize(model, {"int8": "8da8w", "int4": "8da4w"}[fmt], group_size=0 if fmt == "int8" else size.group)
    model = replace_kv_cache_with_custom_kv_cache(replace_sdpa_with_custom_op(model))
    return _dynamic_export(model, size), [XnnpackDynamicallyQuantizedPartitioner(), XnnpackPartitioner()]


# Programs of ours (ours-fast: precision="fast", the CPU's own default precision, as GenAI's default)
# and XNNPACK's; the paged variants load ours' programs with attention=paged (the state helper rewrites
# their grown caches at load for OpenVINO's paged attention, the form GenAI's default runs).
ET_VARIANTS = {
    "ours": _ours_program,
    "ours-fast": lambda model, size, fmt: _ours_program(model, size, fmt, precision="fast"),
    "xnnpack": _xnnpack_program,
}
PAGED_VARIANTS = {"ours-paged": "ours", "ours-fast-paged": "ours-fast"}
GENAI_VARIANTS = {"genai": genai.F32_PROPERTIES, "genai-default": None}
# Loads from a warm model cache: ours' program with cache_dir (grown: a paged model is not stored), GenAI's
# default with CACHE_DIR. Their "export" fills the cache with one load in a process of its own.
CACHED_VARIANTS = {"ours-cached": "ours", "genai-cached": "genai-default"}
OURS_VARIANTS = ("ours", "ours-fast", *PAGED_VARIANTS, "ours-cached")
LLAMACPP = "llamacpp"
LLAMACPP_TYPES = {"fp32": None, "int8": "Q8_0", "int4": "Q4_0"}  # Q4_0: llama.cpp's own int4, groups of 32
VARIANTS = (*ET_VARIANTS, *PAGED_VARIANTS, *GENAI_VARIANTS, *CACHED_VARIANTS, LLAMACPP)


def cache_folder(variant: str, fmt: str, work: Path) -> Path:
    return work / f"cache-{variant}-{fmt}"


def export(variant: str, fmt: str, size: Size, work: Path) -> Path:
    """The variant's artifact in `work` (a .pte, optimum-intel's IR folder, a GGUF)."""
    if variant in PAGED_VARIANTS:
        return work / f"{PAGED_VARIANTS[variant]}-{fmt}.pte"  # exported for its grown twin
    if variant in CACHED_VARIANTS:
        return _warm_cache(variant, fmt, work)
    if variant in GENAI_VARIANTS:
        if not (work / "hf").is_dir():
            raise RuntimeError("n/a: no Hugging Face model (transformers not installed?)")
        return genai.export(work / "hf", fmt, size.group, work / f"ov-{fmt}")
    if variant == LLAMACPP:
        f32 = work / "llamacpp-fp32.gguf"
        if not f32.exists():
            llamacpp.write_gguf(torch.load(work / "weights.pt"), **size.dims(), path=f32)
        return f32 if LLAMACPP_TYPES[fmt] is None else llamacpp.quantize(f32, LLAMACPP_TYPES[fmt])
    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower

    program, partitioners = ET_VARIANTS[variant](et_model(size, torch.load(work / "weights.pt")), size, fmt)
    edge = to_edge_transform_and_lower(program, partitioner=partitioners,
                                       compile_config=EdgeCompileConfig(_check_ir_validity=False))
    path = work / f"{variant}-{fmt}.pte"
    path.write_bytes(edge.to_executorch().buffer)
    return path


def _warm_cache(variant: str, fmt: str, work: Path) -> Path:
    """A cached variant's model cache, emptied and filled by one load here; its twin's artifact."""
    import shutil

    import llm_runners

    twin = CACHED_VARIANTS[variant]
    artifact = work / (f"ov-{fmt}" if twin in GENAI_VARIANTS else f"{twin}-{fmt}.pte")
    if not artifact.exists():
        raise RuntimeError(f"n/a: {variant} loads {twin}'s export: list {twin} before it")
    shutil.rmtree(cache_folder(variant, fmt, work), ignore_errors=True)
    llm_runners.make_runner(variant, fmt, work)
    return artifact


def artifact_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.iterdir() if p.suffix == ".bin") if path.is_dir() else path.stat().st_size
