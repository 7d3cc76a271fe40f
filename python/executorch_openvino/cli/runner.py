"""`executorch-openvino-run`: the console script that becomes the C++ runner shipped in the wheel
(executorch_openvino/bin/executorch-openvino-run), passing its arguments through.

The runner is the C++ binary; this is only how it gets onto PATH. pip installs native files only
inside the package, where the binary finds its libraries relative to itself (RUNPATH $ORIGIN), so
the console script replaces itself with it (exec) after importing nothing but this package's light
modules: no torch, no ExecuTorch Python code, no interpreter left underneath while it runs."""

from __future__ import annotations

import os
import sys
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]


def runner_path() -> Path:
    """The runner binary: the installed package's, or a source checkout's build tree."""
    for candidate in (
        _PACKAGE / "bin" / "executorch-openvino-run",
        _PACKAGE.parents[1] / "build" / "site" / "executorch_openvino" / "bin" / "executorch-openvino-run",
    ):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("executorch-openvino-run is not installed with this package (build it: make build)")


def main() -> int:
    try:
        binary = runner_path()
    except FileNotFoundError as error:
        print(f"executorch-openvino-run: {error}", file=sys.stderr)
        return 1
    # Replaces this Python process: the runner's timings then carry no interpreter underneath.
    os.execv(str(binary), [str(binary)] + sys.argv[1:])
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main())
