"""The generation engine (libexecutorch_openvino_generation, include/executorch_openvino/generation.h)
from Python: programs, conversations on them, and one generation at a time, through the same C
functions the command line and C++ applications use. Nothing is decided here: the loop, the sampler,
speculative decoding, stop strings, whole-character text and constraints are the engine's.

    program = Program.load("model.pte")
    chat = Conversation(program)
    result = chat.generate(prompt_ids, max_new_tokens=64, sampling=SamplingOptions(temperature=0.7, seed=1))

A model that is not a program (an eager PyTorch model in a test) joins through Program.from_step.
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Optional, Sequence

import numpy as np

LIBRARY_NAME = "libexecutorch_openvino_generation.so"

_int64_p = ctypes.POINTER(ctypes.c_int64)
_STEP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, _int64_p, ctypes.c_size_t, ctypes.c_int64,
                         ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_size_t), ctypes.c_char_p,
                         ctypes.c_size_t)
_ON_TOKEN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int64)
_ON_TEXT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_char), ctypes.c_size_t)
_ON_LOGITS = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_float), ctypes.c_size_t)
_DRAFT = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_void_p, _int64_p, ctypes.c_size_t, ctypes.c_size_t, _int64_p)


class _Options(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("max_new_tokens", ctypes.c_size_t),
                ("temperature", ctypes.c_double), ("top_k", ctypes.c_int64), ("top_p", ctypes.c_double),
                ("repetition_penalty", ctypes.c_double), ("has_seed", ctypes.c_int), ("seed", ctypes.c_uint64),
                ("eos_ids", _int64_p), ("eos_count", ctypes.c_size_t), ("lookup", ctypes.c_int),
                ("draft", ctypes.c_void_p), ("max_draft", ctypes.c_size_t), ("drafter", _DRAFT),
                ("drafter_user", ctypes.c_void_p), ("drafter_free_to_ask", ctypes.c_int), ("vocabulary", ctypes.c_void_p),
                ("stop", ctypes.POINTER(ctypes.c_char_p)), ("stop_count", ctypes.c_size_t),
                ("constraint", ctypes.c_void_p), ("on_token", _ON_TOKEN), ("on_text", _ON_TEXT),
                ("user", ctypes.c_void_p), ("on_logits", _ON_LOGITS), ("suppress_ids", _int64_p),
                ("suppress_count", ctypes.c_size_t), ("begin_suppress_ids", _int64_p),
                ("begin_suppress_count", ctypes.c_size_t), ("timestamp_begin", ctypes.c_int64),
                ("no_timestamps_id", ctypes.c_int64), ("timestamp_eos_id", ctypes.c_int64),
                ("timestamp_begin_index", ctypes.c_size_t), ("max_initial_timestamp", ctypes.c_int64),
                ("timestamp_from_probability", ctypes.c_int)]


class _Result(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("generated", ctypes.c_size_t),
                ("prompt_tokens", ctypes.c_size_t), ("reused_tokens", ctypes.c_size_t), ("calls", ctypes.c_size_t),
                ("drafted", ctypes.c_size_t), ("accepted", ctypes.c_size_t), ("prefill_seconds", ctypes.c_double),
                ("decode_seconds", ctypes.c_double), ("stopped_by", ctypes.c_char * 16),
                ("first_token_seconds", ctypes.c_double)]


class GenerationError(RuntimeError):
    """The engine's reason a call failed (its numbers, the option and its range)."""


class GenerationValueError(GenerationError, ValueError):
    """The caller's input was refused: an option out of range, a prompt past the context, ..."""


_lock = threading.Lock()
_library: Optional[ctypes.CDLL] = None


def library() -> ctypes.CDLL:
    """The engine, loaded once, beside the delegate library this package loads (which it links)."""
    global _library
    with _lock:
        if _library is not None:
            return _library
        from ..runtime import library as delegate

        loaded = delegate.load()
        if loaded is None:
            raise GenerationError(delegate.load_error() or "the delegate library cannot be loaded")
        path = Path(loaded.path).parent / LIBRARY_NAME
        if not path.is_file():
            raise GenerationError(f"{path}: no such file (the generation engine is built beside "
                                  f"{Path(loaded.path).name}: make build, or reinstall the wheel)")
        lib = ctypes.CDLL(str(path))
        _declare(lib)
        _library = lib
        return lib


def _declare(lib: ctypes.CDLL) -> None:
    p, c = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
    for name, args, result in (
            ("eov_generation_last_error", [], ctypes.c_char_p),
            ("eov_program_load", [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, c], ctypes.c_int),
            ("eov_program_from_callback", [_STEP, p, ctypes.c_size_t, ctypes.c_int64, ctypes.c_int64, ctypes.c_int, c],
             ctypes.c_int),
            ("eov_program_free", [p], None),
            ("eov_program_load_speech", [ctypes.c_char_p, ctypes.c_char_p, c], ctypes.c_int),
            ("eov_program_encode", [p, ctypes.POINTER(ctypes.c_float), _int64_p, ctypes.c_size_t,
                                    ctypes.POINTER(ctypes.c_float), ctypes.c_size_t], ctypes.c_int),
            ("eov_program_shape", [p, ctypes.c_char_p, _int64_p, ctypes.c_size_t], ctypes.c_size_t),
            ("eov_program_info", [p, ctypes.c_char_p], ctypes.c_int64),
            ("eov_program_eos_ids", [p, _int64_p, ctypes.c_size_t], ctypes.c_size_t),
            ("eov_vocabulary_new", [ctypes.POINTER(ctypes.c_uint32), ctypes.c_char_p, ctypes.c_size_t, c], ctypes.c_int),
            ("eov_vocabulary_from_tokenizer", [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t, c], ctypes.c_int),
            ("eov_vocabulary_free", [p], None),
            ("eov_constraint_free", [p], None),
            ("eov_generation_options_init_size", [ctypes.POINTER(_Options), ctypes.c_size_t], None),
            ("eov_conversation_new", [p, c], ctypes.c_int),
            ("eov_conversation_new_batched", [p, c], ctypes.c_int),
            ("eov_conversation_free", [p], None),
            ("eov_conversation_generate", [p, _int64_p, ctypes.c_size_t, ctypes.POINTER(_Options),
                                           ctypes.POINTER(_Result)], ctypes.c_int),
            ("eov_conversation_tokens", [p, _int64_p, ctypes.c_size_t], ctypes.c_size_t),
            ("eov_conversation_assume", [p, _int64_p, ctypes.c_size_t], ctypes.c_int),
            ("eov_conversation_save", [p, ctypes.c_char_p], ctypes.c_int),
            ("eov_conversation_restore", [p, ctypes.c_char_p], ctypes.c_int),
            ("eov_conversation_write_state", [p, ctypes.c_char_p], ctypes.c_int),
            ("eov_conversation_read_state", [p, ctypes.c_char_p], ctypes.c_int),
            ("eov_conversation_cancel", [p], None)):
        function = getattr(lib, name)
        function.argtypes, function.restype = args, result
    if hasattr(lib, "eov_constraint_new"):
        lib.eov_constraint_new.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                           _int64_p, ctypes.c_size_t, c]
        lib.eov_constraint_new.restype = ctypes.c_int


INVALID_ARGUMENT = 1


def _check(code: int, cause: Optional[BaseException] = None) -> None:
    if code == 0:
        return
    message = library().eov_generation_last_error().decode("utf-8", "replace")
    error = GenerationValueError(message) if code == INVALID_ARGUMENT else GenerationError(message)
    raise error from cause


def _ids(values: Sequence[int]):
    array = (ctypes.c_int64 * len(values))(*[int(v) for v in values])
    return array


@dataclass(frozen=True)
class SamplingOptions:
    """How the next token is chosen (the engine checks the ranges); the defaults choose greedily."""

    temperature: float = 0.0  # 0: greedy, the most probable token
    top_k: int = 0  # 0: off
    top_p: float = 1.0  # 1: off
    repetition_penalty: float = 1.0  # 1: off
    seed: Optional[int] = None  # None: from the operating system's entropy


@dataclass(frozen=True)
class TimestampRule:
    """Whisper's timestamp rules, as transformers' WhisperTimeStampLogitsProcessor applies them after
    the suppressed tokens (the engine does too): timestamps (ids from `timestamp_begin` on) come in
    pairs and never go back, the first token from `begin_index` (the conversation's length there) is
    one, at most `max_initial` after <|0.00|> (None: any), `no_timestamps` is never chosen, after a lone
    timestamp no id below `eos`, and where the timestamps together are likelier than every text token
    one of them is chosen (`from_probability`)."""

    timestamp_begin: int
    no_timestamps: int
    eos: int
    begin_index: int
    max_initial: Optional[int] = None
    from_probability: bool = True


@dataclass
class Statistics:
    prompt_tokens: int = 0  # fed before the first choice
    reused_tokens: int = 0  # of the conversation given, already held by the model
    generated: int = 0
    prefill_s: float = 0.0
    decode_s: float = 0.0
    first_token_s: float = 0.0  # from the call to the first token chosen
    calls: int = 0  # decode calls of the model (fewer than tokens when drafts are accepted)
    drafted: int = 0
    accepted: int = 0

    @property
    def acceptance(self) -> Optional[float]:
        return self.accepted / self.drafted if self.drafted else None


@dataclass
class Result:
    tokens: List[int] = field(default_factory=list)  # generated, an end-of-sequence id excluded
    # length, eos, context, stop (a stop string), callback, cancelled, constraint (its end)
    stopped_by: str = "length"
    text: str = ""  # with a vocabulary: the text handed out, whole characters, up to a stop string
    statistics: Statistics = field(default_factory=Statistics)


class Vocabulary:
    """Each token's bytes, for text (b"" for a special token, which prints nothing)."""

    def __init__(self, token_bytes: Sequence[bytes]):
        lib = library()
        lengths = (ctypes.c_uint32 * len(token_bytes))(*[len(b) for b in token_bytes])
        joined = b"".join(token_bytes)
        handle = ctypes.c_void_p()
        _check(lib.eov_vocabulary_new(lengths, joined, len(token_bytes), ctypes.byref(handle)))
        self._handle, self._free = handle, lib.eov_vocabulary_free
        self.size = len(token_bytes)

    @classmethod
    def from_tokenizer(cls, tokenizer_json: str, size: int) -> "Vocabulary":
        """From a Hugging Face tokenizer.json's text, for a model of `size` tokens (the engine reads
        each token's raw bytes with the grammar library)."""
        lib = library()
        made = cls.__new__(cls)
        handle = ctypes.c_void_p()
        _check(lib.eov_vocabulary_from_tokenizer(tokenizer_json.encode("utf-8"), grammar_library().encode(), size,
                                                 ctypes.byref(handle)))
        made._handle, made._free, made.size = handle, lib.eov_vocabulary_free, size
        return made

    def __del__(self):
        if getattr(self, "_handle", None):
            self._free(self._handle)
            self._handle = None


def grammar_library() -> str:
    """llguidance's C library: the pip package's module, which exports it (opened inside this Python
    process, where its Python symbols resolve)."""
    try:
        import llguidance._lib as compiled
    except ImportError as error:
        raise GenerationError(f"structured output needs llguidance ({error}). Fix: pip install llguidance==1.9.1") from error
    return compiled.__file__


class Constraint:
    """Output held to a grammar: `kind` "json_schema" (a JSON schema, as text or a dict), "regex" or
    "lark"; over the model's tokenizer.json (its text) with the ids that end the output."""

    KINDS = ("json_schema", "regex", "lark")

    def __init__(self, kind: str, grammar, tokenizer_json: str, eos_ids: Sequence[int]):
        import json

        lib = library()
        text = json.dumps(grammar) if isinstance(grammar, dict) else str(grammar)
        handle = ctypes.c_void_p()
        eos = _ids(list(eos_ids))
        _check(lib.eov_constraint_new(kind.encode(), text.encode("utf-8"), tokenizer_json.encode("utf-8"),
                                      grammar_library().encode(), ctypes.cast(eos, _int64_p), len(eos_ids),
                                      ctypes.byref(handle)))
        self._handle, self._free = handle, lib.eov_constraint_free
        self.kind = kind

    def __del__(self):
        if getattr(self, "_handle", None):
            self._free(self._handle)
            self._handle = None


class Program:
    """A language-model program (or a model behind a Python step function) the engine drives."""

    def __init__(self, handle: ctypes.c_void_p, keep=None):
        self._lib = library()
        self._handle = handle
        self._keep = keep  # the step callback, alive as long as the program
        info = lambda key: int(self._lib.eov_program_info(handle, key.encode()))  # noqa: E731
        self.vocab, self.context = info("vocab"), info("context")
        self.max_call_tokens, self.all_logits = info("max_call_tokens"), bool(info("all_logits"))
        bos = info("bos")
        self.bos_id: Optional[int] = bos if bos >= 0 else None
        count = info("eos_count")
        ids = (ctypes.c_int64 * max(count, 1))()
        self._lib.eov_program_eos_ids(handle, ids, count)
        self.eos_ids: List[int] = list(ids[:count])

    def batch_counts(self) -> dict:
        """What its batched conversations did: calls made, those carrying more than one conversation
        ("shared"), and conversations' steps carried ("sequences")."""
        info = lambda key: int(self._lib.eov_program_info(self._handle, key.encode()))  # noqa: E731
        return {"calls": info("batch_calls"), "shared": info("batch_calls_shared"),
                "sequences": info("batch_sequences")}

    @classmethod
    def load(cls, pte, data=None, method: str = "forward") -> "Program":
        """Loads `pte` (its weights from `data`, a .ptd, when kept apart). Raises GenerationValueError
        naming the file and why it is not a language-model program."""
        lib = library()
        handle = ctypes.c_void_p()
        _check(lib.eov_program_load(str(pte).encode(), str(data).encode() if data else None, method.encode(),
                                    ctypes.byref(handle)))
        return cls(handle)

    @classmethod
    def load_speech(cls, pte, data=None) -> "Program":
        """A speech-recognition program (optimum-executorch's Whisper export: methods `encoder` and
        `text_decoder`): encode() a window, then generate its text with a Conversation."""
        lib = library()
        handle = ctypes.c_void_p()
        _check(lib.eov_program_load_speech(str(pte).encode(), str(data).encode() if data else None,
                                           ctypes.byref(handle)))
        program = cls(handle)
        start = int(lib.eov_program_info(handle, b"start_token"))
        program.start_token = start if start >= 0 else None
        program.feature_shape, program.states_shape = program._shape("features"), program._shape("states")
        return program

    def _shape(self, which: str) -> tuple:
        dims = (ctypes.c_int64 * 8)()
        rank = self._lib.eov_program_shape(self._handle, which.encode(), dims, 8)
        return tuple(dims[:rank])

    def encode(self, features) -> np.ndarray:
        """Runs a speech program's encoder on one window's features (float32, feature_shape) and
        gives its states to the decoder calls that follow (a conversation's next generation starts
        again at position 0); returns a copy of the states."""
        features = np.ascontiguousarray(np.asarray(features, dtype=np.float32))
        states = np.empty(self.states_shape, dtype=np.float32)
        shape = _ids(features.shape)
        _check(self._lib.eov_program_encode(self._handle, features.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                            shape, features.ndim,
                                            states.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), states.size))
        return states

    @classmethod
    def from_step(cls, step: Callable, vocab: int, context: int, max_call_tokens: Optional[int] = None,
                  all_logits: bool = True) -> "Program":
        """A model behind `step(tokens, position)`, which returns logits: a row per token given, or
        the last one's (numpy or torch, any leading shape)."""
        lib = library()
        failures: List[BaseException] = []

        def call(_user, tokens, count, position, out, rows, error, error_size):
            try:
                logits = step([tokens[i] for i in range(count)], int(position))
                if hasattr(logits, "detach"):
                    logits = logits.detach().float().cpu().numpy()
                logits = np.ascontiguousarray(np.asarray(logits, dtype=np.float32).reshape(-1, vocab))
                if logits.shape[0] not in (1, count):
                    logits = np.ascontiguousarray(logits[-1:])
                ctypes.memmove(out, logits.ctypes.data, logits.nbytes)
                rows[0] = logits.shape[0]
                return 0
            except BaseException as caught:  # noqa: BLE001  (handed back to the caller, never lost)
                failures.append(caught)
                text = f"{type(caught).__name__}: {caught}".encode("utf-8", "replace")[: error_size - 1]
                ctypes.memmove(error, text + b"\0", len(text) + 1)
                return 1

        callback = _STEP(call)
        handle = ctypes.c_void_p()
        _check(lib.eov_program_from_callback(callback, None, vocab, context, max_call_tokens or context,
                                             int(all_logits), ctypes.byref(handle)))
        program = cls(handle, keep=(callback, failures))
        return program

    def _step_failure(self) -> Optional[BaseException]:
        if self._keep is None or not self._keep[1]:
            return None
        return self._keep[1].pop()

    def __del__(self):
        if getattr(self, "_handle", None):
            self._lib.eov_program_free(self._handle)
            self._handle = None


class Conversation:
    """A conversation on a program: the tokens its caches hold. generate() is given the whole
    conversation so far (what it holds, then the new turn) and feeds only what the program does not
    hold yet: continuing, going back and reusing a prefix are all this."""

    def __init__(self, program: Program, *, batched: bool = False):
        """`batched`: a conversation whose generations run together with the program's other batched
        conversations' that run at the same time in other threads, their steps in one call
        (continuous batching; docs/generation.md#several-conversations-at-once). Its caches are its
        own; it keeps no saved states or state files and drafts nothing."""
        self.program = program
        handle = ctypes.c_void_p()
        new = program._lib.eov_conversation_new_batched if batched else program._lib.eov_conversation_new
        _check(new(program._handle, ctypes.byref(handle)))
        self._handle = handle

    @property
    def tokens(self) -> List[int]:
        """What the conversation holds, then the last token chosen."""
        lib = self.program._lib
        count = lib.eov_conversation_tokens(self._handle, None, 0)
        out = (ctypes.c_int64 * max(count, 1))()
        lib.eov_conversation_tokens(self._handle, out, count)
        return list(out[:count])

    def generate(self, conversation: Sequence[int], max_new_tokens: int = 128, *,
                 sampling: SamplingOptions = SamplingOptions(), eos_ids: Optional[Sequence[int]] = None,
                 lookup: bool = False, draft: Optional[Program] = None, max_draft: int = 5,
                 drafter: Optional[Callable[[List[int], int], Sequence[int]]] = None, drafter_free_to_ask: bool = False,
                 vocabulary: Optional[Vocabulary] = None, stop: Sequence[str] = (), constraint=None,
                 on_token: Optional[Callable[[int], bool]] = None,
                 on_text: Optional[Callable[[str], bool]] = None,
                 on_logits: Optional[Callable[[np.ndarray], bool]] = None,
                 suppress: Sequence[int] = (), begin_suppress: Sequence[int] = (),
                 timestamps: Optional[TimestampRule] = None) -> Result:
        """Continues with `conversation` (all its tokens so far), then up to max_new_tokens chosen.
        `on_token(id)` and `on_text(text)` (whole characters) see them as they come and return True
        to stop; `on_logits(row)` sees a copy of the logits each token is chosen from (the program's,
        before filters and masks). Speculative decoding drafts by prompt `lookup`, a `draft` program, or `drafter(history,
        limit)`, one of your own (`drafter_free_to_ask`: asking it costs about nothing, so it is probed
        at every plain step, as lookup is). `suppress`: ids never chosen; `begin_suppress`: ids not
        chosen as the first token after the prompt (transformers' suppress_tokens and
        begin_suppress_tokens); `timestamps`: Whisper's timestamp rules after them. Raises GenerationValueError for input the engine refuses,
        GenerationError when the program fails; an exception of a callback is raised as it was."""
        lib = self.program._lib
        if max_new_tokens < 0:
            raise GenerationValueError(f"max_new_tokens must be 0 or more, not {max_new_tokens}")
        options = _Options()
        lib.eov_generation_options_init_size(ctypes.byref(options), ctypes.sizeof(options))
        options.max_new_tokens = max_new_tokens
        if isinstance(sampling.top_k, bool) or int(sampling.top_k) != sampling.top_k:
            raise GenerationValueError(f"top_k must be a whole number, 0 (off) or more, not {sampling.top_k!r}")
        options.temperature, options.top_k = float(sampling.temperature), int(sampling.top_k)
        options.top_p, options.repetition_penalty = float(sampling.top_p), float(sampling.repetition_penalty)
        if sampling.seed is not None:
            options.has_seed, options.seed = 1, int(sampling.seed) & 0xFFFFFFFFFFFFFFFF
        keep = []  # what the options point at, alive during the call
        if eos_ids is not None:
            eos = _ids(list(eos_ids))
            keep.append(eos)
            options.eos_ids, options.eos_count = ctypes.cast(eos, _int64_p), len(eos_ids)
        options.lookup = int(lookup)
        options.draft = draft._handle if draft is not None else None
        keep.append(draft)
        options.max_draft = max_draft
        if vocabulary is not None:
            options.vocabulary = vocabulary._handle
        if isinstance(stop, (str, bytes)):
            raise TypeError(f"stop is a sequence of stop strings, not a string ({stop!r}): give [{stop!r}]")
        if any(not isinstance(s, str) or not s for s in stop):
            raise GenerationValueError(f"stop strings must be non-empty strings, not {list(stop)!r}")
        if stop:
            strings = (ctypes.c_char_p * len(stop))(*[s.encode("utf-8") for s in stop])
            keep.append(strings)
            options.stop, options.stop_count = strings, len(stop)
        if constraint is not None:
            options.constraint = constraint._handle
        for name, ids in (("suppress", suppress), ("begin_suppress", begin_suppress)):
            if ids is not None and len(ids):
                array = _ids(list(ids))
                keep.append(array)
                setattr(options, f"{name}_ids", ctypes.cast(array, _int64_p))
                setattr(options, f"{name}_count", len(array))
        if timestamps is not None:
            options.timestamp_begin, options.no_timestamps_id = int(timestamps.timestamp_begin), int(timestamps.no_timestamps)
            options.timestamp_eos_id, options.timestamp_begin_index = int(timestamps.eos), int(timestamps.begin_index)
            options.max_initial_timestamp = -1 if timestamps.max_initial is None else int(timestamps.max_initial)
            options.timestamp_from_probability = int(bool(timestamps.from_probability))
        result = Result()
        pieces: List[str] = []
        raised: List[BaseException] = []

        def drafted(_user, history, count, limit, out):
            try:
                proposal = list(drafter([history[i] for i in range(count)], int(limit)))[:limit]
                for i, token in enumerate(proposal):
                    out[i] = int(token)
                return len(proposal)
            except BaseException as caught:  # noqa: BLE001
                raised.append(caught)
                return 0

        if drafter is not None:
            options.drafter, options.drafter_free_to_ask = _DRAFT(drafted), int(drafter_free_to_ask)
            keep.append(options.drafter)

        def token_seen(_user, token):
            try:
                result.tokens.append(int(token))
                return int(bool(on_token(int(token)))) if on_token is not None else 0
            except BaseException as caught:  # noqa: BLE001
                raised.append(caught)
                return 1

        def text_seen(_user, data, length):
            try:
                text = ctypes.string_at(data, length).decode("utf-8")
                pieces.append(text)
                return int(bool(on_text(text))) if on_text is not None else 0
            except BaseException as caught:  # noqa: BLE001
                raised.append(caught)
                return 1

        def logits_seen(_user, row, vocab):
            try:
                return int(bool(on_logits(np.ctypeslib.as_array(row, shape=(vocab,)).copy())))
            except BaseException as caught:  # noqa: BLE001
                raised.append(caught)
                return 1

        options.on_token = _ON_TOKEN(token_seen)
        if on_logits is not None:
            options.on_logits = _ON_LOGITS(logits_seen)
        if vocabulary is not None:
            options.on_text = _ON_TEXT(text_seen)
        given = _ids(conversation)
        done = _Result()
        done.struct_size = ctypes.sizeof(done)
        code = lib.eov_conversation_generate(self._handle, given, len(conversation), ctypes.byref(options),
                                             ctypes.byref(done))
        if raised:
            raise raised[0]
        failure = self.program._step_failure()
        if code != 0 and failure is not None:
            _check(code, failure)
        _check(code)
        result.stopped_by = done.stopped_by.decode()
        result.text = "".join(pieces)
        result.statistics = Statistics(prompt_tokens=done.prompt_tokens, reused_tokens=done.reused_tokens,
                                       generated=done.generated, prefill_s=done.prefill_seconds,
                                       decode_s=done.decode_seconds, first_token_s=done.first_token_seconds,
                                       calls=done.calls, drafted=done.drafted,
                                       accepted=done.accepted)
        return result

    def assume(self, tokens: Sequence[int]) -> None:
        """The program's caches hold `tokens`, fed outside this conversation: continue from them."""
        _check(self.program._lib.eov_conversation_assume(self._handle, _ids(tokens), len(tokens)))

    def save(self, name: str) -> None:
        """Keeps the program's state under `name` (the delegate's saved states; restore() starts from it)."""
        _check(self.program._lib.eov_conversation_save(self._handle, name.encode()))

    def restore(self, name: str) -> None:
        _check(self.program._lib.eov_conversation_restore(self._handle, name.encode()))

    def write_state(self, path) -> None:
        """Writes what the conversation holds (its tokens and the program's caches for them) to `path`,
        for read_state() in this process or another (docs/serving.md#state-files)."""
        _check(self.program._lib.eov_conversation_write_state(self._handle, str(path).encode()))

    def read_state(self, path) -> None:
        """Continues from a state written by write_state(). Raises GenerationValueError, changing
        nothing, for a file that is truncated or damaged, or written by another program or options."""
        _check(self.program._lib.eov_conversation_read_state(self._handle, str(path).encode()))

    def cancel(self) -> None:
        """Ends the running generation at its next token (from another thread)."""
        self.program._lib.eov_conversation_cancel(self._handle)

    def __del__(self):
        if getattr(self, "_handle", None):
            self.program._lib.eov_conversation_free(self._handle)
            self._handle = None


def greedy(step: Callable, prompt: Sequence[int], count: int, *, start: int = 0,
           call_tokens: Optional[int] = None, context: int = 1 << 30) -> List[int]:
    """`count` greedy tokens after `prompt` through `step(tokens, position)` (a model keeping its own
    caches, as a program does), by the engine: the prompt fed from position `start` (in calls of at
    most `call_tokens`; one by default), each chosen token but the last fed after it. For tests and
    benchmarks that compare a model's logits call by call (record them in `step`)."""
    if not prompt:
        raise GenerationValueError("the prompt is empty")
    first = step(list(prompt[: call_tokens or len(prompt)]), start)
    if hasattr(first, "detach"):
        first = first.detach().float().cpu().numpy()
    first = np.asarray(first, dtype=np.float32)
    vocab = first.shape[-1]
    cached = [first]

    def replayed(tokens, position):  # the first call was made above, to learn the vocabulary
        return cached.pop() if cached else step(tokens, position)

    program = Program.from_step(replayed, vocab, context, call_tokens or max(len(prompt), 1))
    history = [0] * start  # positions the model holds already (never fed again: reused)
    chat = Conversation(program)
    if start:
        chat.assume(history)
    return chat.generate(list(history) + list(prompt), count, eos_ids=[]).tokens
