"""OpenVINO GenAI as a peer: optimum-intel's export of a Hugging Face model holding the same weights as
ours (ExecuTorch's Llama's weights moved to Hugging Face's layout), run by LLMPipeline (fed token ids,
greedy, ignore_eos) or WhisperPipeline. Needs requirements-bench.txt (optimum-intel, GenAI)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

from peers.decoding import Conversation

# The numerics ours computes with (f32 compute and KV cache) and its latency hint; GenAI's default is
# LLMPipeline with no properties at all (bf16 where the CPU has it).
F32_PROPERTIES = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32", "PERFORMANCE_HINT": "LATENCY"}


def _halves(weight, heads: int):
    """Rows of a q/k projection from ExecuTorch's rotary layout (pairs) to Hugging Face's (halves)."""
    rows, columns = weight.shape
    return weight.view(heads, rows // heads // 2, 2, columns).transpose(1, 2).reshape(rows, columns)


def hf_llama(state: dict, *, dim: int, layers: int, heads: int, kv_heads: int, hidden: int, vocab: int,
             context: int, tied: bool = False):
    """A Hugging Face LlamaForCausalLM holding ExecuTorch's Llama's weights (`state`: its state dict)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    weights = {"model.embed_tokens.weight": state["tok_embeddings.weight"], "model.norm.weight": state["norm.weight"],
               "lm_head.weight": state["output.weight"]}
    for i in range(layers):
        et, hf = f"layers.{i}.", f"model.layers.{i}."
        weights.update({hf + "self_attn.q_proj.weight": _halves(state[et + "attention.wq.weight"], heads),
                        hf + "self_attn.k_proj.weight": _halves(state[et + "attention.wk.weight"], kv_heads),
                        hf + "self_attn.v_proj.weight": state[et + "attention.wv.weight"],
                        hf + "self_attn.o_proj.weight": state[et + "attention.wo.weight"],
                        hf + "mlp.gate_proj.weight": state[et + "feed_forward.w1.weight"],
                        hf + "mlp.down_proj.weight": state[et + "feed_forward.w2.weight"],
                        hf + "mlp.up_proj.weight": state[et + "feed_forward.w3.weight"],
                        hf + "input_layernorm.weight": state[et + "attention_norm.weight"],
                        hf + "post_attention_layernorm.weight": state[et + "ffn_norm.weight"]})
    config = LlamaConfig(hidden_size=dim, num_hidden_layers=layers, num_attention_heads=heads,
                         num_key_value_heads=kv_heads, intermediate_size=hidden, vocab_size=vocab,
                         max_position_embeddings=context, rms_norm_eps=1e-5, rope_theta=10000.0,
                         tie_word_embeddings=tied, bos_token_id=0, eos_token_id=vocab - 1, pad_token_id=0,
                         torch_dtype="float32")
    model = LlamaForCausalLM(config).eval()
    missing, unexpected = model.load_state_dict({k: v.detach().clone().contiguous() for k, v in weights.items()},
                                                strict=False)
    missing = [name for name in missing if "rotary_emb" not in name]
    if missing or unexpected:
        raise RuntimeError(f"weights do not map: missing {missing}, unexpected {unexpected}")
    return model


def optimum_args(fmt: str, group: int) -> List[str]:
    """optimum-cli's weight format, made ours: int8 asymmetric per output channel (both defaults); int4
    symmetric (ours' default; optimum-intel's asymmetric zero points cost its kernels time) in groups,
    every linear layer (ratio 1.0), the embedding and the head in asymmetric int8 (ours too)."""
    extra = ["--group-size", str(group), "--ratio", "1.0", "--sym", "--backup-precision", "int8_asym"] \
        if fmt == "int4" else []
    return ["--weight-format", fmt, *extra]


def export(checkpoint: Path, fmt: str, group: int, out: Path, task: str = "text-generation-with-past") -> Path:
    """optimum-intel's stateful IR of a saved Hugging Face checkpoint in `out` (kept when already there)."""
    if (out / "openvino_model.xml").is_file():
        return out
    cli = Path(sys.executable).with_name("optimum-cli")
    if not cli.is_file():
        raise RuntimeError("n/a: optimum-intel is not installed (pip install -r requirements-bench.txt)")
    shutil.rmtree(out, ignore_errors=True)
    done = subprocess.run([str(cli), "export", "openvino", "--model", str(checkpoint), "--task", task,
                           *optimum_args(fmt, group), str(out)], capture_output=True, text=True,
                          env=dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1"))
    if done.returncode != 0 or not (out / "openvino_model.xml").is_file():
        raise RuntimeError(f"optimum-cli export failed ({done.returncode}): {done.stderr[-1500:]}")
    return out


class GenaiRunner:
    """openvino_genai.LLMPipeline on optimum-intel's export, fed token ids (no tokenizer involved), greedy,
    ignore_eos, steps + 1 new tokens (the first comes from the prompt, as ours' does). Timed by us around
    generate() and by its perf metrics (TTFT, TPOT). With `prompt_lookup`, its own prompt-lookup
    decoding (5 drafts, n-grams up to 3)."""

    def __init__(self, folder: Path, properties: Optional[Dict[str, str]] = None, prompt_lookup: bool = False):
        import openvino_genai

        self.genai, self.prompt_lookup = openvino_genai, prompt_lookup
        extra = {"prompt_lookup": True} if prompt_lookup else {}
        self.pipe = openvino_genai.LLMPipeline(str(folder), "CPU", **(properties or {}), **extra)

    def conversation(self, prompt: List[int], steps: int, keep_logits: bool = False) -> Conversation:
        import openvino as ov

        config = self.genai.GenerationConfig()
        # Not min_new_tokens: below it GenAI's sampler never picks the end token, which changes the ids.
        config.max_new_tokens = steps + 1
        config.ignore_eos, config.do_sample = True, False
        if self.prompt_lookup:
            config.num_assistant_tokens, config.max_ngram_size = 5, 3
        inputs = self.genai.TokenizedInputs(ov.Tensor(np.array([prompt], dtype=np.int64)),
                                            ov.Tensor(np.ones((1, len(prompt)), dtype=np.int64)))
        start = time.perf_counter()
        result = self.pipe.generate(inputs, config)
        wall_ms = (time.perf_counter() - start) * 1e3
        ttft, tpot = result.perf_metrics.get_ttft().mean, result.perf_metrics.get_tpot().mean
        return Conversation(prefill_ms=ttft, decode_ms=tpot * steps, ids=list(result.tokens[0]), logits=None,
                            wall_ms=wall_ms, own_decode_ms=wall_ms - ttft)


class GenaiWhisper:
    """openvino_genai.WhisperPipeline on optimum-intel's export, fed the raw audio; greedy, ignore_eos,
    steps + 1 new tokens, no timestamps. Prefill: its TTFT less its own feature extraction (which
    ExecuTorch's variants do before the clock); decode: TPOT. The ids come from a streamer."""

    def __init__(self, folder: Path, properties: Optional[Dict[str, str]] = None):
        import openvino_genai

        self.genai = openvino_genai
        self.pipe = openvino_genai.WhisperPipeline(str(folder), "CPU", **(properties or {}))

    def conversation(self, samples, steps: int, keep_logits: bool = False) -> Conversation:
        genai = self.genai

        class Collect(genai.StreamerBase):
            def __init__(self):
                super().__init__()
                self.ids: List[int] = []

            def write(self, token):
                self.ids += list(token) if isinstance(token, list) else [token]
                return genai.StreamingStatus.RUNNING

            def end(self):
                pass

        config = self.pipe.get_generation_config()
        config.max_new_tokens = steps + 1
        config.ignore_eos, config.do_sample, config.return_timestamps = True, False, False
        streamer = Collect()
        result = self.pipe.generate(samples.tolist(), config, streamer)
        metrics = result.perf_metrics
        features = metrics.get_features_extraction_duration().mean
        return Conversation(prefill_ms=metrics.get_ttft().mean - features, decode_ms=metrics.get_tpot().mean * steps,
                            ids=streamer.ids, logits=None, features_ms=features)
