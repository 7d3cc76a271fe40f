"""A small Hugging Face checkpoint with random weights, saved as the hub has it, for trying
optimum-executorch's openvino recipe without downloading anything (the README's Hugging Face
commands; any checkpoint folder of your own works the same way):

    python examples/hf_checkpoint.py llama my-llama       config, weights, generation config, tokenizer.json
    python examples/hf_checkpoint.py whisper my-whisper   the same, Whisper's processor, and speech.wav (45 s)

Random weights compute real models' operations at real shapes (Whisper's 30 s of audio, 80 mel bins),
so exports, speed and equality with eager are what a trained checkpoint gives; the text is
nonsense. Needs transformers and tokenizers (optimum-executorch's environment has both)."""

from __future__ import annotations

import argparse
import random
import wave
from pathlib import Path

import numpy as np
import torch

WORDS_SEED = 0
# Whisper's special tokens after its text tokens, in the real vocabulary's order: end, start, the
# languages (three here), the tasks, ..., no-timestamps, then the timestamps <|0.00|> ... <|30.00|>
# (transformers' timestamp rules take every id past no-timestamps for one).
WHISPER_LANGUAGES = ["<|en|>", "<|fr|>", "<|de|>"]
WHISPER_SPECIALS = (["<|endoftext|>", "<|startoftranscript|>", *WHISPER_LANGUAGES, "<|translate|>", "<|transcribe|>",
                     "<|startoflm|>", "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>"]
                    + [f"<|{i * 0.02:.2f}|>" for i in range(1501)])
WHISPER_TEXT_TOKENS = 512


def _bpe(vocab_size: int, specials, every_byte: bool = False):
    """A byte-level BPE of exactly `vocab_size` tokens (specials first) trained on made-up ASCII words:
    every id a random model picks decodes to printable text (`every_byte`: all 256 bytes are tokens,
    as in Whisper's, and some ids are pieces of a character)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    rng = random.Random(WORDS_SEED)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 8))) for _ in range(8000)]
    tokenizer = Tokenizer(models.BPE(unk_token=specials[0] if specials else None))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.train_from_iterator([" ".join(rng.choice(words) for _ in range(100)) for _ in range(2000)],
                                  trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials,
                                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
                                                      if every_byte else []))
    if tokenizer.get_vocab_size() != vocab_size:
        raise SystemExit(f"the tokenizer came out with {tokenizer.get_vocab_size()} tokens, not {vocab_size}")
    return tokenizer


def save_llama(folder: Path) -> None:
    """A Llama of 4 layers, width 256 (about 4 M parameters), 4096 positions; <s> = 1, </s> = 2."""
    from transformers import LlamaConfig, LlamaForCausalLM

    vocab = 4096
    # initializer_range above the default 0.02: a narrow random model otherwise repeats one token.
    config = LlamaConfig(vocab_size=vocab, hidden_size=256, intermediate_size=768, num_hidden_layers=4,
                         num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=4096, bos_token_id=1,
                         eos_token_id=2, pad_token_id=0, tie_word_embeddings=True, initializer_range=0.2)
    LlamaForCausalLM(config).eval().save_pretrained(folder)
    _bpe(vocab, ["<unk>", "<s>", "</s>"]).save(str(folder / "tokenizer.json"))


def whisper_model():
    """A multilingual Whisper of whisper-tiny's layout at width 64 (2 + 2 layers), 30 s windows of 80
    mel bins, WHISPER_TEXT_TOKENS text tokens then Whisper's special tokens, with the generation config
    a real checkpoint has (languages, tasks, timestamps), so language and task tokens and timestamps
    work as on openai/whisper-*. init_std above the default: see save_llama."""
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    ids = {token: WHISPER_TEXT_TOKENS + index for index, token in enumerate(WHISPER_SPECIALS)}
    end = ids["<|endoftext|>"]
    config = WhisperConfig(vocab_size=WHISPER_TEXT_TOKENS + len(WHISPER_SPECIALS), num_mel_bins=80, d_model=64,
                           encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
                           encoder_ffn_dim=256, decoder_ffn_dim=256, max_source_positions=1500,
                           max_target_positions=448, pad_token_id=end, bos_token_id=end, eos_token_id=end,
                           decoder_start_token_id=ids["<|startoftranscript|>"], suppress_tokens=[],
                           begin_suppress_tokens=[], init_std=0.5)
    model = WhisperForConditionalGeneration(config).eval()
    generation = model.generation_config
    generation._from_model_config = False  # saved as the checkpoint's own generation config
    generation.is_multilingual = True
    generation.lang_to_id = {token: ids[token] for token in WHISPER_LANGUAGES}
    generation.task_to_id = {"transcribe": ids["<|transcribe|>"], "translate": ids["<|translate|>"]}
    generation.no_timestamps_token_id = ids["<|notimestamps|>"]
    generation.prev_sot_token_id = ids["<|startofprev|>"]
    generation.max_initial_timestamp_index = 50
    generation.suppress_tokens, generation.begin_suppress_tokens = [], []
    return model


def save_whisper_processor(folder: Path) -> None:
    """A byte-level BPE of WHISPER_TEXT_TOKENS text tokens, then WHISPER_SPECIALS, and the feature
    extractor of 30-second windows."""
    from tokenizers import AddedToken
    from transformers import WhisperFeatureExtractor, WhisperProcessor, WhisperTokenizerFast

    tokenizer = _bpe(WHISPER_TEXT_TOKENS, [], every_byte=True)  # every byte a token: no unknown one
    tokenizer.add_special_tokens([AddedToken(token, special=True, normalized=False) for token in WHISPER_SPECIALS])
    if tokenizer.get_vocab_size() != WHISPER_TEXT_TOKENS + len(WHISPER_SPECIALS):
        raise SystemExit(f"the Whisper tokenizer came out with {tokenizer.get_vocab_size()} tokens")
    end = WHISPER_SPECIALS[0]
    text = WhisperTokenizerFast(tokenizer_object=tokenizer, unk_token=end, bos_token=end, eos_token=end, pad_token=end)
    WhisperProcessor(feature_extractor=WhisperFeatureExtractor(feature_size=80), tokenizer=text).save_pretrained(folder)


def save_whisper(folder: Path) -> None:
    """whisper_model() and its processor; and speech.wav: 45 s of a gliding tone in noise at 16 kHz (two
    windows)."""
    whisper_model().save_pretrained(folder)
    save_whisper_processor(folder)
    _write_tone(folder / "speech.wav", seconds=45.0, rate=16000)


def _write_tone(path: Path, seconds: float, rate: int) -> None:
    t = np.arange(int(seconds * rate)) / rate
    signal = 0.4 * np.sin(2 * np.pi * (200 + 300 * t) * t) + 0.05 * np.random.default_rng(0).standard_normal(t.size)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes((np.clip(signal, -1, 1) * 32767).astype("<i2").tobytes())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("architecture", choices=("llama", "whisper"))
    parser.add_argument("folder", type=Path)
    args = parser.parse_args()
    torch.manual_seed(0)  # transformers draws the weights from the global generator
    args.folder.mkdir(parents=True, exist_ok=True)
    (save_llama if args.architecture == "llama" else save_whisper)(args.folder)
    print(f"saved a random {args.architecture} in {args.folder}")


if __name__ == "__main__":
    main()
