"""ExecuTorch's TextLLMRunner generating from a program and tokenizer in a folder, and the text eager
PyTorch's greedy ids make, as the runner would print it."""

from __future__ import annotations

from llm_models import Conversation, eager_step
from llm_tokenizer import EOS

PROMPT = "the quick fox runs"
NEW_TOKENS = 24


def run_text_runner(folder, prompt, data=None, **config):
    from executorch.extension.llm.runner import GenerationConfig, TextLLMRunner

    runner = TextLLMRunner(str(folder / "model.pte"), str(folder / "tokenizer.json"), str(data) if data else None)
    pieces, stats = [], []
    runner.generate(prompt, GenerationConfig(temperature=0.0, echo=False, **config),
                    token_callback=pieces.append, stats_callback=stats.append)
    return "".join(pieces), stats[0]


def eager_text(model, tokenizer, prompt_ids, new_tokens, special_tokens: bool = True):
    """Eager PyTorch's greedy text: with the special tokens' text, as ExecuTorch's runner prints it, or
    without (`special_tokens=False`), as the generation engine prints it (and transformers' decode with
    skip_special_tokens)."""
    ids, _ = Conversation(eager_step(model)).generate(prompt_ids, new_tokens)
    if EOS in ids:  # both stop at the end-of-sequence token and do not print it
        ids = ids[: ids.index(EOS)]
    return tokenizer.decode(ids, skip_special_tokens=not special_tokens)
