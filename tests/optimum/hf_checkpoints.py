"""Hugging Face checkpoints of every architecture the recipe is tested with, from small configs with
random weights, saved as the hub has them (config.json, weights, generation_config.json, and what
a task's loader reads beside them: a tokenizer, a feature extractor). Seeded: the same weights
every time."""

from __future__ import annotations

import functools
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


# --- Encoders (fill-mask, image-classification), Gemma 3 with optimum's custom caches, Gemma 3 with
# vision (multimodal-text-to-text): test_encoders_and_multimodal.py -----------------------------------
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


def _gemma3_hybrid():
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    # Gemma 3 as its checkpoints are, sliding-window layers around a global one (with 3 layers the
    # default pattern makes all of them sliding), exported with optimum's custom caches: ring
    # buffers for the sliding layers, a plain cache for the global one. Untied embeddings: tied,
    # greedy decoding of these random weights repeats the prompt's last token forever.
    config = Gemma3TextConfig(**{**_DECODER, "num_hidden_layers": 3}, head_dim=16, sliding_window=16,
                              query_pre_attn_scalar=16, tie_word_embeddings=False,
                              layer_types=["sliding_attention", "full_attention", "sliding_attention"])
    return Gemma3ForCausalLM(config)


# Gemma 3 with vision (multimodal-text-to-text): 32x32 images of 4x4 patches pooled to 4 image
# tokens, ids 6 to 8 for <start_of_image>, <end_of_image>, <image_soft_token>.
_IMAGE_TOKENS = dict(boi_token_index=6, eoi_token_index=7, image_token_index=8)


def _gemma3_vision():
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration, Gemma3TextConfig, SiglipVisionConfig

    text = Gemma3TextConfig(**{**_DECODER, "num_hidden_layers": 2}, head_dim=16, sliding_window=16,
                            query_pre_attn_scalar=16, tie_word_embeddings=False,
                            layer_types=["sliding_attention", "full_attention"])
    vision = SiglipVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                                image_size=32, patch_size=8)
    config = Gemma3Config(text_config=text, vision_config=vision, mm_tokens_per_image=4, initializer_range=0.2,
                          tie_word_embeddings=False, **_IMAGE_TOKENS)
    model = Gemma3ForConditionalGeneration(config)
    # transformers starts the image projection at zeros: the image would change nothing.
    torch.nn.init.normal_(model.model.multi_modal_projector.mm_input_projection_weight, std=0.2)
    return model


def save_gemma3_vision_processor(folder: Path) -> None:
    """The processor optimum's multimodal export asks AutoProcessor for, built in code and saved
    beside the weights: Gemma 3's image processor (it needs Pillow) and a word-level tokenizer
    with Gemma's special tokens, the image ones as the tokenizer attributes Gemma3Processor reads,
    and a chat template in Gemma's turn format."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import Gemma3ImageProcessor, Gemma3Processor, PreTrainedTokenizerFast

    special = ["<pad>", "<bos>", "<eos>", "<unk>", "<start_of_turn>", "<end_of_turn>", "<start_of_image>",
               "<end_of_image>", "<image_soft_token>"]
    assert [special.index(token) for token in special[6:]] == list(_IMAGE_TOKENS.values())
    words = ["user", "model", "describe", "the", "picture", "what", "is", "this", "a", "cat", "dog"]
    backend = Tokenizer(models.WordLevel({token: i for i, token in enumerate(special + words)}, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    backend.add_special_tokens(special)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<bos>", eos_token="<eos>",
                                        pad_token="<pad>", unk_token="<unk>",
                                        extra_special_tokens={"boi_token": "<start_of_image>",
                                                              "eoi_token": "<end_of_image>",
                                                              "image_token": "<image_soft_token>"})
    template = ("{{ bos_token }}{% for message in messages %}<start_of_turn>{{ message['role'] }} "
                "{% for item in message['content'] %}{% if item['type'] == 'image' %}<start_of_image>"
                "{% elif item['type'] == 'text' %}{{ item['text'] }}{% endif %} {% endfor %}<end_of_turn> {% endfor %}"
                "{% if add_generation_prompt %}<start_of_turn>model {% endif %}")
    Gemma3Processor(image_processor=Gemma3ImageProcessor(size={"height": 32, "width": 32}), tokenizer=tokenizer,
                    chat_template=template, image_seq_length=4).save_pretrained(folder)


MASKED_LM: Dict[str, Callable[[], torch.nn.Module]] = {"bert": _bert, "modernbert": _modernbert}
IMAGE_CLASSIFICATION: Dict[str, Callable[[], torch.nn.Module]] = {"vit": _vit}
CUSTOM_CACHE_LM: Dict[str, Callable[[], torch.nn.Module]] = {"gemma3_hybrid": _gemma3_hybrid}
MULTIMODAL: Dict[str, Callable[[], torch.nn.Module]] = {"gemma3_vision": _gemma3_vision}
MODELS.update({**MASKED_LM, **IMAGE_CLASSIFICATION, **CUSTOM_CACHE_LM, **MULTIMODAL})
# --- end of test_encoders_and_multimodal.py's ----------------------------------------------------


# --- Encoder-decoders (automatic-speech-recognition, text2text-generation): test_speech_and_seq2seq.py
# Whisper hears one-second chunks: its feature extractor's chunk_length=1 gives 100 mel frames, which
# the encoder's second convolution halves to max_source_positions = 50 (optimum exports the encoder
# for exactly the extractor's frame count).
WHISPER_FRAMES = 100
WHISPER_SPECIAL_TOKENS = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>",
                          "<|startofprev|>"]


def _whisper():
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    # Ids as the tokenizer below has them. No tokens suppressed and no forced prompt: transformers'
    # generate is then plain greedy decoding from <|startoftranscript|>, as optimum's runtime does.
    # init_std well above the default 0.02: with tied embeddings the small decoder otherwise
    # repeats one token forever.
    config = WhisperConfig(vocab_size=VOCAB, num_mel_bins=80, d_model=64, encoder_layers=2, decoder_layers=2,
                           encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128,
                           decoder_ffn_dim=128, max_source_positions=WHISPER_FRAMES // 2,
                           max_target_positions=CONTEXT, pad_token_id=0, bos_token_id=0, eos_token_id=0,
                           decoder_start_token_id=1, suppress_tokens=None, begin_suppress_tokens=None, init_std=0.5)
    return WhisperForConditionalGeneration(config)


def _t5():
    from transformers import T5Config, T5ForConditionalGeneration

    config = T5Config(vocab_size=VOCAB, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2, num_heads=4,
                      pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    return T5ForConditionalGeneration(config)


def _save_whisper_processor(folder: Path) -> None:
    """What optimum's Whisper export reads beside the weights (AutoProcessor): a feature extractor
    for one-second chunks and a byte-level BPE tokenizer of exactly VOCAB tokens, Whisper's special
    tokens first, trained here on ASCII words (every id decodes to text)."""
    import random

    from transformers import WhisperFeatureExtractor, WhisperProcessor, WhisperTokenizerFast

    rng = random.Random(0)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 7))) for _ in range(2000)]
    tokenizer = _llm_text().byte_level_bpe([" ".join(rng.choice(words) for _ in range(100)) for _ in range(500)],
                                           VOCAB, WHISPER_SPECIAL_TOKENS)
    if tokenizer.get_vocab_size() != VOCAB:
        raise RuntimeError(f"the tokenizer came out with {tokenizer.get_vocab_size()} tokens, not {VOCAB}")
    end = WHISPER_SPECIAL_TOKENS[0]
    text = WhisperTokenizerFast(tokenizer_object=tokenizer, unk_token=end, bos_token=end, eos_token=end, pad_token=end)
    audio = WhisperFeatureExtractor(feature_size=80, chunk_length=WHISPER_FRAMES // 100)
    WhisperProcessor(feature_extractor=audio, tokenizer=text).save_pretrained(folder)


def _example():
    """examples/hf_checkpoint.py, the checkpoints docs/hugging-face.md tells users to make."""
    return _module_at("hf_checkpoint_example", REPO / "examples" / "hf_checkpoint.py")


def _whisper_multilingual():
    """The example's multilingual Whisper: the real vocabulary's layout (languages, tasks, timestamps)
    and generation config, 30-second windows (test_speech_pipeline.py)."""
    return _example().whisper_model()


def _save_whisper_multilingual_processor(folder: Path) -> None:
    _example().save_whisper_processor(folder)


SEQ2SEQ_TASKS = {"whisper": "automatic-speech-recognition", "whisper_multilingual": "automatic-speech-recognition",
                 "t5": "text2text-generation"}
MODELS.update({"whisper": _whisper, "whisper_multilingual": _whisper_multilingual, "t5": _t5})
SAVED_BESIDE: Dict[str, Callable[[Path], None]] = {"whisper": _save_whisper_processor,
                                                   "whisper_multilingual": _save_whisper_multilingual_processor}


def load_eager_seq2seq(folder: Path):
    """The saved encoder-decoder as plain transformers loads it (the reference the tests compare with)."""
    from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoModelForSpeechSeq2Seq

    speech = AutoConfig.from_pretrained(folder).model_type == "whisper"
    return (AutoModelForSpeechSeq2Seq if speech else AutoModelForSeq2SeqLM).from_pretrained(folder).eval()
# --- end of the encoder-decoders ------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _module_at(name: str, path: Path):
    """The Python file at `path`, loaded once as module `name` (it sits outside any package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _llm_text():
    """The tokenizer trainer tests/ shares with bench/ (workloads/tokenizer.py)."""
    return _module_at("workloads_tokenizer", REPO / "workloads" / "tokenizer.py")


def _train_tokenizer(folder: Path) -> None:
    """tokenizer.json beside the weights: a byte-level BPE of exactly VOCAB tokens trained in code
    (the LLM benchmark's trainer), so every id a random model picks decodes to text."""
    _llm_text().train(folder, VOCAB, seed=0)


def save(name: str, folder: Path) -> Path:
    torch.manual_seed(sum(map(ord, name)))  # transformers initialises weights from the global generator
    model = MODELS[name]().eval()
    model.save_pretrained(folder)
    if name in CAUSAL_LM:
        _train_tokenizer(folder)
    if name in SAVED_BESIDE:
        SAVED_BESIDE[name](folder)
    return folder


def load_eager(folder: Path):
    """The saved checkpoint as plain transformers loads it (the reference the tests compare with)."""
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(folder).eval()
