"""Driving bench_zoo_cpp (zoo_cpp.cpp), the zoo's C++ side: a server process per model whose
variants zoo.py times block by block between its Python variants, and one fresh process per load."""

from __future__ import annotations

import json
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

from common.processes import child_env, last_json

CACHE_VARIABLE = "EXECUTORCH_OPENVINO_CACHE_DIR"


class ChildFailed(RuntimeError):
    """A child process failed; `crashed` when a signal ended it (then `signal_name` says which)."""

    def __init__(self, what: str, returncode: int, output: str):
        self.returncode = returncode
        self.crashed = returncode < 0
        self.signal_name = signal.Signals(-returncode).name if self.crashed else ""
        how = f"crashes (signal {-returncode}, {self.signal_name})" if self.crashed else f"exits with {returncode}"
        super().__init__(f"{what} {how}: {output.strip()[-600:]}")
        self.how = how


def child_environment(cache: Optional[Path] = None) -> Dict[str, str]:
    """This process's environment for a child, with the delegate's model cache at `cache` or none."""
    return child_env(**{CACHE_VARIABLE: cache})


def _without_logs(text: str) -> str:
    """ExecuTorch's log lines ("I 00:00:00.04 executorch:...") are not what a failure is about."""
    return "\n".join(line for line in text.splitlines() if not line.startswith(("I ", "D ")))


class CppServer:
    """bench_zoo_cpp serve: loads the variants once, then times blocks of calls on request."""

    def __init__(self, tool: Path, folder: Path, variants: List[str]):
        self._stderr = tempfile.TemporaryFile("w+")
        self.process = subprocess.Popen([str(tool), "serve", str(folder), "--variants", ",".join(variants)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                        text=True, bufsize=1, env=child_environment())
        ready = self._read("loading")
        if "error" in ready:
            self.close()
            raise RuntimeError(f"bench_zoo_cpp could not load the variants: {ready['error']}")
        self.load_ms = ready.get("load_ms", {})
        self.failed = ready.get("failed", {})  # variant -> why it could not be loaded
        # The library that runs programs of ExecuTorch's own OpenVINO delegate in this process.
        self.openvino_backend_holder = ready.get("openvino_backend_holder", "unknown")

    def _read(self, doing: str) -> dict:
        line = self.process.stdout.readline()
        if not line:
            code = self.process.wait()
            self._stderr.seek(0)
            raise ChildFailed(f"bench_zoo_cpp serve ({doing})", code, _without_logs(self._stderr.read()))
        return json.loads(line)

    def _ask(self, command: str) -> dict:
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        answer = self._read(command)
        if "error" in answer:
            raise RuntimeError(f"bench_zoo_cpp: {answer['error']}")
        return answer

    def time(self, variant: str, calls: int) -> List[float]:
        """Milliseconds of each of `calls` calls."""
        return [ns / 1e6 for ns in self._ask(f"time {variant} {calls}")["ns"]]

    def allocations(self, variant: str, calls: int) -> dict:
        return self._ask(f"allocs {variant} {calls}")

    def check(self) -> dict:
        return self._ask("check")

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.stdin.write("quit\n")
                self.process.stdin.flush()
                self.process.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        self._stderr.close()


def cpp_load(tool: Path, folder: Path, side: str, *, cache: Optional[Path] = None, preopen: bool = True,
             loader: Optional[str] = None, runs: int = 3, timeout: float = 600) -> dict:
    """One load of `side` in a fresh bench_zoo_cpp process (see its `load` mode); raises ChildFailed."""
    command = [str(tool), "load", str(folder), "--side", side, "--runs", str(runs)]
    if preopen:
        command.append("--preopen")
    if cache is not None:
        command += ["--cache", str(cache)]
    if loader is not None:
        command += ["--loader", loader]
    done = subprocess.run(command, capture_output=True, text=True, env=child_environment(), timeout=timeout)
    if done.returncode != 0:
        raise ChildFailed(f"bench_zoo_cpp load --side {side}", done.returncode, _without_logs(done.stderr))
    return last_json(done.stdout)


def cpp_export(tool: Path, folder: Path, out: Path) -> None:
    done = subprocess.run([str(tool), "export", str(folder), str(out)], capture_output=True, text=True,
                          env=child_environment(), timeout=600)
    if done.returncode != 0:
        raise ChildFailed("bench_zoo_cpp export", done.returncode, _without_logs(done.stderr))
