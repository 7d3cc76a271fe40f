"""The worker protocol's lines, read and written: the JSONL that ExecuTorch's LLM server
(executorch.examples.llm_server, its worker_client.py) speaks with a model worker on stdin/stdout.

Every line from outside is checked here, whole, before anything acts on it: a line that is not a
request of the protocol becomes a ProtocolError naming the field and what it must be, and the worker
answers it with an error line and goes on."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Union

# Error codes the server maps (worker_client.WorkerError.code): capacity refusals become HTTP
# statuses; the others are ours, for a reader of the line.
CAPACITY_EXHAUSTED = "capacity_exhausted"
UNSUPPORTED_SESSION = "unsupported_session"
CONTEXT_LENGTH_EXCEEDED = "context_length_exceeded"
INVALID_REQUEST = "invalid_request"
GENERATION_FAILED = "generation_failed"

SESSION_OPS = {"open": "opened", "close": "closed", "reset": "reset"}
MAX_SESSION_ID = 128  # the server's own bound (serving_chat._SESSION_ID_MAX_LEN)
_UINT64_MAX = (1 << 64) - 1


class ProtocolError(ValueError):
    """A line refused, with the error code its answer carries."""

    def __init__(self, message: str, code: str = INVALID_REQUEST):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class SessionOp:
    op: str  # open, close, reset
    session_id: str


@dataclass(frozen=True)
class Generate:
    # The prompt: text, or segments ({"text": str} or {"ids": [int, ...]}) kept in order.
    segments: Sequence[Union[str, Sequence[int]]]
    max_new_tokens: Optional[int] = None  # None: up to the context
    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int = 0
    seed: Optional[int] = None
    stop: Sequence[str] = field(default_factory=tuple)
    session_id: Optional[str] = None  # None: the scratch session
    cancel_request_id: Optional[int] = None


Request = Union[SessionOp, Generate]


def _number(message: Dict[str, Any], key: str, default: float, low: float, high: float) -> float:
    value = message.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ProtocolError(f"{key} must be a number, not {value!r}")
    if not low <= value <= high:
        raise ProtocolError(f"{key} must be in [{low}, {high}], not {value!r}")
    return float(value)


def _integer(message: Dict[str, Any], key: str, low: int, high: int) -> Optional[int]:
    value = message.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProtocolError(f"{key} must be a whole number, not {value!r}")
    if not low <= value <= high:
        raise ProtocolError(f"{key} must be in [{low}, {high}], not {value!r}")
    return value


def _session_id(message: Dict[str, Any], required: bool) -> Optional[str]:
    value = message.get("session_id")
    if value is None or (value == "" and not required):
        if required:
            raise ProtocolError("session_id is missing")
        return None
    if not isinstance(value, str) or not 0 < len(value) <= MAX_SESSION_ID:
        raise ProtocolError(f"session_id must be a string of 1 to {MAX_SESSION_ID} characters, not {value!r}")
    return value


def _text(value: str, what: str) -> str:
    # JSON can carry lone surrogates ("\ud800"), which are no text: refused here, not by the tokenizer.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ProtocolError(f"{what} holds a lone surrogate (not UTF-8 text)") from None
    return value


def _segments(message: Dict[str, Any], vocab: int) -> List[Union[str, List[int]]]:
    if "prompt_segments" in message and message["prompt_segments"] is not None:
        raw = message["prompt_segments"]
        if not isinstance(raw, list) or not raw:
            raise ProtocolError("prompt_segments must be a non-empty list of {\"text\": ...} or {\"ids\": [...]}")
        segments: List[Union[str, List[int]]] = []
        for index, segment in enumerate(raw):
            if not isinstance(segment, dict) or len(segment) != 1 or not ({"text", "ids"} & segment.keys()):
                raise ProtocolError(f"prompt_segments[{index}] must be {{\"text\": str}} or {{\"ids\": [int, ...]}}, "
                                    f"not {segment!r}"[:300])
            if "text" in segment:
                if not isinstance(segment["text"], str):
                    raise ProtocolError(f"prompt_segments[{index}].text must be a string")
                segments.append(_text(segment["text"], f"prompt_segments[{index}].text"))
            else:
                ids = segment["ids"]
                if not isinstance(ids, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in ids):
                    raise ProtocolError(f"prompt_segments[{index}].ids must be a list of token ids")
                bad = next((i for i in ids if not 0 <= i < vocab), None)
                if bad is not None:
                    raise ProtocolError(f"prompt_segments[{index}].ids holds {bad}, outside the vocabulary "
                                        f"[0, {vocab})")
                segments.append(list(ids))
        return segments
    prompt = message.get("prompt")
    if not isinstance(prompt, str):
        raise ProtocolError("a request needs \"prompt\" (a string) or \"prompt_segments\"")
    return [_text(prompt, "prompt")]


def parse(line: str, vocab: int) -> Request:
    """One line from the server. Raises ProtocolError for anything that is not a request."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as error:
        raise ProtocolError(f"not JSON: {error}") from None
    if not isinstance(message, dict):
        raise ProtocolError(f"a request is a JSON object, not {type(message).__name__}")
    if "op" in message:
        op = message["op"]
        if not isinstance(op, str) or op not in SESSION_OPS:
            raise ProtocolError(f"op must be one of {sorted(SESSION_OPS)}, not {op!r}"[:300])
        return SessionOp(op, _session_id(message, required=True))
    stop = message.get("stop") or []
    if isinstance(stop, str):
        stop = [stop]
    if not isinstance(stop, list) or any(not isinstance(s, str) for s in stop):
        raise ProtocolError("stop must be a list of strings")
    max_new = _integer(message, "max_new_tokens", -1, 1 << 31)
    seed = _integer(message, "seed", -(1 << 63), _UINT64_MAX)
    return Generate(
        segments=_segments(message, vocab),
        max_new_tokens=None if max_new is None or max_new < 0 else max_new,
        temperature=_number(message, "temperature", 0.0, 0.0, 100.0),
        top_p=_number(message, "top_p", 1.0, 0.0, 1.0) or 1.0,  # 0 is "unset" to some clients
        top_k=_integer(message, "top_k", 0, 1 << 31) or 0,
        seed=seed,
        stop=tuple(_text(s, "stop") for s in stop if s),
        session_id=_session_id(message, required=False),
        cancel_request_id=_integer(message, "cancel_request_id", 1, _UINT64_MAX),
    )


def line(message: Dict[str, Any]) -> str:
    """A message as one protocol line (no newline inside: JSON escapes them)."""
    # ASCII only: the server reads the pipe in its locale's encoding, which need not be UTF-8.
    return json.dumps(message, separators=(",", ":")) + "\n"


def error(message: str, code: str) -> Dict[str, Any]:
    return {"error": message, "code": code}
