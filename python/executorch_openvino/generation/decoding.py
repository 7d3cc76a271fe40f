"""The decoding loop over any text model that takes (tokens, first position) and returns logits:
plain, and speculative (drafts verified in one call, the rejected positions given back).

The model keeps its own KV cache, as an ExecuTorch program does. Going back is a call at an earlier
position: a program lowered with executorch_openvino forgets the positions from there on (its grown
caches cut back), an eager model's static cache overwrites them. Speculative decoding relies on
that: the last token and k drafts go in one call at the next position, the longest run of drafts the
model itself would have chosen is kept with the token the model chose after it, and the next call
starts right after them. Greedy, its tokens are plain greedy decoding's. Sampling, each position's
token is drawn from the model's distribution there, as plain sampling draws it, and a draft is kept
when the draw is that draft: the first draw that differs is the token chosen there, and is not drawn
again. Every token is thus distributed as in plain sampling, whatever the drafter proposes (for a
deterministic drafter, as lookup and a greedy draft program are, this is speculative sampling's
acceptance rule, min(1, p/q) with q all on the draft). Each token costs one draw either way, so
under one seed, from the same logits, the ids are plain sampling's. A model that returns only the last position's
logits cannot verify drafts and is refused. When to draft and how many tokens a call carries:
draft_schedule.py.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, List, Optional, Protocol, Sequence, Tuple

import numpy as np

from .draft_schedule import DraftSchedule
from .sampling import Sampler, SamplingOptions

# (tokens, first position) -> logits: [n, vocab] for the n tokens given, or [vocab] / [1, vocab] for
# the last one only (ExecuTorch's LLM export unless asked for full logits).
Step = Callable[[Sequence[int], int], np.ndarray]


@dataclass
class TextModel:
    """What the loop needs of a model."""

    step: Step
    context: int  # positions its caches hold
    max_call_tokens: int  # tokens one call takes (a longer prompt goes in pieces)
    all_logits: bool  # whether step returns every position's logits


class Drafter(Protocol):
    """Proposes drafts. A drafter with a true `free_to_ask` attribute (asking costs about nothing,
    as prompt lookup) is asked at plain steps too, and drafts only once its guesses land
    (draft_schedule.py)."""

    def draft(self, history: Sequence[int], limit: int) -> List[int]:
        """Up to `limit` tokens likely to follow `history`."""


@dataclass
class Statistics:
    prompt_tokens: int = 0
    generated: int = 0
    prefill_s: float = 0.0
    decode_s: float = 0.0
    calls: int = 0  # decode calls of the model (fewer than generated tokens when drafts are accepted)
    drafted: int = 0
    accepted: int = 0

    @property
    def acceptance(self) -> Optional[float]:
        return self.accepted / self.drafted if self.drafted else None


@dataclass
class Result:
    tokens: List[int] = field(default_factory=list)  # generated, the stop token excluded
    stopped_by: str = "length"  # "length", "eos", "context" or "stop" (the caller's callback said so)
    # Positions the model holds at the end: the last token chosen is not fed to it, so a next turn
    # starts at `held` with the tokens from there on (that token included).
    held: int = 0
    statistics: Statistics = field(default_factory=Statistics)


def _rows(logits: np.ndarray, count: int) -> np.ndarray:
    """The step's logits as [rows, vocab]: `count` rows, or the last one only."""
    logits = np.asarray(logits, dtype=np.float32)
    logits = logits.reshape(-1, logits.shape[-1])
    return logits if logits.shape[0] == count else logits[-1:]


def prefill(model: TextModel, tokens: Sequence[int], start: int) -> np.ndarray:
    """Feeds `tokens` from position `start` in calls of at most max_call_tokens; the last logits."""
    if not tokens:
        raise ValueError("the prompt is empty")
    if start + len(tokens) > model.context:
        raise ValueError(f"the prompt ends at position {start + len(tokens)}, past the model's context of "
                         f"{model.context} positions")
    return _rows(_feed(model.step, tokens, start, model.max_call_tokens), 1)[-1]


def _feed(step: Step, tokens: Sequence[int], start: int, call_tokens: int):
    """Feeds `tokens` from position `start` in calls of at most `call_tokens`; the last call's logits."""
    for begin in range(0, len(tokens), call_tokens):
        logits = step(list(tokens[begin : begin + call_tokens]), start + begin)
    return logits


def greedy(step: Step, prompt: Sequence[int], *, start: int = 0,
           call_tokens: Optional[int] = None) -> Iterator[Tuple[int, Any]]:
    """Greedy decoding, a token at a time: feeds `prompt` from position `start` (in calls of at most
    `call_tokens` tokens; one call by default), then yields each token it chooses, the first of the
    largest logits of the last position, with the logits it was chosen from (as `step` returned them,
    a torch tensor stays one); asked for the next, it feeds that token at the next position and
    chooses again. Take as many as wanted (itertools.islice): the last token taken is not fed, so the
    model then holds start + len(prompt) + taken - 1 positions. Stopping at an end of sequence or at
    the context is the caller's; generate() is the loop that does both, samples and drafts."""
    if not prompt:
        raise ValueError("the prompt is empty")
    logits = _feed(step, prompt, start, call_tokens or len(prompt))
    position = start + len(prompt)
    while True:
        token = int(np.argmax(_rows(logits, 1)[-1]))
        yield token, logits
        logits = step([token], position)
        position += 1


def generate(model: TextModel, prompt: Sequence[int], max_new_tokens: int, *,
             sampling: SamplingOptions = SamplingOptions(), eos_ids: Iterable[int] = (), start: int = 0,
             history: Sequence[int] = (), drafter: Optional[Drafter] = None, max_draft: int = 5,
             on_token: Optional[Callable[[int], bool]] = None) -> Result:
    """Continues a conversation: `prompt` fed from `start` (the model holds `history`, the
    `start` tokens before it, or is at a new conversation when start is 0), then up to
    max_new_tokens chosen. `on_token(id)` sees each token as it is chosen and returns True to stop.
    With a drafter, decoding is speculative, greedy or sampling."""
    if max_new_tokens < 0:
        raise ValueError("max_new_tokens is negative")
    if len(history) != start:
        raise ValueError(f"the history holds {len(history)} tokens but the prompt starts at position {start}")
    if drafter is not None:
        if not model.all_logits:
            raise ValueError("speculative decoding needs the logits of every position a call is given; this "
                             "program returns the last one's only (export it with full logits: ExecuTorch's "
                             "export_llm with debug.generate_full_logits=true, or an optimum-executorch export)")
        if max_draft < 1:
            raise ValueError("max_draft must be at least 1")
    sampler = Sampler(sampling)
    eos = set(int(i) for i in eos_ids)
    result = Result()
    stats = result.statistics
    conversation = list(history) + list(prompt)
    began = time.perf_counter()
    logits = prefill(model, prompt, start)
    stats.prompt_tokens, stats.prefill_s = len(prompt), time.perf_counter() - began
    began = time.perf_counter()
    position = len(conversation)  # where the next token goes

    def take(token: int) -> bool:
        """Appends a chosen token; whether generation ends with it."""
        if token in eos:
            result.stopped_by = "eos"
            return True
        result.tokens.append(token)
        conversation.append(token)
        if on_token is not None and on_token(token):
            result.stopped_by = "stop"
            return True
        if len(result.tokens) >= max_new_tokens:
            result.stopped_by = "length"
            return True
        if len(conversation) >= model.context:
            result.stopped_by = "context"
            return True
        return False

    if max_new_tokens == 0:
        result.held = position
        return result
    token = sampler.next_token(logits, conversation)
    done = take(token)
    schedule = DraftSchedule(drafter, max_draft) if drafter is not None else None
    while not done:
        drafts, proposed = [], 0
        if schedule is not None:
            span = min(max_draft, max_new_tokens - len(result.tokens), model.context - position - 1,
                       model.max_call_tokens - 1)
            drafts, proposed = schedule.drafts(conversation, span)
        rows = _rows(model.step([token] + drafts, position), 1 + len(drafts))
        stats.calls += 1
        # Drafts the model itself chooses (its sampler's choice, so a penalty applies too); the choice
        # that differs from a draft is the token there, never drawn again (that would favour the draft).
        accepted, differing = 0, None
        for row in rows[:-1] if drafts else ():
            choice = sampler.next_token(row, conversation + drafts[:accepted])
            if choice != drafts[accepted]:
                differing = choice
                break
            accepted += 1
        stats.drafted += proposed
        stats.accepted += min(accepted, proposed)
        if drafts:
            schedule.kept(proposed, accepted)
        position += 1  # the token fed
        for draft in drafts[:accepted]:
            done = take(draft)
            position += 1
            if done:
                break
        if done:
            break
        token = differing if differing is not None else sampler.next_token(rows[accepted if drafts else -1],
                                                                            conversation)
        if schedule is not None and not drafts:
            schedule.chosen(token)
        done = take(token)
    stats.generated = len(result.tokens)
    stats.decode_s = time.perf_counter() - began
    result.held = position
    return result


class DraftModel:
    """Drafts from a second, smaller model with the same vocabulary, greedily. It keeps its own
    conversation: each draft first feeds what it has not seen of the history (going back where the
    target rejected its drafts), then chooses `limit` tokens."""

    def __init__(self, model: TextModel):
        self.model = model
        self._fed: List[int] = []  # the tokens its caches hold, in order

    def forget(self) -> None:
        """Its program's state was changed from outside (a saved state restored): start again."""
        self._fed = []

    def draft(self, history: Sequence[int], limit: int) -> List[int]:
        if limit < 1 or len(history) + limit > self.model.context:
            return []
        common = 0
        for held, wanted in zip(self._fed, history):
            if held != wanted:
                break
            common += 1
        if common == len(history):  # a call needs one token at least: give the last one again
            common -= 1
        chosen = greedy(self.model.step, history[common:], start=common, call_tokens=self.model.max_call_tokens)
        drafts = [token for token, _ in itertools.islice(chosen, limit)]
        self._fed = list(history) + drafts[:-1]
        return drafts


class LookupDrafter:
    """Prompt lookup as a Drafter (generation.drafting.PromptLookup), no second model; asking it
    costs nothing, so the loop may watch its guesses while not drafting (draft_schedule.py)."""

    free_to_ask = True

    def __init__(self, max_ngram: int = 3, min_ngram: int = 1, max_draft: int = 5):
        from .drafting import PromptLookup

        self._lookup = PromptLookup(max_ngram=max_ngram, min_ngram=min_ngram, max_draft=max_draft, chain=True)

    def draft(self, history: Sequence[int], limit: int) -> List[int]:
        return self._lookup.draft(history, limit)
