"""Each token's bytes, read from a Hugging Face tokenizer.json, for the engine's text (whole UTF-8
characters as they stream, stop strings). A byte-level BPE token (GPT-2, Llama 3, Qwen) may be part of
a character, a SentencePiece token begins with its space and may be one byte (<0xNN>): llguidance's
tokenizer reads both as the raw bytes the model produces. Special tokens print nothing (b"")."""

from __future__ import annotations

from typing import List


def token_bytes(tokenizer_json: str, size: int) -> List[bytes]:
    """The bytes of tokens 0 .. size - 1 (b"" for special tokens and ids past the tokenizer's)."""
    import llguidance

    tokenizer = llguidance.LLTokenizer(tokenizer_json)
    known = min(size, tokenizer.vocab_size)
    table = [b"" if tokenizer.is_special_token(i) else tokenizer.decode_bytes([i]) for i in range(known)]
    return table + [b""] * (size - known)
