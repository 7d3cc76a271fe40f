"""Finding the pip-installed OpenVINO runtime without importing OpenVINO's Python module.

Importing `openvino` costs time and memory a process that only runs programs does not need, so the
run path only locates the package folder and picks the C library in its `libs/` folder.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Optional

LIB_PATH_VARIABLE = "OPENVINO_LIB_PATH"

_VERSIONED_NAME = re.compile(r"^libopenvino_c\.so((?:\.\d+)*)$")


def _version_key(name: str) -> tuple:
    match = _VERSIONED_NAME.match(name)
    return tuple(int(part) for part in match.group(1).split(".") if part) if match else ()


def openvino_package_dir() -> Optional[Path]:
    """The installed `openvino` package's folder, found without running its __init__."""
    spec = importlib.util.find_spec("openvino")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def c_library_in(folder: Path) -> Optional[Path]:
    """The OpenVINO C library in `folder`: `openvino_c.dll` on Windows, otherwise the
    highest-versioned `libopenvino_c.so*` (pip wheels ship only versioned names)."""
    if sys.platform == "win32":
        candidate = folder / "openvino_c.dll"
        return candidate if candidate.is_file() else None
    if not folder.is_dir():
        return None
    names = [entry.name for entry in folder.iterdir() if _VERSIONED_NAME.match(entry.name)]
    if not names:
        return None
    return folder / max(names, key=_version_key)


def find_pip_runtime() -> Optional[Path]:
    """Full path of the pip-installed OpenVINO C library, or None when openvino is not installed."""
    package = openvino_package_dir()
    return c_library_in(package / "libs") if package is not None else None


def executorch_auto_path() -> Optional[str]:
    """The value ExecuTorch's own Python bindings write into OPENVINO_LIB_PATH when it is unset
    (the first `libopenvino_c.so*` of the openvino package, in sorted order). This package never
    writes the variable; doctor uses this to say where its value likely came from."""
    package = openvino_package_dir()
    if package is None or sys.platform == "win32":
        return None
    names = sorted(str(p) for p in (package / "libs").glob("libopenvino_c.so*"))
    return names[0] if names else None
