"""Running a function once a module has been imported: now when it already is, else right after its
import finishes, whoever imports it.

The package needs ExecuTorch's Python bindings before it can load its library, and those import
torch and ExecuTorch's exporter (seconds). Waiting for them instead of importing them keeps
`import executorch_openvino` (and the command line's --help) fast, and gives the same process
whichever of the two packages a program imports first.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import Callable, Dict, List

logger = logging.getLogger(__name__)

_lock = threading.RLock()
_pending: Dict[str, List[Callable[[], None]]] = {}


def _is_imported(name: str) -> bool:
    module = sys.modules.get(name)
    if module is None:
        return False
    spec = getattr(module, "__spec__", None)
    return not getattr(spec, "_initializing", False)


def _run(name: str, callbacks: List[Callable[[], None]]) -> None:
    for callback in callbacks:
        try:
            callback()
        except Exception:  # never break the other package's import because of ours
            logger.warning("executorch_openvino: running %s after importing %s failed", callback.__qualname__, name,
                           exc_info=True)


class _AfterImportFinder:  # a meta path finder (importlib.abc is not imported: it costs start-up time)
    """Finds nothing itself: for a module someone waits for, it asks the other finders for the
    spec and makes the spec's loader run the waiting functions after executing the module."""

    def find_spec(self, name, path, target=None):
        with _lock:
            if name not in _pending:
                return None
        spec = None
        for finder in list(sys.meta_path):
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        execute = spec.loader.exec_module

        def execute_then_call(module) -> None:
            execute(module)  # when this raises, the functions wait for the next attempt
            with _lock:
                callbacks = _pending.pop(name, [])
                if not _pending and _FINDER in sys.meta_path:
                    sys.meta_path.remove(_FINDER)
            _run(name, callbacks)

        # The import machinery makes a loader per spec, so this changes only this import.
        spec.loader.exec_module = execute_then_call
        return spec


_FINDER = _AfterImportFinder()


def call_after_import(name: str, callback: Callable[[], None]) -> None:
    """Calls `callback()` now when module `name` is imported, else right after it is."""
    with _lock:
        if not _is_imported(name):
            _pending.setdefault(name, []).append(callback)
            if _FINDER not in sys.meta_path:
                sys.meta_path.insert(0, _FINDER)
            return
    _run(name, [callback])


def call_after_first_import(names: List[str], callback: Callable[[], None]) -> None:
    """Calls `callback()` once, after whichever of the modules `names` is imported first (now when
    one already is); the others then stop being waited for."""
    with _lock:
        if any(_is_imported(name) for name in names):
            waiting = False
        else:
            waiting = True

            def once() -> None:
                with _lock:
                    for name in names:  # the other modules' entries of this callback
                        entries = _pending.get(name, [])
                        if once in entries:
                            entries.remove(once)
                        if name in _pending and not _pending[name]:
                            del _pending[name]
                    if not _pending and _FINDER in sys.meta_path:
                        sys.meta_path.remove(_FINDER)
                callback()

            once.__qualname__ = callback.__qualname__
            for name in names:
                call_after_import(name, once)
    if not waiting:
        _run(names[0], [callback])


def waiting_for() -> List[str]:
    """The modules some function still waits for (for tests and doctor)."""
    with _lock:
        return sorted(_pending)
