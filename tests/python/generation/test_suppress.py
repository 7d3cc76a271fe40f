"""Suppressed tokens (the engine's suppress and begin_suppress options, transformers'
suppress_tokens and begin_suppress_tokens, which Whisper's generation config sets): over a model
whose logits rank the same tokens first at every step, a suppressed token is never chosen, a
begin-suppressed one only not as the first token after the prompt, and ids outside the vocabulary
are refused before anything runs."""

from __future__ import annotations

import numpy as np
import pytest

from executorch_openvino.generation import Conversation, GenerationValueError, Program

VOCAB = 8
RANKING = [5, 3, 6, 1, 0, 2, 4, 7]  # the order the model prefers tokens in, at every step


def _model(calls):
    def step(tokens, position):
        calls.append((list(tokens), position))
        row = np.zeros(VOCAB, np.float32)
        for rank, token in enumerate(RANKING):
            row[token] = VOCAB - rank
        return np.tile(row, (len(tokens), 1))

    return Program.from_step(step, VOCAB, context=32)


def test_suppressed_tokens_are_never_chosen_and_begin_suppressed_ones_not_first():
    """Guards where each list applies: begin_suppress masks the first choice after the prompt only
    (tried: applied at every step, the 5s after the first token vanish), suppress every choice."""
    program = _model([])
    greedy = Conversation(program).generate([0, 2], 4, eos_ids=[]).tokens
    assert greedy == [5, 5, 5, 5]
    masked = Conversation(program).generate([0, 2], 4, eos_ids=[], suppress=[3], begin_suppress=[5]).tokens
    assert masked == [6, 5, 5, 5]
    both = Conversation(program).generate([0, 2], 3, eos_ids=[], suppress=[5, 3]).tokens
    assert both == [6, 6, 6]


@pytest.mark.parametrize("option", ["suppress", "begin_suppress"])
def test_ids_outside_the_vocabulary_are_refused_before_the_model_runs(option):
    calls = []
    conversation = Conversation(_model(calls))
    with pytest.raises(GenerationValueError, match=f"suppressed token {VOCAB} is outside the model's vocabulary"):
        conversation.generate([0, 2], 3, eos_ids=[], **{option: [1, VOCAB]})
    assert calls == []
