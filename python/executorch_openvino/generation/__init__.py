"""Generation, free of any runtime: the decoding loops over any model that maps (tokens, position)
to logits, greedy decoding a token at a time (greedy) and the whole loop (generate), plain or
speculative (drafts from the conversation itself or from a smaller model), choosing the next
token (greedily or sampled as Hugging Face transformers samples), stopping at stop strings in
streamed text, and the chat template that lays out a conversation for the model.
Only numpy is needed to import them; llm/text_program.py gives an ExecuTorch program this shape."""

from __future__ import annotations

from .chat_template import ChatTemplate
from .decoding import DraftModel, LookupDrafter, Result, Statistics, TextModel, generate, greedy, prefill
from .drafting import PromptLookup
from .sampling import Sampler, SamplingOptions
from .stopping import StopStrings

__all__ = ["ChatTemplate", "DraftModel", "LookupDrafter", "PromptLookup", "Result", "Sampler", "SamplingOptions",
           "Statistics", "StopStrings", "TextModel", "generate", "greedy", "prefill"]
