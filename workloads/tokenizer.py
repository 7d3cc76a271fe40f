"""A byte-level BPE tokenizer trained in code (no downloads), for ExecuTorch's LLM runner and Hugging
Face checkpoints of random weights, and prompts, each of which is both token ids (for the variants fed
ids) and text (for a runner fed text).

Every prompt is made of words that the tokenizer encodes as one token each, so its text encodes back to
exactly its ids and every variant computes the same conversation. The timed rounds use a fresh prompt
each round: LLMPipeline's default backend (paged attention) caches prompt prefixes, and one prompt
repeated would have it skip the prefill from the second round on."""

from __future__ import annotations

import functools
import random
from pathlib import Path
from typing import Iterable, List, Tuple

SPECIAL_TOKENS = ["<unk>", "<s>", "</s>"]
TOKENIZER_FILE = "tokenizer.json"


def byte_level_bpe(text: Iterable[str], vocab_size: int, special_tokens: List[str] = SPECIAL_TOKENS,
                   every_byte: bool = False):
    """A byte-level BPE tokenizer (tokenizers.Tokenizer; as Llama 3's and GPT-2's) trained on `text`,
    with the special tokens first (<unk>, <s>, </s> as ids 0, 1, 2 by default; the first is the
    unknown token). Trained on ASCII only, every token decodes to valid UTF-8 whatever a model of
    random weights picks (ExecuTorch's runner hands each piece to Python as str). The LLM tests'
    tokenizer (tests/python/llm_tokenizer.py), the optimum tests' (tests/optimum/hf_checkpoints.py) and
    the benchmarks' (bench/llm, bench/hf_recipe). `every_byte`: all 256 bytes are tokens, as in real
    byte-level tokenizers, so any text can be written (structured output needs "{" and the rest) and a
    non-ASCII character may take several tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE(unk_token=special_tokens[0]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    alphabet = pre_tokenizers.ByteLevel.alphabet() if every_byte else []
    tokenizer.train_from_iterator(text, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special_tokens,
                                                            initial_alphabet=alphabet))
    return tokenizer


def train(work: Path, vocab_size: int, seed: int) -> Path:
    """A byte-level BPE tokenizer of exactly `vocab_size` tokens in work/tokenizer.json, trained on
    pseudo-random ASCII words."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    # As many distinct words as tokens, so that merges can go on to whole words until the vocabulary is full.
    count = max(6000, vocab_size)
    words = sorted({"".join(rng.choice(letters) for _ in range(rng.randint(3, 8))) for _ in range(count)})
    tokenizer = byte_level_bpe([" ".join(rng.choice(words) for _ in range(200)) for _ in range(2000)], vocab_size)
    if tokenizer.get_vocab_size() != vocab_size:
        raise RuntimeError(f"the tokenizer came out with {tokenizer.get_vocab_size()} tokens, not {vocab_size}")
    path = work / TOKENIZER_FILE
    tokenizer.save(str(path))
    load.cache_clear()
    word_ids.cache_clear()
    return path


@functools.lru_cache(maxsize=None)
def load(work: Path):
    """The tokenizer train() wrote (read once per process; never modified)."""
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(work / TOKENIZER_FILE))


@functools.lru_cache(maxsize=None)
def word_ids(work: Path) -> Tuple[int, ...]:
    """The ids of whole words, each one token with its leading space (sorted: the same on every machine)."""
    tokenizer = load(work)
    marker = "\u0120"  # byte-level BPE's spelling of a leading space
    ids = [i for token, i in tokenizer.get_vocab().items() if token.startswith(marker) and token[1:].isalpha()]
    return tuple(sorted(i for i in ids if tokenizer.encode(tokenizer.decode([i])).ids == [i]))


def prompt(work: Path, length: int, seed: int) -> List[int]:
    """`length` whole-word token ids, drawn with `seed`."""
    words = word_ids(work)
    if len(words) < length:
        raise RuntimeError(f"the tokenizer has only {len(words)} whole-word tokens, fewer than a prompt's {length}")
    return random.Random(seed).sample(words, length)


def as_text(work: Path, ids: List[int]) -> str:
    """The text of a prompt, checked to encode back to the same ids."""
    tokenizer = load(work)
    text = tokenizer.decode(ids)
    if tokenizer.encode(text).ids != list(ids):
        raise ValueError("this prompt has no text that encodes back to its ids (not made by tokenizer.prompt)")
    return text


def synthetic_byte_level_json(count: int, seed: int = 0) -> Tuple[str, int]:
    """tokenizer.json text of a byte-level BPE of `count` tokens: the 256 bytes, then merges of two
    existing tokens (mostly letters, some with a leading space), as a large real vocabulary has; and its
    size. Made in seconds at 150k tokens (no training): the structured-output tests and benchmark."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {"<|endoftext|>": 0}
    for char in sorted(alphabet):
        vocab[char] = len(vocab)
    rng = random.Random(seed)
    letters = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"]
    pieces = list(letters) + ["Ġ"]
    merges = []
    while len(vocab) < count:
        left = rng.choice(pieces)
        right = rng.choice(letters) if rng.random() < 0.5 else rng.choice(pieces)
        token = left + right
        if token in vocab or len(token) > 14 or token.endswith("Ġ") or "Ġ" in right:
            continue
        vocab[token] = len(vocab)
        merges.append((left, right))
        pieces.append(token)
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    from tokenizers import AddedToken

    tokenizer.add_special_tokens([AddedToken("<|endoftext|>", special=True)])
    return tokenizer.to_str(), tokenizer.get_vocab_size()
