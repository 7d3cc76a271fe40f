"""Whisper's timestamp rules in the engine (Conversation.generate(timestamps=...)), against
transformers' own processors: over a model whose logits are random but fixed by the conversation so
far, greedy decoding through SuppressTokensAtBegin, SuppressTokens and WhisperTimeStampLogitsProcessor
(the order transformers' Whisper gives them) chooses the same ids as the engine, for many seeds, with
and without max_initial_timestamp and the probability rule. A rule left out or one bound off by one
(a timestamp allowed again after a closed pair, text allowed after a lone timestamp, the probability
rule over the unmasked row) changes some sequence; tried: `last + 1` where transformers keeps `last`
after a lone timestamp, and the probability rule ignoring the suppressed tokens, each fails."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import torch

from executorch_openvino.generation import Conversation, GenerationValueError, Program, TimestampRule

VOCAB = 48
EOS = 20             # the end id; 21..23 specials
NO_TIMESTAMPS = 23
TIMESTAMP_BEGIN = 24  # 24..47: timestamps
PROMPT = [21, 22]
SUPPRESS = [3, 7]
BEGIN_SUPPRESS = [EOS, 5]


def _row(history, seed):
    """Random logits fixed by the conversation so far; timestamps favoured a little, so that pairs,
    lone timestamps and the probability rule all happen."""
    digest = hashlib.sha256(f"{seed}:{history}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    row = rng.standard_normal(VOCAB).astype(np.float32) * 2
    row[TIMESTAMP_BEGIN:] += 0.6
    return row


def _program(seed):
    def step(tokens, position):
        # The engine feeds the whole conversation once, then a token a call: each row is the one
        # after the history up to it (positions are the conversation's).
        rows = []
        for i in range(len(tokens)):
            _program.history[seed] = _program.history[seed][:position + i] + [tokens[i]]
            rows.append(_row(_program.history[seed], seed))
        return np.stack(rows)

    _program.history[seed] = []
    return Program.from_step(step, VOCAB, context=64)


_program.history = {}


class _Config:
    def __init__(self, max_initial):
        self.no_timestamps_token_id = NO_TIMESTAMPS
        self.eos_token_id = EOS
        self.max_initial_timestamp_index = max_initial
        self.is_multilingual = False
        self.lang_to_id = {}
        self.task_to_id = {}


def _transformers(seed, steps, max_initial, from_probability):
    from transformers.generation.logits_process import (SuppressTokensAtBeginLogitsProcessor,
                                                        SuppressTokensLogitsProcessor,
                                                        WhisperTimeStampLogitsProcessor)

    stamps = WhisperTimeStampLogitsProcessor(_Config(max_initial), begin_index=len(PROMPT),
                                             _detect_timestamp_from_logprob=from_probability)
    stamps.timestamp_begin = TIMESTAMP_BEGIN  # the processor takes <|notimestamps|> + 1, as here
    processors = [SuppressTokensAtBeginLogitsProcessor(BEGIN_SUPPRESS, len(PROMPT)),
                  SuppressTokensLogitsProcessor(SUPPRESS), stamps]
    ids = list(PROMPT)
    for _ in range(steps):
        scores = torch.from_numpy(_row(ids, seed))[None]
        for processor in processors:
            scores = processor(torch.tensor([ids]), scores)
        token = int(scores.argmax())
        if token == EOS:
            break
        ids.append(token)
    return ids[len(PROMPT):]


@pytest.mark.parametrize("max_initial", [None, 3])
@pytest.mark.parametrize("from_probability", [True, False])
def test_the_engine_chooses_what_transformers_processors_choose(max_initial, from_probability):
    rule = TimestampRule(TIMESTAMP_BEGIN, NO_TIMESTAMPS, EOS, len(PROMPT), max_initial, from_probability)
    pairs = lone_ends = 0
    for seed in range(40):
        expected = _transformers(seed, 24, max_initial, from_probability)
        got = Conversation(_program(seed)).generate(list(PROMPT), 24, eos_ids=[EOS], suppress=SUPPRESS,
                                                    begin_suppress=BEGIN_SUPPRESS, timestamps=rule).tokens
        assert got == expected, seed
        stamps = [t >= TIMESTAMP_BEGIN for t in got]
        pairs += sum(a and b for a, b in zip(stamps, stamps[1:]))
        lone_ends += len(got) < 24 and stamps[-1]
    assert got[0] >= TIMESTAMP_BEGIN
    assert pairs > 10 and lone_ends > 0, (pairs, lone_ends)  # the rules were exercised, not only text


def test_ids_the_rules_cannot_use_are_refused_before_the_model_runs():
    program = _program(0)
    for rule, message in ((TimestampRule(VOCAB, NO_TIMESTAMPS, EOS, 2), "first timestamp id"),
                          (TimestampRule(TIMESTAMP_BEGIN, VOCAB + 1, EOS, 2), "no-timestamps id"),
                          (TimestampRule(TIMESTAMP_BEGIN, NO_TIMESTAMPS, TIMESTAMP_BEGIN + 1, 2), "end id")):
        with pytest.raises(GenerationValueError, match=message):
            Conversation(program).generate(list(PROMPT), 3, eos_ids=[EOS], timestamps=rule)
    assert _program.history[0] == []
