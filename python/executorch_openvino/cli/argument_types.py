"""argparse types of the commands' arguments: each checks a word without importing torch or
ExecuTorch, so --help and a wrong argument stay fast."""

from __future__ import annotations

from typing import Tuple

from ..runtime.precision import PRECISIONS


def positive(kind):
    """An argparse type: a number of `kind` (int or float) greater than 0."""

    def parse(text: str):
        import argparse

        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{text!r}: must be more than 0")
        return value

    return parse


def option_pair(text: str) -> Tuple[str, str]:
    """argparse type of --option: `KEY=VALUE` (checked here without importing anything; the key and
    value are checked by the library when they are applied)."""
    import argparse

    key, sep, value = text.partition("=")
    if not sep or not key.strip() or not value.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE (e.g. num_threads=4 or device=AUTO)")
    return key.strip(), value.strip()


def precision_word(text: str) -> str:
    """argparse type of --precision: exact or fast, in any case."""
    import argparse

    if text.lower() not in PRECISIONS:
        raise argparse.ArgumentTypeError(f"{text!r}: choose exact (f32, eager's results) or fast (the device's "
                                         "fastest precision)")
    return text.lower()


def precision_pair(text: str) -> Tuple[str, str]:
    """argparse type of run / bench / generate --precision: the --option pair it stands for."""
    return "precision", precision_word(text)
