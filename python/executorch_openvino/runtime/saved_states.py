"""Saved conversation states: the KV caches of a conversation kept under a name and set back later,
so a prefix (a system prompt, a document asked about) is computed once and every conversation that
starts with it continues from there.

A program whose KV caches grow with the conversation (what executorch_openvino makes of an LLM's
caches) starts a new conversation at position 0, continues at the position after the last one it
was given, and goes back when a call starts earlier (regenerate an answer, edit the last turn); that
needs nothing from here. These functions act on every such method loaded in the process, each
keeping its own copy (the library's C entry points executorch_openvino_save_state and friends):

    method.execute([system_prompt_tokens, torch.tensor([0])])
    executorch_openvino.save_state("system")
    ...                                      # a conversation
    executorch_openvino.restore_state("system")
    method.execute([question_tokens, torch.tensor([len(system_prompt_tokens)])])

They need the state helper (libexecutorch_openvino_state, built on Linux beside the library).
"""

from __future__ import annotations

import ctypes

from . import library


class StateError(RuntimeError):
    """No loaded program keeps a state this library controls, or nothing is saved under the name."""


def _call(function: str, name: str) -> int:
    if not isinstance(name, str) or not name:
        raise ValueError("a saved state's name is a non-empty string")
    loaded = library.load()
    if loaded is None:
        raise StateError(f"the executorch_openvino library is not loaded: {library.load_error()}")
    fn = getattr(loaded.handle, function)
    fn.argtypes = [ctypes.c_char_p]
    fn.restype = ctypes.c_int
    loaded.clear_last_error()
    return int(fn(name.encode()))


def save_state(name: str) -> None:
    """Keeps the state of every loaded method whose caches grow under `name` (replacing a state
    saved under it before)."""
    if _call("executorch_openvino_save_state", name) != 0:
        raise StateError(library.loaded().last_error())


def restore_state(name: str) -> None:
    """Sets the state saved under `name` back; the next call continues at the position it was saved at."""
    if _call("executorch_openvino_restore_state", name) != 0:
        raise StateError(library.loaded().last_error())


def forget_state(name: str) -> int:
    """Frees the states saved under `name`; how many methods held one."""
    return _call("executorch_openvino_forget_state", name)
