"""A small BPE tokenizer trained in code (no downloads) for the LLM runner tests: byte-level, as
Llama 3's and GPT-2's, trained on ASCII text only so that every token decodes to valid UTF-8
whatever a model of random weights chooses (ExecuTorch's runner hands each piece to Python as str)."""

from __future__ import annotations

from pathlib import Path

BOS, EOS = 1, 2
TEXT = [
    "the quick brown fox jumps over the lazy dog. " * 8,
    "open vino runs llama models on many cpus, with caches kept in state. " * 8,
    "executorch programs run on device; a delegate runs the parts it was lowered for. " * 8,
]


def train(path: Path, vocab_size: int = 300):
    """Writes tokenizer.json to `path` and returns the tokenizer (tokenizers.Tokenizer)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"])
    tokenizer.train_from_iterator(TEXT, trainer)
    assert tokenizer.token_to_id("<s>") == BOS and tokenizer.token_to_id("</s>") == EOS
    tokenizer.save(str(path))
    return tokenizer
