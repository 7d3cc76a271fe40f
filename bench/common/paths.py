"""Where things are: the checkout, bench/ and its results, the build the benchmarks measure (its
library and binaries), and putting the folders a script imports from on sys.path."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

BENCH = Path(__file__).resolve().parents[1]
REPO = BENCH.parent
PYTHON = REPO / "python"  # the package's source, imported from the checkout
RESULTS = BENCH / "results"  # the reports kept in git: the latest of each kind
QUICK_RESULTS = RESULTS / "quick"  # smoke runs' reports (--quick), never kept

BUILD_VARIABLE = "EXECUTORCH_OPENVINO_BUILD"
LIBRARY_VARIABLE = "EXECUTORCH_OPENVINO_LIBRARY"
# The CMake build folder measured: EXECUTORCH_OPENVINO_BUILD, else the checkout's build/.
BUILD = Path(os.environ.get(BUILD_VARIABLE, REPO / "build"))


def built_library(build: Path = BUILD) -> Path:
    """A build's libexecutorch_openvino.so (its site/ folder mirrors the installed package)."""
    return build / "site" / "executorch_openvino" / "lib" / "libexecutorch_openvino.so"


def built_runner(build: Path = BUILD) -> Path:
    """A build's executorch-openvino-run."""
    return build / "site" / "executorch_openvino" / "bin" / "executorch-openvino-run"


def bench_binary(name: str, build: Path = BUILD) -> Path:
    """A C++ benchmark of a build (bench_zoo_cpp)."""
    return build / "bench" / name


def use_built_library(build: Path = BUILD) -> Optional[str]:
    """Points EXECUTORCH_OPENVINO_LIBRARY (which this process and its children load) at the build's
    library when it is unset and the build has one; returns the library named, or None for the
    package's own search."""
    if not os.environ.get(LIBRARY_VARIABLE):
        built = built_library(build)
        if built.is_file():
            os.environ[LIBRARY_VARIABLE] = str(built)
    return os.environ.get(LIBRARY_VARIABLE) or None


def on_path(*folders: Path) -> None:
    """Puts folders first on sys.path (the first named first), each once."""
    for folder in reversed(folders):
        text = str(folder)
        if text in sys.path:
            sys.path.remove(text)
        sys.path.insert(0, text)
