"""Failures the user can fix from the command line, and the exit status each gives."""

from __future__ import annotations

USAGE_ERROR = 2


class CliError(Exception):
    """A failure the user can fix from the command line; main() prints it without a traceback.
    `code` is the exit status: 2 for a wrong argument, 1 for anything else."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def usage_error(message: str) -> CliError:
    return CliError(message, USAGE_ERROR)
