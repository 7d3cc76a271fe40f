"""The two models of the optimum recipe benchmark, as Hugging Face checkpoints made from configs with
random weights (nothing is downloaded), their inputs, and their eager references.

  llama:   a LlamaForCausalLM of SmolLM2-135M's shape (tied embeddings), with a byte-level BPE
           tokenizer of the same vocabulary trained in code (workloads/tokenizer.py);
  whisper: a WhisperForConditionalGeneration of whisper-base's shape with what its pipelines read
           beside the weights: a Whisper tokenizer (a BPE trained in code, then Whisper's special and
           timestamp tokens, as the real vocabulary has them), a WhisperFeatureExtractor, and a
           generation_config.json with the token ids OpenVINO GenAI's WhisperPipeline reads.

This module runs in both environments (main .venv: transformers 4.57.6; optimum-executorch's:
transformers 5.0.0rc1); the checkpoint is saved once, by the main one, and loaded by both.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np
import torch

from peers import decoding
from workloads import tokenizer as llm_text

SEED = 20261204
LLAMA, WHISPER = "llama", "whisper"
KINDS = (LLAMA, WHISPER)
FORMATS = ("fp32", "int8", "int4")
SAMPLE_RATE = 16000
AUDIO_SECONDS = 30  # Whisper's encoder takes exactly one 30-second window (3000 mel frames)


@dataclass(frozen=True)
class Size:
    name: str
    kind: str
    dim: int
    layers: int
    heads: int
    hidden: int  # the MLP's width (Whisper: encoder and decoder FFN)
    vocab: int
    context: int  # optimum-executorch's max_seq_len: the static cache of its programs
    kv_heads: int = 0  # Llama only
    prompt: int = 128  # Llama: prompt tokens (Whisper: its decoder prompt is <|startoftranscript|><|notimestamps|>)
    steps: int = 64  # greedy decode steps after the first token
    group: int = 32  # int4 group size, the same for every variant
    init: float = 0.02  # the checkpoint's initializer_range / init_std

    @property
    def head_dim(self) -> int:
        return self.dim // self.heads

    def parameters(self) -> int:
        if self.kind == LLAMA:  # tied embeddings: the head is the embedding
            attention = 2 * self.dim * self.dim + 2 * self.dim * self.kv_heads * self.head_dim
            layer = attention + 3 * self.dim * self.hidden + 2 * self.dim
            return self.vocab * self.dim + self.layers * layer + self.dim
        encoder = self.layers * (4 * self.dim * self.dim + 2 * self.dim * self.hidden) + 1500 * self.dim \
            + 80 * self.dim * 3 + self.dim * self.dim * 3
        decoder = self.layers * (8 * self.dim * self.dim + 2 * self.dim * self.hidden) + self.vocab * self.dim \
            + 448 * self.dim
        return encoder + decoder

    def cache_bytes(self) -> int:
        """fp32 self-attention caches over the whole context (Whisper: and the cross-attention's, 1500)."""
        if self.kind == LLAMA:
            return 2 * self.layers * self.kv_heads * self.head_dim * self.context * 4
        return 2 * self.layers * self.dim * (self.context + 1500) * 4

    def describe(self) -> str:
        if self.kind == LLAMA:
            shape = (f"Llama, dim {self.dim}, {self.layers} layers, {self.heads} heads, {self.kv_heads} KV heads, "
                     f"hidden {self.hidden}, vocab {self.vocab}, tied embeddings, context {self.context}; "
                     f"prompt {self.prompt} tokens, {self.steps} greedy steps after the first token")
        else:
            shape = (f"Whisper, d_model {self.dim}, {self.layers} encoder + {self.layers} decoder layers, {self.heads} "
                     f"heads, FFN {self.hidden}, vocab {self.vocab}, 80 mel bins, {AUDIO_SECONDS} s of audio; decoder "
                     f"context {self.context}; {self.steps} greedy steps after the first token")
        return f"{shape}; {self.parameters() / 1e6:.1f} M parameters; int4 groups of {self.group}"


SIZES: Dict[str, Size] = {size.name: size for size in (
    # SmolLM2-135M's shape. initializer_range above the default 0.02: with tied embeddings and random
    # weights greedy decoding otherwise repeats a token from early on, and ids that differ would show less.
    Size("smollm2-135m", LLAMA, dim=576, layers=30, heads=9, kv_heads=3, hidden=1536, vocab=49152, context=512,
         group=32, init=0.05),
    # Qwen2.5-0.5B's shape as a Llama (no q/k/v biases): 24 layers of 896, 14 heads, 2 KV heads, a 151936
    # vocabulary whose tied output layer is a quarter of the parameters.
    Size("qwen2.5-0.5b", LLAMA, dim=896, layers=24, heads=14, kv_heads=2, hidden=4864, vocab=151936, context=512,
         group=128, init=0.05),
    # The same with a 1024-token prompt (the prefill target's long prompt).
    Size("qwen2.5-0.5b-p1024", LLAMA, dim=896, layers=24, heads=14, kv_heads=2, hidden=4864, vocab=151936,
         context=1152, prompt=1024, group=128, init=0.05),
    # whisper-base's shape (openai/whisper-base: 6 + 6 layers of 512, 8 heads, vocab 51865).
    Size("whisper-base", WHISPER, dim=512, layers=6, heads=8, hidden=2048, vocab=51865, context=448, group=128,
         init=0.05),
    Size("whisper-tiny", WHISPER, dim=384, layers=4, heads=6, hidden=1536, vocab=51865, context=448, group=128,
         init=0.05),
    # The smoke run's: every variant end to end in seconds per step.
    Size("llama-smoke", LLAMA, dim=64, layers=2, heads=4, kv_heads=2, hidden=128, vocab=512, context=64, prompt=16,
         steps=8, group=32, init=0.2),
    Size("whisper-smoke", WHISPER, dim=64, layers=2, heads=2, hidden=128, vocab=2000, context=64, steps=8, group=32,
         init=0.5),
)}
DEFAULT_SIZES = {LLAMA: "smollm2-135m", WHISPER: "whisper-base"}
SMOKE_SIZES = {LLAMA: "llama-smoke", WHISPER: "whisper-smoke"}

# Whisper's special tokens after the text tokens, in the real vocabulary's order: end, start, the
# language (one: the model is English-only, so the pipelines detect no language), the tasks, ...,
# no-timestamps, then the 1501 timestamps <|0.00|> ... <|30.00|>.
WHISPER_SPECIAL = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|translate|>", "<|transcribe|>",
                   "<|startoflm|>", "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>"]
WHISPER_TIMESTAMPS = [f"<|{i * 0.02:.2f}|>" for i in range(1501)]


# --- checkpoints (saved by the main environment) ---------------------------------------------------------


def _words(rng: random.Random, count: int) -> List[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return sorted({"".join(rng.choice(letters) for _ in range(rng.randint(3, 8))) for _ in range(count)})


def save_llama(size: Size, folder: Path) -> dict:
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(SEED)  # transformers initialises from the global generator
    config = LlamaConfig(hidden_size=size.dim, num_hidden_layers=size.layers, num_attention_heads=size.heads,
                         num_key_value_heads=size.kv_heads, intermediate_size=size.hidden, vocab_size=size.vocab,
                         max_position_embeddings=8192, rms_norm_eps=1e-5, rope_theta=100000.0,
                         tie_word_embeddings=True, bos_token_id=1, eos_token_id=2, pad_token_id=0,
                         initializer_range=size.init)
    model = LlamaForCausalLM(config).eval()
    # Saved as a checkpoint's own generation config, not one derived from the model config (which
    # loaders regenerate and so drop what was set on it).
    model.generation_config._from_model_config = False
    model.save_pretrained(folder)
    # The tokenizer of the checkpoint: the LLM benchmark's trainer (<unk>, <s>, </s> are ids 0-2).
    llm_text.train(folder, size.vocab, SEED)
    PreTrainedTokenizerFast(tokenizer_file=str(folder / llm_text.TOKENIZER_FILE), unk_token="<unk>", bos_token="<s>",
                            eos_token="</s>", pad_token="<unk>").save_pretrained(folder)
    return {"files": sorted(p.name for p in folder.iterdir())}


def save_whisper(size: Size, folder: Path) -> dict:
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (WhisperConfig, WhisperFeatureExtractor, WhisperForConditionalGeneration,
                              WhisperProcessor, WhisperTokenizerFast)

    folder.mkdir(parents=True, exist_ok=True)
    special = WHISPER_SPECIAL + WHISPER_TIMESTAMPS
    text_tokens = size.vocab - len(special)
    rng = random.Random(SEED)
    words = _words(rng, max(6000, text_tokens))
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    # All 256 bytes in the alphabet, as GPT-2's (Whisper's) byte-level BPE has them.
    bpe.train_from_iterator([" ".join(rng.choice(words) for _ in range(200)) for _ in range(2000)],
                            trainers.BpeTrainer(vocab_size=text_tokens,
                                                initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    bpe.add_special_tokens([AddedToken(token, special=True, normalized=False) for token in special])
    if bpe.get_vocab_size() != size.vocab:
        raise RuntimeError(f"the Whisper tokenizer came out with {bpe.get_vocab_size()} tokens, not {size.vocab}")
    ids = {token: bpe.token_to_id(token) for token in WHISPER_SPECIAL}
    end = WHISPER_SPECIAL[0]
    tokenizer = WhisperTokenizerFast(tokenizer_object=bpe, unk_token=end, bos_token=end, eos_token=end, pad_token=end)
    WhisperProcessor(feature_extractor=WhisperFeatureExtractor(feature_size=80), tokenizer=tokenizer) \
        .save_pretrained(folder)

    torch.manual_seed(SEED)
    config = WhisperConfig(vocab_size=size.vocab, num_mel_bins=80, d_model=size.dim, encoder_layers=size.layers,
                           decoder_layers=size.layers, encoder_attention_heads=size.heads,
                           decoder_attention_heads=size.heads, encoder_ffn_dim=size.hidden, decoder_ffn_dim=size.hidden,
                           max_source_positions=1500, max_target_positions=448, pad_token_id=ids[end],
                           bos_token_id=ids[end], eos_token_id=ids[end],
                           decoder_start_token_id=ids["<|startoftranscript|>"], suppress_tokens=[],
                           begin_suppress_tokens=[], init_std=size.init)
    model = WhisperForConditionalGeneration(config).eval()
    generation = model.generation_config
    generation._from_model_config = False  # see save_llama
    # What WhisperPipeline reads (an English-only model: no language detection, no language token);
    # no suppressed tokens, so every variant decodes plain greedy.
    generation.is_multilingual = False
    generation.no_timestamps_token_id = ids["<|notimestamps|>"]
    generation.prev_sot_token_id = ids["<|startofprev|>"]
    generation.lang_to_id = {"<|en|>": ids["<|en|>"]}
    generation.task_to_id = {"transcribe": ids["<|transcribe|>"], "translate": ids["<|translate|>"]}
    generation.max_initial_timestamp_index = 50
    generation.suppress_tokens, generation.begin_suppress_tokens = [], []
    model.save_pretrained(folder)
    return {"files": sorted(p.name for p in folder.iterdir()), "special_ids": ids}


def save(size: Size, folder: Path) -> dict:
    return (save_llama if size.kind == LLAMA else save_whisper)(size, folder)


# --- inputs ------------------------------------------------------------------------------------------------


def prompt(size: Size, checkpoint: Path, round_index: int) -> List[int]:
    """Round `round_index`'s prompt (-1: the probe's): whole-word token ids, a new draw each round (the
    same for every variant)."""
    return llm_text.prompt(checkpoint, size.prompt, SEED + 2 + round_index)


def audio(round_index: int) -> np.ndarray:
    """Round `round_index`'s 30 s of 16 kHz audio (-1: the probe's), in [-1, 1]: voiced syllables (a
    gliding fundamental with harmonics under a syllable envelope) in noise, drawn anew each round."""
    rng = np.random.default_rng(SEED + 100 + round_index)
    t = np.arange(SAMPLE_RATE * AUDIO_SECONDS) / SAMPLE_RATE
    pitch = 120 + 40 * np.sin(2 * np.pi * rng.uniform(0.1, 0.3) * t + rng.uniform(0, 6))
    phase = 2 * np.pi * np.cumsum(pitch) / SAMPLE_RATE
    voice = sum(np.sin(k * phase) / k for k in range(1, 8))
    envelope = np.clip(np.sin(2 * np.pi * rng.uniform(3, 5) * t + rng.uniform(0, 6)), 0, None) ** 2
    signal = voice * envelope + 0.05 * rng.standard_normal(t.size)
    return (0.8 * signal / np.abs(signal).max()).astype(np.float32)


def decoder_prompt(checkpoint: Path) -> List[int]:
    """The decoder prompt WhisperPipeline gives an English-only model without timestamps, which every
    variant is given: <|startoftranscript|><|notimestamps|>."""
    import json

    generation = json.loads((checkpoint / "generation_config.json").read_text())
    return [generation["decoder_start_token_id"], generation["no_timestamps_token_id"]]


def features(checkpoint: Path, samples: np.ndarray) -> torch.Tensor:
    """[1, 80, 3000] log-mel features of the checkpoint's WhisperFeatureExtractor."""
    from transformers import WhisperFeatureExtractor

    extractor = WhisperFeatureExtractor.from_pretrained(checkpoint)
    return extractor(samples, sampling_rate=SAMPLE_RATE, return_tensors="pt").input_features


# --- eager references (either environment) --------------------------------------------------------------


def _greedy(step, first: List[int], steps: int) -> Tuple[List[int], torch.Tensor]:
    """(ids, logits) of peers.decoding.greedy: `first` in one call, then steps greedy tokens."""
    done = decoding.greedy(step, first, steps, keep_logits=True)
    return done["ids"], done["logits"]


def llama_reference(checkpoint: Path, tokens: List[int], steps: int) -> Tuple[List[int], torch.Tensor]:
    from transformers import AutoModelForCausalLM, DynamicCache

    model = AutoModelForCausalLM.from_pretrained(checkpoint, dtype=torch.float32).eval()
    cache = DynamicCache()

    def step(ids: List[int], position: int) -> torch.Tensor:
        with torch.no_grad():
            out = model(input_ids=torch.tensor([ids]), position_ids=torch.arange(position, position + len(ids))[None],
                        past_key_values=cache, use_cache=True)
        return out.logits[0, -1].float()

    return _greedy(step, tokens, steps)


def whisper_reference(checkpoint: Path, samples: np.ndarray, steps: int) -> Tuple[List[int], torch.Tensor]:
    from transformers import AutoModelForSpeechSeq2Seq

    model = AutoModelForSpeechSeq2Seq.from_pretrained(checkpoint, dtype=torch.float32).eval()
    with torch.no_grad():
        encoded = model.model.encoder(features(checkpoint, samples)).last_hidden_state
    state = {"past": None}

    def step(ids: List[int], position: int) -> torch.Tensor:
        with torch.no_grad():
            out = model(encoder_outputs=(encoded,), decoder_input_ids=torch.tensor([ids]),
                        past_key_values=state["past"], use_cache=True)
        state["past"] = out.past_key_values
        return out.logits[0, -1].float()

    return _greedy(step, decoder_prompt(checkpoint), steps)


def reference(size: Size, checkpoint: Path) -> dict:
    """The probe's eager greedy ids and logits in this environment, with its transformers version."""
    import transformers

    if size.kind == LLAMA:
        ids, logits = llama_reference(checkpoint, prompt(size, checkpoint, -1), size.steps)
    else:
        ids, logits = whisper_reference(checkpoint, audio(-1), size.steps)
    return {"ids": ids, "logits": logits, "transformers": transformers.__version__}


def size_record(size: Size) -> dict:
    return dict(asdict(size), parameters=size.parameters(), description=size.describe())
