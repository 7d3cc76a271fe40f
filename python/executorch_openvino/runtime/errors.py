"""Putting the delegate's own message into the exceptions ExecuTorch's Python runtime raises.

ExecuTorch reports a failed load or execute as an error code; the delegate's explanation (which
path it tried, which input was wrong) goes to the log. Once `executorch.runtime` is imported, the
package wraps its `Program.load_method` and `Method.execute` so the exception carries it too.

The wrapped load_method also keeps the Program alive as long as a Method loaded from it: a program
loaded from bytes holds them only in the Python Program object, and a method outliving it would
run over freed memory (`load_program(data).load_method(...)` is an easy way to get there).
"""

from __future__ import annotations

import functools

from . import after_import, library


class DelegateError(RuntimeError):
    """A failure in ExecuTorch's runtime that the OpenVINO delegate explained."""


def _explained(call):
    @functools.wraps(call)
    def wrapper(*args, **kwargs):
        loaded = library.loaded()
        if loaded is not None:
            loaded.clear_last_error()
        try:
            return call(*args, **kwargs)
        except RuntimeError as error:
            detail = loaded.last_error() if loaded is not None else library.load_error()
            if not detail:
                raise
            raise DelegateError(f"{error}\n{detail}") from error

    wrapper._executorch_openvino_wrapped = True  # type: ignore[attr-defined]
    return wrapper


def _keeping_program(load_method):
    @functools.wraps(load_method)
    def wrapper(self, *args, **kwargs):
        method = load_method(self, *args, **kwargs)
        if method is not None:
            # The native program and the bytes it reads, not the Python Program: that one holds
            # its methods, and a reference back would make a cycle that keeps a dropped program
            # (its compiled models and open file) alive until the cycle collector runs.
            method._executorch_openvino_program = (getattr(self, "_program", None), getattr(self, "_data", None))
        return method

    wrapper._executorch_openvino_wrapped = True  # type: ignore[attr-defined]
    return wrapper


def install() -> None:
    """Wraps ExecuTorch's Program.load_method and Method.execute once per process."""
    try:
        from executorch import runtime
    except ImportError:
        return  # reported by library.load()

    if not getattr(runtime.Program.load_method, "_executorch_openvino_wrapped", False):
        runtime.Program.load_method = _keeping_program(_explained(runtime.Program.load_method))
    if not getattr(runtime.Method.execute, "_executorch_openvino_wrapped", False):
        runtime.Method.execute = _explained(runtime.Method.execute)


def install_after_executorch_runtime() -> None:
    """Installs the wrappers as soon as `executorch.runtime` is imported (now, when it is)."""
    after_import.call_after_import("executorch.runtime", install)
