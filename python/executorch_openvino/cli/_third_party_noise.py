"""Hiding the start-up messages other libraries print on our command line, one known message at a
time; ours, the user's model's and every error still show. `-v` turns all of this off.

What is hidden, and how each one reaches the terminal:
  - torchao (imported by ExecuTorch's exporter, which ExecuTorch's Python runtime imports): a
    `logging` warning "Failed to load .../torchao/_C....so" per optional CUDA kernel library
    that a CPU-only torch cannot load; printed by logging's last-resort handler.
  - torch: a `logging` warning of torch/utils/_pytree.py that register_constant() on an Enum is
    deprecated (torchao calls it); printed by torch's own log handler.
  - torch.export: FutureWarning "`isinstance(treespec, LeafSpec)` is deprecated", raised from
    copy.deepcopy inside run_decompositions (every lowering, once per copy); FutureWarning
    "_check_is_size will be removed", raised by ExecuTorch's own Llama (examples/models/llama)
    at every export of it.
  - NNCF (weight compression, --weights): its INFO records (a table of the bit widths it chose),
    printed by its own handler on stdout, and its progress bars, drawn by rich's console, which is
    kept quiet (rich's console is nobody else's here).
  - ExecuTorch's C++ runtime: "[cpuinfo_utils.cpp:N] ..." lines, written straight to file
    descriptor 2 when XNNPACK's thread pool first asks for the CPU's cores; only `native_stderr_filtered`
    (used around that step) removes them, as nothing in Python sees them.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import warnings
from contextlib import contextmanager
from typing import Dict, Iterator, Pattern

# logger name -> the one message of it that is hidden
_LOG_MESSAGES: Dict[str, Pattern[str]] = {
    "torchao": re.compile(r"^Failed to load \S*torchao[/\\]_C\S*\.so\b"),
    "torch.utils._pytree": re.compile(r"is an Enum subclass and is now natively supported by torch\.compile"),
}
_FUTURE_WARNINGS = (r"`isinstance\(treespec, LeafSpec\)` is deprecated", r"_check_is_size will be removed")
_INFO_OF = ("nncf",)  # loggers whose records below WARNING are hidden
NATIVE_CPUINFO_LINE = re.compile(rb"^\[cpuinfo_utils\.cpp:\d+\] ")

hidden = {"count": 0}  # how many messages were hidden in this process (doctor reports it)


class _BelowWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            hidden["count"] += 1
            return False
        return True


class _QuietRich:
    """rich's console quiet inside the block, from whenever rich is imported (NNCF imports it late)."""

    def __init__(self) -> None:
        self.active = False
        self.console = None
        self.was_quiet = False

    def __enter__(self) -> "_QuietRich":
        from ..runtime.after_import import call_after_import

        self.active = True
        call_after_import("rich.console", self._quiet)
        return self

    def _quiet(self) -> None:
        if not self.active or self.console is not None:
            return
        import rich

        self.console = rich.get_console()
        self.was_quiet, self.console.quiet = self.console.quiet, True

    def __exit__(self, *exc) -> None:
        self.active = False
        if self.console is not None:
            self.console.quiet = self.was_quiet


class _KnownMessage(logging.Filter):
    def __init__(self, pattern: Pattern[str]) -> None:
        super().__init__()
        self.pattern = pattern

    def filter(self, record: logging.LogRecord) -> bool:
        if self.pattern.search(record.getMessage()):
            hidden["count"] += 1
            return False
        return True


@contextmanager
def known_messages_hidden() -> Iterator[None]:
    """Hides the known messages inside the block (the command line runs a command in it)."""
    filters = [(logging.getLogger(name), _KnownMessage(pattern)) for name, pattern in _LOG_MESSAGES.items()]
    filters += [(logging.getLogger(name), _BelowWarning()) for name in _INFO_OF]
    with warnings.catch_warnings(), _QuietRich():
        for message in _FUTURE_WARNINGS:
            warnings.filterwarnings("ignore", message=message, category=FutureWarning)
        for logger, known in filters:  # the same logger objects the libraries log through later
            logger.addFilter(known)
        try:
            yield
        finally:
            for logger, known in filters:
                logger.removeFilter(known)


@contextmanager
def native_stderr_filtered(pattern: "re.Pattern[bytes]" = NATIVE_CPUINFO_LINE) -> Iterator[None]:
    """Drops the lines matching `pattern` that native code writes to file descriptor 2 inside the
    block; every other line passes through unchanged, in order, by the end of the block."""
    try:
        sys.stderr.flush()
        original = os.dup(2)
    except (OSError, ValueError):  # no usable descriptor 2 (e.g. an embedding host): nothing to filter
        yield
        return
    read_end, write_end = os.pipe()
    os.dup2(write_end, 2)
    os.close(write_end)

    def forward() -> None:
        pending = b""
        with os.fdopen(read_end, "rb", buffering=0) as source:
            while True:
                chunk = source.read(65536)
                if not chunk:
                    break
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    _pass_or_drop(line + b"\n")
        if pending:
            _pass_or_drop(pending)

    def _pass_or_drop(line: bytes) -> None:
        if pattern.match(line):
            hidden["count"] += 1
        else:
            os.write(original, line)

    reader = threading.Thread(target=forward, name="executorch_openvino-stderr-filter", daemon=True)
    reader.start()
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(original, 2)  # closes the pipe's last write end: the reader sees the end
        reader.join()
        os.close(original)
