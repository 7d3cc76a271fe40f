"""executorch-openvino-worker: the model worker ExecuTorch's OpenAI-compatible server spawns
(python -m executorch.examples.llm_server.python.server --worker-bin ...), on the generation engine.

It speaks the server's JSONL protocol on stdin/stdout (protocol.py): a ready line, then one request at
a time: generate (streamed text pieces, then a done line with usage and warm-resume counts), open,
close and reset of named sessions (sessions.py), errors with codes. Cancellation arrives on an
inherited pipe (cancellation.py). Only protocol lines reach the server's pipe: the descriptor is
taken over at start and whatever else writes to standard output (a native library's log) goes to
standard error."""

from __future__ import annotations

import argparse
import logging
import os
import select
import signal
import sys
import time
from pathlib import Path
from typing import IO, List, Optional

from .cancellation import Cancellation
from .protocol import (CONTEXT_LENGTH_EXCEEDED, GENERATION_FAILED, INVALID_REQUEST, SESSION_OPS, Generate,
                       ProtocolError, SessionOp, error, line, parse)

log = logging.getLogger("executorch_openvino.worker")
MAX_LINE = 64 << 20  # bytes; a longer line is refused, not read into memory
DEFAULT_SESSIONS = 8
# Why generation ended, in the protocol's two words: the engine's reasons.
_FINISH = {"eos": "stop", "stop": "stop", "constraint": "stop", "callback": "stop", "cancelled": "stop",
           "length": "length", "context": "length"}


def _arguments(argv: Optional[List[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="executorch-openvino-worker",
        description="The model worker of ExecuTorch's OpenAI-compatible LLM server, for programs lowered to "
        "executorch_openvino (docs/serving.md). Reads requests on standard input, one JSON object a line.")
    # The server passes these two with underscores; dashes are accepted as well.
    parser.add_argument("--model_path", "--model-path", dest="model", required=True, help="the .pte")
    parser.add_argument("--tokenizer_path", "--tokenizer-path", dest="tokenizer", required=True,
                        help="the model's tokenizer.json, or the folder holding it")
    parser.add_argument("--data", help="the .ptd holding the program's weights, when they are kept apart")
    parser.add_argument("--max-sessions", type=int, default=DEFAULT_SESSIONS,
                        help=f"named sessions hosted at once, each with its own caches (default {DEFAULT_SESSIONS})")
    parser.add_argument("--state-dir", help="keep named sessions' states in this folder: written when a session "
                        "closes and when the worker stops, read back when it opens again")
    args = parser.parse_args(argv)
    if args.max_sessions < 0:
        parser.error("--max-sessions must be 0 or more")
    return args


def _protocol_stream() -> IO[str]:
    """The server's pipe as our own stream; descriptor 1 then points at standard error."""
    sys.stdout.flush()
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", encoding="ascii", buffering=1)


def _tokenizer_file(path: Path) -> Path:
    file = path / "tokenizer.json" if path.is_dir() else path
    if file.suffix != ".json" or not file.is_file():
        raise ValueError(f"{path}: the worker reads a Hugging Face tokenizer.json (or the folder holding it)")
    return file


class Worker:
    def __init__(self, args: argparse.Namespace, out: IO[str]):
        from tokenizers import Tokenizer

        from ..runtime import library

        # The engine runs the program as a C++ application would: no ExecuTorch Python bindings, so no
        # torch in this process (a few hundred MB, and seconds at start).
        if library.load(with_bindings=False) is None:
            raise RuntimeError(library.load_error())

        from ..generation.engine import Vocabulary
        from .sessions import SessionTable

        self.out = out
        tokenizer_json = _tokenizer_file(Path(args.tokenizer))
        self.sessions = SessionTable(Path(args.model), Path(args.data) if args.data else None, args.max_sessions,
                                     Path(args.state_dir) if args.state_dir else None)
        program = self.sessions.program
        text = tokenizer_json.read_text(encoding="utf-8")
        self.tokenizer = Tokenizer.from_str(text)
        size = self.tokenizer.get_vocab_size(with_added_tokens=True)
        if size > program.vocab:
            raise ValueError(f"{tokenizer_json} has {size} tokens but {args.model} has a vocabulary of "
                             f"{program.vocab}: the tokenizer is another model's")
        self.vocabulary = Vocabulary.from_tokenizer(text, program.vocab)
        self.cancellation = Cancellation.from_environment()

    def send(self, message: dict) -> None:
        self.out.write(line(message))

    def ready(self) -> None:
        self.send({"ready": True, "max_named_sessions": self.sessions.max_named,
                   "supports_cancel": self.cancellation.supported})

    def handle(self, raw: bytes) -> None:
        try:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as failure:
                raise ProtocolError(f"not UTF-8: {failure}") from None
            request = parse(text, self.sessions.program.vocab)
            if isinstance(request, SessionOp):
                getattr(self.sessions, request.op)(request.session_id)
                self.send({SESSION_OPS[request.op]: True})
            else:
                self.generate(request)
        except ProtocolError as refused:
            self.send(error(str(refused), refused.code))
        except Exception as failure:  # noqa: BLE001  (one request failed; the worker and its sessions go on)
            log.exception("a request failed")
            self.send(error(f"{type(failure).__name__}: {failure}", GENERATION_FAILED))

    def _ids(self, request: Generate) -> List[int]:
        ids: List[int] = []
        for segment in request.segments:
            if isinstance(segment, str):
                # The server renders the chat template itself: the text carries its special tokens.
                ids += self.tokenizer.encode(segment, add_special_tokens=False).ids
            else:
                ids += segment
        return ids

    def generate(self, request: Generate) -> None:
        from ..generation.engine import GenerationError, GenerationValueError, SamplingOptions

        ids = self._ids(request)
        context = self.sessions.program.context
        if not ids:
            raise ProtocolError("the prompt is empty")
        if len(ids) >= context:
            raise ProtocolError(f"the prompt has {len(ids)} tokens and the program's context holds {context}: "
                                "no room for a token after it", CONTEXT_LENGTH_EXCEEDED)
        session = self.sessions.get(request.session_id)  # after the checks: a refused request admits nothing
        reason = session.resume_reason(ids)
        if session.dirty:
            session.reset()
        sampling = SamplingOptions(temperature=request.temperature, top_k=request.top_k, top_p=request.top_p,
                                   seed=None if request.seed is None else request.seed & 0xFFFFFFFFFFFFFFFF)
        max_new = context if request.max_new_tokens is None else request.max_new_tokens
        started = time.perf_counter()
        self.cancellation.begin(request.cancel_request_id, session.conversation.cancel)
        try:
            result = session.conversation.generate(
                ids, max_new, sampling=sampling, vocabulary=self.vocabulary, stop=list(request.stop),
                on_text=lambda piece: self.send({"token": piece}) and False)
        except GenerationValueError as refused:
            raise ProtocolError(str(refused)) from None
        except GenerationError as failure:
            session.dirty = True
            self.send(error(f"generation failed: {failure}", GENERATION_FAILED))
            return
        finally:
            cancelled = self.cancellation.end()
        total = time.perf_counter() - started
        statistics = result.statistics
        prefilled = len(ids) - statistics.reused_tokens
        cancelled = cancelled or result.stopped_by == "cancelled"
        self.send({
            "done": True,
            "prompt_tokens": len(ids),
            "completion_tokens": statistics.generated,
            "finish_reason": _FINISH.get(result.stopped_by, "stop"),
            "stopped_by": result.stopped_by,
            "reused_prompt_tokens": statistics.reused_tokens,
            "prefilled_prompt_tokens": prefilled,
            "session_reset_reason": reason,
            "prefill_ms": statistics.prefill_s * 1e3,
            "decode_ms": statistics.decode_s * 1e3,
            "total_ms": total * 1e3,
            "prefill_tok_s": prefilled / statistics.prefill_s if statistics.prefill_s > 0 else 0.0,
            "decode_tok_s": statistics.generated / statistics.decode_s if statistics.decode_s > 0 else 0.0,
            "cancelled": cancelled,
            # The turn's exact ids, which the server splices into the next prompt; none when the text
            # was cut (a stop string, a cancellation): the ids would then say more than the text.
            "generated_token_ids": [] if cancelled or result.stopped_by == "stop" else result.tokens,
        })


def main(argv: Optional[List[str]] = None) -> int:
    args = _arguments(argv)
    out = _protocol_stream()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="executorch-openvino-worker: %(message)s")
    try:
        worker = Worker(args, out)
    except Exception as failure:  # noqa: BLE001  (the server shows the line; the reason stays whole)
        log.error("cannot start: %s", failure)
        out.write(line(error(f"cannot start: {failure}", INVALID_REQUEST)))
        return 1
    lines = _Lines(sys.stdin.fileno())
    worker.ready()
    log.info("ready: %s, %d named sessions at most", args.model, args.max_sessions)
    try:
        while True:
            raw = lines.next()
            if raw is None:
                return 0
            if len(raw) > MAX_LINE:
                worker.send(error(f"a request line is longer than the {MAX_LINE} bytes this worker reads",
                                  INVALID_REQUEST))
            elif raw.strip():
                worker.handle(raw)
    except (BrokenPipeError, _Stopped):  # the server went away, or stopped us
        return 0
    finally:
        worker.sessions.persist_all()


class _Lines:
    """Request lines from a descriptor, waiting in select() beside a wake-up pipe: the server stops
    its worker with SIGTERM, which any thread may receive; a main thread blocked in read() would never
    run the handler, so the signal's byte on the pipe wakes it instead. A line longer than MAX_LINE is
    returned cut (its length says so) and the rest of it skipped."""

    def __init__(self, fd: int):
        self._fd, self._pending, self._skipping = fd, b"", False
        self._wake_read, wake_write = os.pipe()
        os.set_blocking(wake_write, False)
        signal.set_wakeup_fd(wake_write)
        signal.signal(signal.SIGTERM, _stop)
        # A worker started from a thread that blocks SIGTERM inherits the mask: unblock it here.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})

    def next(self) -> Optional[bytes]:
        while True:
            end = self._pending.find(b"\n")
            if end >= 0:
                line, self._pending = self._pending[: end + 1], self._pending[end + 1 :]
                if self._skipping:
                    self._skipping = False
                    continue
                return line
            if len(self._pending) > MAX_LINE and not self._skipping:
                line, self._pending, self._skipping = self._pending, b"", True
                return line
            if self._skipping:
                self._pending = b""
            ready, _, _ = select.select([self._fd, self._wake_read], [], [])
            if self._wake_read in ready:
                os.read(self._wake_read, 512)  # the handler runs as this returns to Python
            if self._fd in ready:
                chunk = os.read(self._fd, 1 << 20)
                if not chunk:  # the server closed our input: its last line, if unterminated, then the end
                    last, self._pending = (None if self._skipping else self._pending or None), b""
                    self._skipping = False
                    return last
                self._pending += chunk


class _Stopped(BaseException):
    """SIGTERM: a BaseException, so that no handler of a request's failures takes it for one."""


def _stop(signum, frame):
    raise _Stopped()


if __name__ == "__main__":
    sys.exit(main())
