"""The LLM benchmark's models and the artifacts every variant runs (bench/llm/llm_bench.py).

One architecture per size, built twice with the same random weights: ExecuTorch's own Llama
(executorch.examples.models.llama, KV cache, prompts of any length in one call), which the
ExecuTorch variants export, and a Hugging Face LlamaConfig model (saved with save_pretrained),
which optimum-intel exports to a stateful OpenVINO IR for native OpenVINO and OpenVINO GenAI.
The query and key projections are permuted between the two (ExecuTorch's rotary embedding pairs
neighbouring channels, Hugging Face's the two halves of a head), so both compute the same function;
the preparation checks that on the prompt's logits.

Each export runs in a process of its own (bench/llm/llm_bench.py worker export ...), so that a variant
that cannot be exported is reported with its error and the others go on.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional

import torch

from workloads import tokenizer as llm_text
from common.processes import child_env

FORMATS = ("fp32", "int8", "int4")


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
    prompt: int = 32
    steps: int = 64
    group: int = 128  # int4 weights: the group size of every variant that takes one

    @property
    def head_dim(self) -> int:
        return self.dim // self.heads

    def parameters(self) -> int:
        attention = self.dim * self.dim * 2 + self.dim * self.kv_heads * self.head_dim * 2
        layer = attention + 3 * self.dim * self.hidden + 2 * self.dim
        return 2 * self.vocab * self.dim + self.layers * layer + self.dim

    def cache_bytes(self) -> int:
        """Both caches of every layer, fp32, the whole context."""
        return 2 * self.layers * self.kv_heads * self.head_dim * self.context * 4

    def describe(self) -> str:
        return (f"dim {self.dim}, {self.layers} layers, {self.heads} heads, {self.kv_heads} KV heads, hidden "
                f"{self.hidden}, vocab {self.vocab}, context {self.context}; {self.parameters() / 1e6:.1f} M "
                f"parameters; prompt {self.prompt} tokens, {self.steps} greedy steps")


SIZES: Dict[str, Size] = {size.name: size for size in (
    Size("llama-512x6", dim=512, layers=6, heads=8, kv_heads=4, hidden=1536, vocab=4096, context=128),
    Size("llama-768x12", dim=768, layers=12, heads=12, kv_heads=4, hidden=2048, vocab=32000, context=256),
    # The sizes users run (issue 30): the shapes of SmolLM2-360M, Qwen2.5-0.5B (untied here) and
    # Llama-3.2-1B (untied here), random weights; prompts of 128 and 1024 tokens, 128 generated.
    Size("smollm2-360m", dim=960, layers=32, heads=15, kv_heads=5, hidden=2560, vocab=49152, context=1280,
         prompt=128, steps=128, group=64),  # 960 is no multiple of 128
    Size("smollm2-360m-p1024", dim=960, layers=32, heads=15, kv_heads=5, hidden=2560, vocab=49152, context=1280,
         prompt=1024, steps=128, group=64),
    Size("qwen2.5-0.5b", dim=896, layers=24, heads=14, kv_heads=2, hidden=4864, vocab=151936, context=1280,
         prompt=128, steps=128),
    Size("qwen2.5-0.5b-p1024", dim=896, layers=24, heads=14, kv_heads=2, hidden=4864, vocab=151936, context=1280,
         prompt=1024, steps=128),
    Size("llama3.2-1b", dim=2048, layers=16, heads=32, kv_heads=8, hidden=8192, vocab=128256, context=1280,
         prompt=128, steps=128),
    Size("llama3.2-1b-p1024", dim=2048, layers=16, heads=32, kv_heads=8, hidden=8192, vocab=128256,
         context=1280, prompt=1024, steps=128),
    # The smoke test's: seconds to export and run.
    Size("tiny", dim=64, layers=2, heads=4, kv_heads=2, hidden=128, vocab=256, context=32, prompt=8, steps=8,
         group=32),
)}
DEFAULT_SIZES = ["llama-512x6", "llama-768x12"]
SEED = 1234


def round_prompt(size: Size, work: Path, round_index: int) -> List[int]:
    """The prompt of timed round `round_index` (the reference conversation's is round -1)."""
    return llm_text.prompt(work, size.prompt, SEED + 2 + round_index)


def runner_eos(reference: dict) -> int:
    """The end-of-sequence id written for ExecuTorch's runner: a special token the reference conversation
    never generates, so that the runner, which stops there, goes the whole way as the other variants do."""
    seen = set(reference["ids"])
    end = llm_text.SPECIAL_TOKENS.index("</s>")
    return next(i for i in [end] + list(range(max(seen) + 2)) if i not in seen)


# --- the two eager models ------------------------------------------------------------------------------


def et_args(size: Size):
    from executorch.examples.models.llama.model_args import ModelArgs

    return ModelArgs(dim=size.dim, n_layers=size.layers, n_heads=size.heads, n_kv_heads=size.kv_heads,
                     vocab_size=size.vocab, hidden_dim=size.hidden, max_seq_len=size.context,
                     max_context_len=size.context, norm_eps=1e-5, rope_freq_base=10000.0, use_kv_cache=True,
                     enable_dynamic_shape=True, max_batch_size=1)


def et_model(size: Size, state: Optional[dict] = None) -> torch.nn.Module:
    """ExecuTorch's Llama of this size: random weights from SEED, or `state`."""
    from executorch.examples.models.llama.llama_transformer import construct_transformer

    torch.manual_seed(SEED)
    model = construct_transformer(et_args(size)).eval()
    with torch.no_grad():  # non-trivial norm weights, so a mix-up of the norms would show
        for name, parameter in model.named_parameters():
            if name.endswith("norm.weight"):
                parameter.uniform_(0.8, 1.2)
    if state is not None:
        model.load_state_dict(state, strict=False)
    return model


def _halves(weight: torch.Tensor, heads: int) -> torch.Tensor:
    """Rows of a q/k projection from ExecuTorch's rotary layout (pairs) to Hugging Face's (halves)."""
    rows, columns = weight.shape
    return weight.view(heads, rows // heads // 2, 2, columns).transpose(1, 2).reshape(rows, columns)


def hf_state_from_et(model: torch.nn.Module, size: Size) -> Dict[str, torch.Tensor]:
    state = model.state_dict()
    out = {"model.embed_tokens.weight": state["tok_embeddings.weight"], "model.norm.weight": state["norm.weight"],
           "lm_head.weight": state["output.weight"]}
    for i in range(size.layers):
        et, hf = f"layers.{i}.", f"model.layers.{i}."
        out[hf + "self_attn.q_proj.weight"] = _halves(state[et + "attention.wq.weight"], size.heads)
        out[hf + "self_attn.k_proj.weight"] = _halves(state[et + "attention.wk.weight"], size.kv_heads)
        out[hf + "self_attn.v_proj.weight"] = state[et + "attention.wv.weight"]
        out[hf + "self_attn.o_proj.weight"] = state[et + "attention.wo.weight"]
        out[hf + "mlp.gate_proj.weight"] = state[et + "feed_forward.w1.weight"]
        out[hf + "mlp.down_proj.weight"] = state[et + "feed_forward.w2.weight"]
        out[hf + "mlp.up_proj.weight"] = state[et + "feed_forward.w3.weight"]
        out[hf + "input_layernorm.weight"] = state[et + "attention_norm.weight"]
        out[hf + "post_attention_layernorm.weight"] = state[et + "ffn_norm.weight"]
    return {name: tensor.detach().clone().contiguous() for name, tensor in out.items()}


def hf_model(size: Size, et: torch.nn.Module):
    """The equivalent Hugging Face LlamaForCausalLM holding `et`'s weights."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(hidden_size=size.dim, num_hidden_layers=size.layers, num_attention_heads=size.heads,
                         num_key_value_heads=size.kv_heads, intermediate_size=size.hidden, vocab_size=size.vocab,
                         max_position_embeddings=size.context, rms_norm_eps=1e-5, rope_theta=10000.0,
                         tie_word_embeddings=False, bos_token_id=0, eos_token_id=size.vocab - 1, pad_token_id=0,
                         torch_dtype="float32")
    model = LlamaForCausalLM(config).eval()
    missing, unexpected = model.load_state_dict(hf_state_from_et(et, size), strict=False)
    missing = [name for name in missing if "rotary_emb" not in name]
    if missing or unexpected:
        raise RuntimeError(f"weights do not map: missing {missing}, unexpected {unexpected}")
    return model


# --- eager references ------------------------------------------------------------------------------------


def greedy(step: Callable, prompt: List[int], steps: int):
    """(ids, logits of each call: the prompt's last row, then one row a step) of greedy decoding."""
    rows = [step(torch.tensor([prompt]), 0)]
    ids, position = [], len(prompt)
    for _ in range(steps):
        ids.append(int(rows[-1].argmax()))
        rows.append(step(torch.tensor([[ids[-1]]]), position))
        position += 1
    return ids, torch.stack(rows)


def et_eager_step(model):
    def step(tokens, position):
        with torch.no_grad():
            out = model(tokens, {"input_pos": torch.tensor([position])})
        return (out[0, -1] if out.dim() == 3 else out[0]).float()

    return step


def hf_eager_step(model):
    from transformers import DynamicCache

    cache = DynamicCache()

    def step(tokens, position):
        with torch.no_grad():
            positions = torch.arange(position, position + tokens.shape[1]).unsqueeze(0)
            out = model(input_ids=tokens, position_ids=positions, past_key_values=cache, use_cache=True)
        return out.logits[0, -1].float()

    return step


def prepare_size(size: Size, work: Path) -> dict:
    """The eager ExecuTorch model's weights (weights.pt), its greedy ids and logits (reference.pt), and
    when transformers is installed the equivalent Hugging Face model (hf/) with its own reference."""
    work.mkdir(parents=True, exist_ok=True)
    model = et_model(size)
    torch.save(model.state_dict(), work / "weights.pt")
    llm_text.train(work, size.vocab, SEED)
    prompt = round_prompt(size, work, -1)
    ids, logits = greedy(et_eager_step(copy.deepcopy(model)), prompt, size.steps)
    reference = {"prompt": prompt, "ids": ids, "logits": logits}
    info = {"size": asdict(size)}
    try:
        hf = hf_model(size, model)
    except ImportError as error:
        info["hf"] = f"n/a: {error}"
    else:
        hf.save_pretrained(work / "hf")
        hf_ids, hf_logits = greedy(hf_eager_step(hf), prompt, size.steps)
        reference.update(hf_ids=hf_ids, hf_logits=hf_logits)
        info["hf"] = "ok"
        info["hf_vs_et"] = {"prompt_max_abs": float((hf_logits[0] - logits[0]).abs().max()),
                            "ids_equal": hf_ids == ids}
    torch.save(reference, work / "reference.pt")
    (work / "size.json").write_text(json.dumps(info, indent=1))
    return info


# --- the exports ---------------------------------------------------------------------------------------------


def _prompt_dimension(size: Size):
    from torch.export import Dim

    return {1: Dim("seq", min=1, max=size.context - 1)}, {"input_pos": None}


def _dynamic_export(model, size: Size, export=None):
    tokens = torch.zeros(1, 4, dtype=torch.long)
    with torch.no_grad():
        return (export or torch.export.export)(model, (tokens, {"input_pos": torch.tensor([0])}),
                                               dynamic_shapes=_prompt_dimension(size), strict=False)


def _keeping_prompt_dimension(helper, program, size: Size, **options):
    """helper(program) for one of our quantization helpers, its result still taking prompts of any
    length. The helpers re-export with the example's shapes (no dynamic_shapes argument yet): until they
    take one, their final torch.export.export is given the prompt dimension."""
    import inspect
    from unittest import mock

    example = program.example_inputs[0]
    if "dynamic_shapes" in inspect.signature(helper).parameters:
        return helper(program, example, dynamic_shapes=_prompt_dimension(size), **options)
    real = torch.export.export
    with mock.patch.object(torch.export, "export", lambda module, *_, **__: _dynamic_export(module, size, real)):
        return helper(program, example, **options)


def _ours_program(model, size: Size, fmt: str, precision: Optional[str] = None):
    """Our partitioner on ExecuTorch's Llama; int8 / int4 weights from our NNCF helpers; `precision` the
    partitioner's (None: its default, f32)."""
    import inspect

    import executorch_openvino
    from executorch_openvino import quantization

    program = _dynamic_export(model, size)
    if fmt != "fp32":
        helper = getattr(quantization, f"compress_weights_{fmt}", None)
        if helper is None:
            raise NotImplementedError(f"n/a: executorch_openvino.quantization has no compress_weights_{fmt} yet")
        options = {"group_size": size.group} if "group_size" in inspect.signature(helper).parameters else {}
        program = _keeping_prompt_dimension(helper, program, size, **options)
    return program, [executorch_openvino.OpenvinoPartitioner(precision=precision)]


# ExecuTorch's own LLM export recipes (export_llama_lib): per-channel int8 weights with int8 dynamic
# activations (8da8w, XNNPACK's int8 path), int4 weights in groups (the size's, 128) with int8 dynamic activations
# (8da4w); for the kernels without a delegate, weight-only int8 ("int8") and weight-only int4 ("4w").
# (group size 0: per channel; None: the size's group.)
XNNPACK_QMODES = {"int8": ("8da8w", 0), "int4": ("8da4w", None)}
KERNEL_QMODES = {"int8": ("int8", None), "int4": ("4w", None)}


def _et_quantize(model, size: Size, fmt: str, modes) -> torch.nn.Module:
    if fmt == "fp32":
        return model
    from executorch.examples.models.llama.source_transformation.quantize import quantize

    qmode, group = modes[fmt]
    return quantize(model, qmode, group_size=size.group if group is None else group)


def _xnnpack_program(model, size: Size, fmt: str, custom: bool):
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (XnnpackDynamicallyQuantizedPartitioner,
                                                                           XnnpackPartitioner)

    model = _et_quantize(model, size, fmt, XNNPACK_QMODES)
    if not custom:
        return _dynamic_export(model, size), [XnnpackPartitioner()]
    # As export_llama_lib does for --use_sdpa_with_kv_cache -X --xnnpack-extended-ops: the custom SDPA
    # first, then the custom KV cache; dynamically quantized linears partitioned first, then the rest.
    from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401  (loads llama::custom_sdpa, update_cache)
    from executorch.examples.models.llama.source_transformation.custom_kv_cache import (
        replace_kv_cache_with_custom_kv_cache)
    from executorch.examples.models.llama.source_transformation.sdpa import replace_sdpa_with_custom_op

    model = replace_kv_cache_with_custom_kv_cache(replace_sdpa_with_custom_op(model))
    return _dynamic_export(model, size), [XnnpackDynamicallyQuantizedPartitioner(), XnnpackPartitioner()]


def _kernels_program(model, size: Size, fmt: str):
    return _dynamic_export(_et_quantize(model, size, fmt, KERNEL_QMODES), size), []


ET_VARIANTS = {
    "ours": _ours_program,
    # The same with precision="fast": the CPU's own default precision (bf16 where it has bf16), as GenAI's default.
    "ours-fast": lambda model, size, fmt: _ours_program(model, size, fmt, precision="fast"),
    "xnnpack": lambda model, size, fmt: _xnnpack_program(model, size, fmt, custom=False),
    "xnnpack-custom": lambda model, size, fmt: _xnnpack_program(model, size, fmt, custom=True),
    "et-kernels": _kernels_program,
}
# Variants that load another of ours' programs with the attention=paged option: the state helper rewrites
# its grown caches for OpenVINO's paged attention at load (the form GenAI's default runs).
PAGED_VARIANTS = {"ours-paged": "ours", "ours-fast-paged": "ours-fast"}
# The variants our delegate runs (their processes load executorch_openvino).
OURS_VARIANTS = ("ours", "ours-fast", *PAGED_VARIANTS)
# Variants that do not exist in a weight format, and why (reported as n/a, not tried).
UNAVAILABLE = {
    ("et-kernels", "int4"): "ExecuTorch's kernels have no group-wise int4 linear layer (export_llama's 4w leaves "
                            "torchao::dequantize_affine, which has no out variant)",
}
OV_VARIANTS = ("native", "genai", "genai-sdpa", "genai-default")
# Variants that run another variant's artifact a different way: ExecuTorch's LLM runner (TextLLMRunner,
# its C++ generation loop behind Python bindings) on ours' program.
RUNNER_VARIANTS = {"ours-runner": "ours"}
# llama.cpp's CPU backend (bench/llamacpp): the same weights as GGUF, F32 / Q8_0 / Q4_0, timed by its
# own llama-bench in the same rounds; and llama.cpp's OpenVINO backend on the same GGUF.
LLAMACPP = "llamacpp"
LLAMACPP_OPENVINO = "llamacpp-openvino"
LLAMACPP_BACKENDS = {LLAMACPP: "cpu", LLAMACPP_OPENVINO: "openvino"}
# Variants that run another variant's artifact: the runner variants, and llama.cpp's OpenVINO backend.
SHARED_ARTIFACTS = {**RUNNER_VARIANTS, **PAGED_VARIANTS, LLAMACPP_OPENVINO: LLAMACPP}
LLAMACPP_TYPES = {"fp32": None, "int8": "Q8_0", "int4": "Q4_0"}


def export_llamacpp(fmt: str, size: Size, work: Path) -> Path:
    """work/llamacpp-<fmt>.gguf from the size's weights (Q4_0 groups of 32: llama.cpp's own int4)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llamacpp"))
    import llamacpp

    f32 = work / "llamacpp-fp32.gguf"
    if not f32.exists():
        llamacpp.write_gguf(torch.load(work / "weights.pt"), dim=size.dim, layers=size.layers, heads=size.heads,
                            kv_heads=size.kv_heads, hidden=size.hidden, vocab=size.vocab, context=size.context,
                            path=f32)
    kind = LLAMACPP_TYPES[fmt]
    if kind is None:
        return f32
    made = llamacpp.quantize(f32, kind)
    final = work / f"llamacpp-{fmt}.gguf"
    made.replace(final)
    return final


def _runner_metadata(variant: str, size: Size, work: Path) -> Optional[dict]:
    """The constant methods ExecuTorch's runner reads, in the programs a runner variant runs."""
    if variant not in RUNNER_VARIANTS.values():
        return None
    from executorch_openvino.llm.runner_metadata import text_runner_metadata

    reference = torch.load(work / "reference.pt")
    return text_runner_metadata(max_seq_len=size.context - 1, max_context_len=size.context, n_layers=size.layers,
                                vocab_size=size.vocab, bos_id=1, eos_ids=[runner_eos(reference)])


def export_et(variant: str, fmt: str, size: Size, work: Path) -> Path:
    """The variant's .pte in work/<variant>-<fmt>.pte."""
    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower

    model = et_model(size, torch.load(work / "weights.pt"))
    program, partitioners = ET_VARIANTS[variant](model, size, fmt)
    edge = to_edge_transform_and_lower(program, partitioner=partitioners,
                                       constant_methods=_runner_metadata(variant, size, work),
                                       compile_config=EdgeCompileConfig(_check_ir_validity=False))
    path = work / f"{variant}-{fmt}.pte"
    path.write_bytes(edge.to_executorch().buffer)
    return path


# optimum-intel's weight formats, made ours: int8 asymmetric per output channel (both defaults); int4 symmetric
# (ours' default; optimum-intel's is asymmetric, whose zero points cost its kernels time) in groups (the size's),
# every linear layer (ratio 1.0), the embedding and the head in asymmetric int8 (NNCF's backup precision, ours too).
def optimum_args(fmt: str, size: Size) -> List[str]:
    extra = ["--group-size", str(size.group), "--ratio", "1.0", "--sym", "--backup-precision", "int8_asym"] \
        if fmt == "int4" else []
    return ["--weight-format", fmt, *extra]


def export_ov(fmt: str, size: Size, work: Path) -> Path:
    """optimum-intel's stateful IR of the Hugging Face model in work/ov-<fmt>/ (one for all OV variants)."""
    if not (work / "hf").is_dir():
        raise RuntimeError("n/a: no Hugging Face model (transformers not installed?)")
    out = work / f"ov-{fmt}"
    if (out / "openvino_model.xml").is_file():
        return out
    cli = Path(sys.executable).with_name("optimum-cli")
    if not cli.is_file():
        raise RuntimeError("n/a: optimum-intel is not installed (pip install -r requirements-bench.txt)")
    shutil.rmtree(out, ignore_errors=True)
    env = child_env(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    done = subprocess.run([str(cli), "export", "openvino", "--model", str(work / "hf"), "--task",
                           "text-generation-with-past", *optimum_args(fmt, size), str(out)],
                          capture_output=True, text=True, env=env)
    if done.returncode != 0 or not (out / "openvino_model.xml").is_file():
        raise RuntimeError(f"optimum-cli export failed ({done.returncode}): {done.stderr[-1500:]}")
    return out
