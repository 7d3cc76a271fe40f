"""Generation through the engine (libexecutorch_openvino_generation; engine.py binds it): programs,
conversations on them, greedy, sampled and speculative decoding, stop strings, text in whole
characters, output held to a schema; and the chat template that lays out a conversation."""

from __future__ import annotations

from .chat_template import ChatTemplate
from .engine import (Constraint, Conversation, GenerationError, GenerationValueError, Program, Result, SamplingOptions,
                     Statistics, TimestampRule, Vocabulary, greedy)

__all__ = ["ChatTemplate", "Constraint", "Conversation", "GenerationError", "GenerationValueError", "Program", "Result",
           "SamplingOptions", "Statistics", "TimestampRule", "Vocabulary", "greedy"]
