"""Choosing the next token from a step's logits: greedily, or drawn from them after the filters of
Hugging Face transformers' generate, so a model run here continues a prompt as it does there.

The order and the arithmetic are generate's: the repetition penalty over the ids already in the
conversation, then, when sampling, temperature, top-k, top-p and a softmax. Top-p removes what
generate's TopPLogitsWarper removes: with tokens in ascending order of probability, a token goes when
the cumulative probability up to and including it is at most 1 - top_p; the most probable one always
stays. Where tokens of equal probability straddle that boundary, generate keeps whichever of them
torch.sort happens to put last (its order of ties is unspecified, and not their order of ids); here
the lower ids stay, as argmax picks the first of equal maxima. Everything is computed in float64.

Draws come from numpy's PCG64 generator by inverting the cumulative distribution with one uniform
number per token: a seed fixes the whole sequence of tokens.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np


@dataclass(frozen=True)
class SamplingOptions:
    """How the next token is chosen; the defaults choose greedily and filter nothing."""

    temperature: float = 0.0  # 0: greedy, the most probable token
    top_k: int = 0  # 0: off
    top_p: float = 1.0  # 1: off
    repetition_penalty: float = 1.0  # 1: off
    seed: Optional[int] = None  # None: from the operating system's entropy

    def validate(self) -> None:
        """Raises ValueError naming the first option out of its range."""
        if not (self.temperature >= 0 and math.isfinite(self.temperature)):
            raise ValueError(f"temperature must be 0 (greedy) or a positive number, not {self.temperature}")
        if isinstance(self.top_k, bool) or not isinstance(self.top_k, numbers.Integral) or self.top_k < 0:
            raise ValueError(f"top_k must be a whole number, 0 (off) or more, not {self.top_k}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1] (1: off), not {self.top_p}")
        if not (self.repetition_penalty > 0 and math.isfinite(self.repetition_penalty)):
            raise ValueError(f"repetition_penalty must be a positive number (1: off), not {self.repetition_penalty}")


class Sampler:
    """Chooses next tokens as `options` say. One random generator serves all of its calls, so the
    seed fixes the sequence of draws, not each draw."""

    def __init__(self, options: SamplingOptions = SamplingOptions()):
        options.validate()
        self.options = options
        self._random = np.random.Generator(np.random.PCG64(options.seed))

    def next_token(self, logits: np.ndarray, history: Sequence[int]) -> int:
        """The next token after `history` (the ids so far, prompt included) given the step's logits
        (1-D, one per id of the vocabulary)."""
        scores = self._penalized(logits, history)
        if self.options.temperature == 0:
            return int(np.argmax(scores))
        probabilities = _softmax(self._filtered(scores))
        # Only ids of positive probability can be drawn, even when rounding puts the uniform number
        # at the very end of the cumulative sum.
        support = np.flatnonzero(probabilities)
        cumulative = np.cumsum(probabilities[support])
        pick = np.searchsorted(cumulative, self._random.random() * cumulative[-1], side="right")
        return int(support[min(pick, support.size - 1)])

    def filtered_probabilities(self, logits: np.ndarray, history: Sequence[int]) -> np.ndarray:
        """The distribution next_token draws from, over the whole vocabulary (float64); greedy
        choosing is all of it on the argmax."""
        scores = self._penalized(logits, history)
        if self.options.temperature == 0:
            chosen = np.zeros(scores.size)
            chosen[np.argmax(scores)] = 1.0
            return chosen
        return _softmax(self._filtered(scores))

    def _penalized(self, logits: np.ndarray, history: Sequence[int]) -> np.ndarray:
        """A float64 copy of the logits with the repetition penalty applied once per id in history."""
        scores = np.array(logits, dtype=np.float64)
        if scores.ndim != 1 or scores.size == 0:
            raise ValueError(f"logits must be one non-empty row over the vocabulary, not of shape {scores.shape}")
        if np.isnan(scores).any() or np.isposinf(scores).any() or np.isneginf(scores).all():
            raise ValueError("logits must be numbers below +inf, at least one of them finite")
        penalty = self.options.repetition_penalty
        if penalty == 1:
            return scores
        ids = np.unique(np.asarray(history, dtype=np.int64))
        if ids.size and (ids[0] < 0 or ids[-1] >= scores.size):
            raise ValueError(f"history holds ids outside the vocabulary of {scores.size}")
        seen = scores[ids]
        scores[ids] = np.where(seen > 0, seen / penalty, seen * penalty)  # less likely either way
        return scores

    def _filtered(self, scores: np.ndarray) -> np.ndarray:
        """Temperature, top-k and top-p; what they remove becomes -inf."""
        options = self.options
        scores = scores / options.temperature
        if options.top_k:
            k = min(options.top_k, scores.size)
            kth = np.partition(scores, scores.size - k)[scores.size - k]
            scores[scores < kth] = -np.inf  # ties with the k-th largest all stay
        if options.top_p < 1:
            # Removed ids have no probability: sorting the others is enough, and fast after top-k.
            kept = np.flatnonzero(scores > -np.inf)
            descending = kept[np.argsort(-scores[kept], kind="stable")]  # equal scores: lower ids first
            ascending = descending[::-1]
            cumulative = np.cumsum(_softmax(scores[ascending]))
            removed = cumulative <= 1 - options.top_p
            removed[-1] = False
            scores[ascending[removed]] = -np.inf
        return scores


def _softmax(scores: np.ndarray) -> np.ndarray:
    exponentials = np.exp(scores - scores.max())
    return exponentials / exponentials.sum()
