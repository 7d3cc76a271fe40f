"""Hugging Face transformers architectures built from configs with random weights (nothing is
downloaded), at two sizes: "small" for the tests (tests/python/models/test_hf_zoo.py, seconds each) and
"realistic" for the benchmark (bench/hf_zoo/hf_zoo.py: the architectures' base sizes, shorter inputs).

make(name, size, layers=None) -> (eval-mode nn.Module returning the last hidden state, tuple of
example inputs). `layers` cuts a stack to that many blocks at the size's widths and input lengths
(tests/python/models/test_hf_zoo_widths.py: realistic kernels at a test's cost).
Weights and inputs are seeded. The KV cache is off (use_cache=False): these are encoders, and
GPT-2 runs one full-sequence pass.
"""

from __future__ import annotations

import os
from typing import Callable, Dict, Optional, Tuple

import torch
from torch import nn

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SIZES = ("small", "realistic")


class LastHiddenState(nn.Module):
    """A transformers model called with return_dict=False: its first output."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, *inputs):
        return self.model(*inputs, return_dict=False)[0]


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _tokens(vocab: int, length: int, seed: int) -> torch.Tensor:
    return torch.randint(0, vocab, (1, length), generator=_generator(seed))


# The layer-count attributes of the configs here (Swin's and ConvNeXt's `depths` are per stage: kept).
_LAYER_COUNTS = ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers", "decoder_layers")
_layers = {"override": None}  # set by make() for one call


def _cut(config):
    if _layers["override"] is not None:
        for attribute in _LAYER_COUNTS:
            if hasattr(config, attribute):
                setattr(config, attribute, _layers["override"])
    return config


def _build(model_class, config, seed: int) -> nn.Module:
    torch.manual_seed(seed)  # transformers initialises weights from the global generator
    config.use_cache = False
    return LastHiddenState(model_class(_cut(config))).eval()


def _bert(size):
    from transformers import BertConfig, BertModel

    small = size == "small"
    config = BertConfig(vocab_size=100 if small else 30522, hidden_size=32 if small else 768,
                        num_hidden_layers=2 if small else 12, num_attention_heads=2 if small else 12,
                        intermediate_size=64 if small else 3072, max_position_embeddings=64 if small else 512)
    return _build(BertModel, config, 1), (_tokens(config.vocab_size, 16 if small else 128, 101),)


def _distilbert(size):
    from transformers import DistilBertConfig, DistilBertModel

    small = size == "small"
    config = DistilBertConfig(vocab_size=100 if small else 30522, dim=32 if small else 768, n_layers=2 if small else 6,
                              n_heads=2 if small else 12, hidden_dim=64 if small else 3072,
                              max_position_embeddings=64 if small else 512)
    return _build(DistilBertModel, config, 2), (_tokens(config.vocab_size, 16 if small else 128, 102),)


def _gpt2(size):
    from transformers import GPT2Config, GPT2Model

    small = size == "small"
    config = GPT2Config(vocab_size=100 if small else 50257, n_embd=32 if small else 768, n_layer=2 if small else 12,
                        n_head=2 if small else 12, n_positions=64 if small else 1024)
    return _build(GPT2Model, config, 3), (_tokens(config.vocab_size, 16 if small else 128, 103),)


def _t5_encoder(size):
    from transformers import T5Config, T5EncoderModel

    small = size == "small"
    config = T5Config(vocab_size=100 if small else 32128, d_model=32 if small else 512, d_kv=16 if small else 64,
                      d_ff=64 if small else 2048, num_layers=2 if small else 6, num_heads=2 if small else 8,
                      relative_attention_num_buckets=8 if small else 32)
    return _build(T5EncoderModel, config, 4), (_tokens(config.vocab_size, 16 if small else 128, 104),)


def _vit(size):
    from transformers import ViTConfig, ViTModel

    small = size == "small"
    config = ViTConfig(image_size=32 if small else 224, patch_size=8 if small else 16, hidden_size=32 if small else 768,
                       num_hidden_layers=2 if small else 12, num_attention_heads=2 if small else 12,
                       intermediate_size=64 if small else 3072)
    pixels = torch.randn(1, 3, config.image_size, config.image_size, generator=_generator(105))
    return _build(ViTModel, config, 5), (pixels,)


def _convnext(size):
    from transformers import ConvNextConfig, ConvNextModel

    small = size == "small"
    config = ConvNextConfig(hidden_sizes=[8, 16, 32, 64] if small else [96, 192, 384, 768],
                            depths=[1, 1, 1, 1] if small else [3, 3, 9, 3], image_size=32 if small else 224)
    pixels = torch.randn(1, 3, config.image_size, config.image_size, generator=_generator(106))
    return _build(ConvNextModel, config, 6), (pixels,)


def _whisper_encoder(size):
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    small = size == "small"
    config = WhisperConfig(d_model=32 if small else 384, encoder_layers=2 if small else 4,
                           encoder_attention_heads=2 if small else 6, encoder_ffn_dim=64 if small else 1536,
                           num_mel_bins=16 if small else 80, max_source_positions=32 if small else 1500)
    features = torch.randn(1, config.num_mel_bins, 2 * config.max_source_positions, generator=_generator(107))
    return _build(WhisperEncoder, config, 7), (features,)


def _wav2vec2(size):
    from transformers import Wav2Vec2Config, Wav2Vec2Model

    small = size == "small"
    options = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                   conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                   num_conv_pos_embedding_groups=2) if small else {}
    config = Wav2Vec2Config(**options)
    audio = torch.randn(1, 1600 if small else 16000, generator=_generator(108))
    return _build(Wav2Vec2Model, config, 8), (audio,)


def _mobilevit(size):
    from transformers import MobileViTConfig, MobileViTModel

    small = size == "small"
    options = dict(image_size=64, hidden_sizes=[16, 24, 32], neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64],
                   num_attention_heads=2) if small else dict(image_size=256)
    config = MobileViTConfig(**options)
    pixels = torch.randn(1, 3, config.image_size, config.image_size, generator=_generator(109))
    return _build(MobileViTModel, config, 9), (pixels,)


def _clip_text(size):
    from transformers import CLIPTextConfig, CLIPTextModel

    small = size == "small"
    config = CLIPTextConfig(vocab_size=100 if small else 49408, hidden_size=32 if small else 512,
                            intermediate_size=64 if small else 2048, num_hidden_layers=2 if small else 12,
                            num_attention_heads=2 if small else 8, max_position_embeddings=16 if small else 77)
    return _build(CLIPTextModel, config, 10), (_tokens(config.vocab_size, 16 if small else 77, 110),)


def _clip_vision(size):
    from transformers import CLIPVisionConfig, CLIPVisionModel

    small = size == "small"
    config = CLIPVisionConfig(hidden_size=32 if small else 768, intermediate_size=64 if small else 3072,
                              num_hidden_layers=2 if small else 12, num_attention_heads=2 if small else 12,
                              image_size=32 if small else 224, patch_size=8 if small else 32)
    pixels = torch.randn(1, 3, config.image_size, config.image_size, generator=_generator(111))
    return _build(CLIPVisionModel, config, 11), (pixels,)


def _swin(size):
    from transformers import SwinConfig, SwinModel

    small = size == "small"
    # Shifted windows: the feature map is rolled and masked between layers, windows are partitioned by view.
    config = SwinConfig(image_size=32 if small else 224, patch_size=4, embed_dim=16 if small else 96,
                        depths=[2, 2] if small else [2, 2, 6, 2], num_heads=[1, 2] if small else [3, 6, 12, 24],
                        window_size=4 if small else 7)
    pixels = torch.randn(1, 3, config.image_size, config.image_size, generator=_generator(112))
    return _build(SwinModel, config, 12), (pixels,)


class _WhisperDecoderPass(nn.Module):
    """Whisper's decoder over the tokens so far, cross-attending to the encoder's states (no cache:
    each step recomputes the prefix)."""

    def __init__(self, decoder: nn.Module) -> None:
        super().__init__()
        self.decoder = decoder

    def forward(self, input_ids, encoder_hidden_states):
        return self.decoder(input_ids=input_ids, encoder_hidden_states=encoder_hidden_states, use_cache=False,
                            return_dict=False)[0]


def _whisper_decoder(size):
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperDecoder

    small = size == "small"
    config = WhisperConfig(vocab_size=100 if small else 51865, d_model=32 if small else 384,
                           decoder_layers=2 if small else 4, decoder_attention_heads=2 if small else 6,
                           decoder_ffn_dim=64 if small else 1536, max_target_positions=32 if small else 448,
                           max_source_positions=32 if small else 1500,
                           pad_token_id=1 if small else 50257)  # the default, 50257, is past a small vocabulary
    torch.manual_seed(13)
    config.use_cache = False
    model = _WhisperDecoderPass(WhisperDecoder(_cut(config))).eval()
    tokens = _tokens(config.vocab_size, 4 if small else 16, 113)
    states = torch.randn(1, config.max_source_positions, config.d_model, generator=_generator(114))
    return model, (tokens, states)


MODELS: Dict[str, Callable[[str], Tuple[nn.Module, tuple]]] = {
    "bert": _bert,
    "distilbert": _distilbert,
    "gpt2": _gpt2,
    "t5_encoder": _t5_encoder,
    "vit": _vit,
    "convnext": _convnext,
    "whisper_encoder": _whisper_encoder,
    "wav2vec2": _wav2vec2,
    "mobilevit": _mobilevit,
    "clip_text": _clip_text,
    "clip_vision": _clip_vision,
    "swin": _swin,
    "whisper_decoder": _whisper_decoder,
}


def make(name: str, size: str = "small", layers: Optional[int] = None) -> Tuple[nn.Module, tuple]:
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}, got {size!r}")
    _layers["override"] = layers
    try:
        return MODELS[name](size)
    finally:
        _layers["override"] = None
