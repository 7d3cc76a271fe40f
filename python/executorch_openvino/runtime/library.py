"""Loading libexecutorch_openvino into the process, so that ExecuTorch's Python runtime
(`executorch.runtime`) can run programs lowered to the delegate.

The library registers its backend when it is loaded. It must join the backend registry of
ExecuTorch's shared runtime (`libexecutorch.so`), the one the Python bindings use, and come after
ExecuTorch's own delegates have registered (ours takes the name `OpenvinoBackend` only when no one
holds it), so ExecuTorch's bindings are imported first and the library is then opened with a plain
`ctypes.CDLL`. Importing the package does not import them: `load_after_executorch()` waits until
someone does (see after_import).
"""

from __future__ import annotations

import ctypes
import importlib
import logging
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from . import after_import, openvino_discovery
from ..backend_id import BACKEND_ID

logger = logging.getLogger(__name__)

LIBRARY_VARIABLE = "EXECUTORCH_OPENVINO_LIBRARY"
# Importing it loads libexecutorch.so and registers ExecuTorch's own delegates.
EXECUTORCH_LLM_RUNNER = "executorch.extension.llm.runner"
EXECUTORCH_BINDINGS = "executorch.extension.pybindings.portable_lib"
_LIBRARY_NAME = "executorch_openvino.dll" if sys.platform == "win32" else "libexecutorch_openvino.so"
_PACKAGE_DIR = Path(__file__).resolve().parents[1]  # executorch_openvino/, where the wheel puts lib/


@dataclass
class LoadedLibrary:
    path: Path
    handle: ctypes.CDLL

    def _text(self, function: str) -> str:
        fn = getattr(self.handle, function)
        fn.restype = ctypes.c_char_p
        value = fn()
        return value.decode("utf-8", "replace") if value else ""

    def backend_id(self) -> str:
        return self._text("executorch_openvino_backend_id")

    def last_error(self) -> str:
        return self._text("executorch_openvino_last_error")

    def clear_last_error(self) -> None:
        self.handle.executorch_openvino_clear_last_error()

    def registration_status(self) -> int:
        return int(self.handle.executorch_openvino_registration_status())

    def set_default_runtime_path(self, path: Optional[str]) -> None:
        self.handle.executorch_openvino_set_default_runtime_path(ctypes.c_char_p((path or "").encode()))

    def set_option(self, key: str, value: str) -> int:
        fn = self.handle.executorch_openvino_set_option
        fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        fn.restype = ctypes.c_int
        return int(fn(key.encode(), value.encode()))

    def get_option(self, key: str) -> str:
        fn = self.handle.executorch_openvino_get_option
        fn.argtypes = [ctypes.c_char_p]
        fn.restype = ctypes.c_char_p
        value = fn(key.encode())
        return value.decode("utf-8", "replace") if value else ""

    def option_keys(self) -> list[str]:
        return [key.strip() for key in self._text("executorch_openvino_option_keys").split(",") if key.strip()]

    def describe_compiled_models(self) -> list[dict]:
        """One dict per compiled model alive in the process (see
        executorch_openvino_describe_compiled_models)."""
        models = []
        for line in self._text("executorch_openvino_describe_compiled_models").splitlines():
            fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
            if fields:
                models.append(fields)
        return models

    def describe_runtime(self) -> dict:
        """Loads the OpenVINO runtime if needed; returns configured, loaded, library, version,
        devices and error (see executorch_openvino_describe_runtime)."""
        return self._key_values(self._text("executorch_openvino_describe_runtime"))

    def describe_state_helper(self) -> dict:
        """Loads the OpenVINO runtime and the state helper if needed and probes the helper; returns
        built_for, runtime, path, loaded, works and error (see
        executorch_openvino_describe_state_helper)."""
        return self._key_values(self._text("executorch_openvino_describe_state_helper"))

    @staticmethod
    def _key_values(text: str) -> dict:
        """key=value lines; `error` is always last and may span lines."""
        result: dict = {}
        lines = text.split("\n")
        for i, line in enumerate(lines):
            key, _, value = line.partition("=")
            if key == "error":  # always last, may span lines
                result["error"] = "\n".join([value] + lines[i + 1 :]).strip()
                break
            if key:
                result[key] = value
        return result


# Re-entrant: importing ExecuTorch's bindings inside load() runs load() again from the import hook.
_lock = threading.RLock()
_loaded: Optional[LoadedLibrary] = None
_load_error: Optional[str] = None


def candidate_paths() -> list[Path]:
    """Where the library may be, in order: EXECUTORCH_OPENVINO_LIBRARY; the installed package's
    lib/ folder (the wheel's layout); the build folder of a source checkout."""
    candidates = []
    if os.environ.get(LIBRARY_VARIABLE):
        candidates.append(Path(os.environ[LIBRARY_VARIABLE]))
    candidates.append(_PACKAGE_DIR / "lib" / _LIBRARY_NAME)
    # A source checkout's build tree mirrors the installed layout under build/site/.
    candidates.append(_PACKAGE_DIR.parents[1] / "build" / "site" / "executorch_openvino" / "lib" / _LIBRARY_NAME)
    return candidates


def _configure_openvino(library: LoadedLibrary) -> None:
    """Hands the pip-installed OpenVINO runtime's full path to the library, which opens it only
    when OPENVINO_LIB_PATH is unset at that moment. The variable is never changed here: ExecuTorch's
    own OpenVINO delegate in the same process reads it too (its bindings set it on import), and
    when it is set both delegates open the same runtime."""
    found = openvino_discovery.find_pip_runtime()
    if found is not None:
        library.set_default_runtime_path(str(found))


def load(with_bindings: bool = True) -> Optional[LoadedLibrary]:
    """Loads the library once per process (thread-safe) and returns it, or None when it cannot be
    found or registered; `load_error()` then says why. `with_bindings=False`: without importing
    ExecuTorch's Python bindings first (they bring torch), for a process that runs programs only
    through the generation engine, as a C++ application does (the model worker): the library finds
    ExecuTorch's runtime library by its own search path, and ExecuTorch's delegates are not registered."""
    global _loaded, _load_error
    with _lock:
        if _loaded is not None or _load_error is not None:
            return _loaded
        if with_bindings:
            try:
                importlib.import_module(EXECUTORCH_BINDINGS)  # libexecutorch.so and ExecuTorch's delegates first
            except ImportError as error:
                _load_error = f"ExecuTorch's runtime cannot be imported ({error}). Fix: pip install executorch==1.5.1"
                logger.warning("executorch_openvino: %s", _load_error)
                return None
            if _loaded is not None:  # that import ran load() already (load_after_executorch)
                return _loaded

        tried = []
        for path in candidate_paths():
            if not path.is_file():
                tried.append(f"{path}: no such file")
                continue
            try:
                handle = ctypes.CDLL(str(path))
            except OSError as error:
                tried.append(f"{path}: {error}")
                continue
            library = LoadedLibrary(path, handle)
            status = library.registration_status()
            if status != 0 or library.backend_id() != BACKEND_ID:
                tried.append(f"{path}: registering backend {library.backend_id()} failed (error {status:#x})")
                continue
            _configure_openvino(library)
            _loaded = library
            return _loaded
        _load_error = (
            f"cannot load {_LIBRARY_NAME}; tried:\n  " + "\n  ".join(tried) + "\n"
            f"Fix: build it (make build) or install the executorch-openvino wheel, or set {LIBRARY_VARIABLE} "
            "to its path."
        )
        logger.warning("executorch_openvino: %s", _load_error)
        return None


def load_after_executorch() -> None:
    """Loads the library as soon as ExecuTorch's Python bindings, or its LLM runner's (which link
    the same runtime library), are imported (now, when they are)."""
    after_import.call_after_first_import([EXECUTORCH_BINDINGS, EXECUTORCH_LLM_RUNNER], load)


def backend_library(backend_id: str) -> str:
    """The file of the library whose backend is registered under `backend_id` ("" when none, or
    when this library cannot load)."""
    loaded_library = load()
    if loaded_library is None:
        return ""
    fn = loaded_library.handle.executorch_openvino_backend_library
    fn.argtypes = [ctypes.c_char_p]
    fn.restype = ctypes.c_char_p
    value = fn(backend_id.encode())
    return str(Path(value.decode("utf-8", "replace")).resolve()) if value else ""


def load_error() -> Optional[str]:
    return _load_error


def loaded() -> Optional[LoadedLibrary]:
    return _loaded
