"""The LLM runner tests' tokenizer: a small byte-level BPE trained in code (no downloads) on a few
English sentences, by the trainer tests/ shares with bench/ (workloads/tokenizer.py, byte_level_bpe)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BOS, EOS = 1, 2
TEXT = [
    "the quick brown fox jumps over the lazy dog. " * 8,
    "open vino runs llama models on many cpus, with caches kept in state. " * 8,
    "executorch programs run on device; a delegate runs the parts it was lowered for. " * 8,
]


def _llm_text():
    path = Path(__file__).resolve().parents[2] / "workloads" / "tokenizer.py"
    spec = importlib.util.spec_from_file_location("workloads_tokenizer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def train(path: Path, vocab_size: int = 300, every_byte: bool = False):
    """Writes tokenizer.json to `path` and returns the tokenizer (tokenizers.Tokenizer). `every_byte`:
    all 256 bytes are tokens (byte_level_bpe), as in a real model's tokenizer."""
    tokenizer = _llm_text().byte_level_bpe(TEXT, vocab_size, every_byte=every_byte)
    assert tokenizer.token_to_id("<s>") == BOS and tokenizer.token_to_id("</s>") == EOS
    tokenizer.save(str(path))
    return tokenizer
