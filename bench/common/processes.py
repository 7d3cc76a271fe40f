"""Child processes: the environment they get (this one's, with changes), a Python script run in a
fresh interpreter, and the JSON line a child prints as its result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional, Union

Value = Optional[Union[str, Path]]


def child_env(**changes: Value) -> Dict[str, str]:
    """This process's environment with `changes`: a variable given None is removed, any other value set."""
    env = dict(os.environ)
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = str(value)
    return env


def run_python(script: Path, *args: object, env: Optional[Dict[str, str]] = None, timeout: Optional[float] = None,
               check: bool = False, capture: bool = True) -> subprocess.CompletedProcess:
    """`script` with `args` in a fresh interpreter (this one's), its output captured as text."""
    return subprocess.run([sys.executable, str(script), *map(str, args)], capture_output=capture, text=True, env=env,
                          timeout=timeout, check=check)


def last_json(text: str) -> dict:
    """The last line of a child's output that is a JSON object (its result; log lines may precede it)."""
    lines = [line for line in text.splitlines() if line.startswith("{")]
    if not lines:
        raise ValueError(f"no JSON line in the output: {text.strip()[-300:]!r}")
    return json.loads(lines[-1])
