"""Hugging Face checkpoints of every architecture the recipe is tested with, from small configs with
random weights, saved as the hub has them (config.json, weights, generation_config.json, and what
a task's loader reads beside them: a tokenizer, a feature extractor). Seeded: the same weights
every time."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Callable, Dict

import torch

REPO = Path(__file__).resolve().parents[2]
VOCAB = 300  # the decoders' vocabulary, and their tokenizer's: exactly as many tokens
CONTEXT = 64
# Small widths shared by the decoder-only architectures.
_DECODER = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, max_position_embeddings=CONTEXT, bos_token_id=1, eos_token_id=2,
                pad_token_id=0,
                # Wider than the default 0.02: with tied embeddings, small layers leave the last token's
                # own embedding the largest logit, and greedy decoding repeats it forever.
                initializer_range=0.2)


def _llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    return LlamaForCausalLM(LlamaConfig(**_DECODER))


def _qwen2():
    from transformers import Qwen2Config, Qwen2ForCausalLM

    return Qwen2ForCausalLM(Qwen2Config(**_DECODER, tie_word_embeddings=True))


def _qwen3():
    from transformers import Qwen3Config, Qwen3ForCausalLM

    return Qwen3ForCausalLM(Qwen3Config(**_DECODER, head_dim=16))


def _phi3():
    from transformers import Phi3Config, Phi3ForCausalLM

    return Phi3ForCausalLM(Phi3Config(**_DECODER))


def _smollm3():
    from transformers import SmolLM3Config, SmolLM3ForCausalLM

    return SmolLM3ForCausalLM(SmolLM3Config(**_DECODER))


def _gemma3():
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    config = Gemma3TextConfig(**{**_DECODER, "num_hidden_layers": 3}, head_dim=16, sliding_window=16,
                              query_pre_attn_scalar=16)
    return Gemma3ForCausalLM(config)


CAUSAL_LM: Dict[str, Callable[[], torch.nn.Module]] = {
    "llama": _llama, "qwen2": _qwen2, "qwen3": _qwen3, "phi3": _phi3, "smollm3": _smollm3, "gemma3": _gemma3,
}
MODELS: Dict[str, Callable[[], torch.nn.Module]] = {**CAUSAL_LM}


# --- Encoders (fill-mask, image-classification): test_encoders_and_multimodal.py ------------------
# Sequence models take up to CONTEXT - 1 tokens: optimum exports them with an example that long,
# and ExecuTorch plans their memory for it.
_ENCODER = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                max_position_embeddings=CONTEXT, pad_token_id=0, initializer_range=0.2)


def _bert():
    from transformers import BertConfig, BertForMaskedLM

    return BertForMaskedLM(BertConfig(**_ENCODER))


def _modernbert():
    from transformers import ModernBertConfig, ModernBertForMaskedLM

    # Three layers, every second global: layers 1 and 3 attend over the whole sequence, layer 2
    # over a window of 16 (8 either side), so lengths past it exercise the local mask.
    config = ModernBertConfig(**{**_ENCODER, "num_hidden_layers": 3}, global_attn_every_n_layers=2, local_attention=16,
                              bos_token_id=1, eos_token_id=2, cls_token_id=1, sep_token_id=2, mask_token_id=3)
    return ModernBertForMaskedLM(config)


def _vit():
    from transformers import ViTConfig, ViTForImageClassification

    config = ViTConfig(image_size=32, patch_size=8, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                       num_attention_heads=4, num_labels=5, initializer_range=0.2)
    return ViTForImageClassification(config)


MASKED_LM: Dict[str, Callable[[], torch.nn.Module]] = {"bert": _bert, "modernbert": _modernbert}
IMAGE_CLASSIFICATION: Dict[str, Callable[[], torch.nn.Module]] = {"vit": _vit}
MODELS.update({**MASKED_LM, **IMAGE_CLASSIFICATION})
# --- end of the encoders ------------------------------------------------------------------------


def _train_tokenizer(folder: Path) -> None:
    """tokenizer.json beside the weights: a byte-level BPE of exactly VOCAB tokens trained in code
    (the LLM benchmark's trainer), so every id a random model picks decodes to text."""
    spec = importlib.util.spec_from_file_location("bench_llm_text", REPO / "bench" / "llm" / "llm_text.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.train(folder, VOCAB, seed=0)


def save(name: str, folder: Path) -> Path:
    torch.manual_seed(sum(map(ord, name)))  # transformers initialises weights from the global generator
    model = MODELS[name]().eval()
    model.save_pretrained(folder)
    if name in CAUSAL_LM:
        _train_tokenizer(folder)
    return folder


def load_eager(folder: Path):
    """The saved checkpoint as plain transformers loads it (the reference the tests compare with)."""
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(folder).eval()
