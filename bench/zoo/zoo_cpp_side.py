"""Driving bench_zoo_cpp (zoo_cpp.cpp), the zoo's C++ side: a server process per model whose
variants zoo.py times in the engine's interleaved rounds beside its Python variants, and one fresh
process per load."""

from __future__ import annotations

import json
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import List, Optional

from common.processes import child_env, last_json
from executorch_openvino.benchmark import Runner, Slice


class ChildFailed(RuntimeError):
    """A child process failed (with the signal that ended it, when one did)."""

    def __init__(self, what: str, returncode: int, output: str):
        how = (f"crashes (signal {-returncode}, {signal.Signals(-returncode).name})" if returncode < 0
               else f"exits with {returncode}")
        lines = [line for line in output.splitlines() if not line.startswith(("I ", "D "))]  # ExecuTorch's logs
        super().__init__(f"{what} {how}: {' '.join(lines)[-600:]}")


class CppServer:
    """bench_zoo_cpp serve: loads the variants once, then times blocks of calls on request."""

    def __init__(self, tool: Path, folder: Path, variants: List[str]):
        self._stderr = tempfile.TemporaryFile("w+")
        self.process = subprocess.Popen([str(tool), "serve", str(folder), "--variants", ",".join(variants)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                        text=True, bufsize=1, env=child_env(EXECUTORCH_OPENVINO_CACHE_DIR=None))
        ready = self._read("loading")
        if "error" in ready:
            self.close()
            raise RuntimeError(f"bench_zoo_cpp could not load the variants: {ready['error']}")
        self.failed = ready.get("failed", {})  # variant -> why it could not be loaded
        self.openvino_backend_holder = ready.get("openvino_backend_holder", "unknown")

    def _read(self, doing: str) -> dict:
        line = self.process.stdout.readline()
        if not line:
            code = self.process.wait()
            self._stderr.seek(0)
            raise ChildFailed(f"bench_zoo_cpp serve ({doing})", code, self._stderr.read())
        return json.loads(line)

    def ask(self, command: str) -> dict:
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        answer = self._read(command)
        if "error" in answer:
            raise RuntimeError(f"bench_zoo_cpp: {answer['error']}")
        return answer

    def runner(self, variant: str) -> Runner:
        """The engine's view of one variant: `calls` calls, or calls for `seconds`, timed in C++."""
        server = self

        class Timed(Runner):
            def run(self, calls: Optional[int], seconds: Optional[float]) -> Slice:
                started = time.perf_counter()
                ns = server.ask(f"time {variant} {calls or 0} {seconds or 0}")["ns"]
                return Slice(len(ns), time.perf_counter() - started, [n / 1e6 for n in ns])

        return Timed()

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


def cpp_load(tool: Path, folder: Path, side: str, cache: Optional[Path] = None) -> dict:
    """One load of `side` in a fresh bench_zoo_cpp process, OpenVINO opened before the clock."""
    command = [str(tool), "load", str(folder), "--side", side, "--preopen"] + (["--cache", str(cache)] if cache else [])
    done = subprocess.run(command, capture_output=True, text=True, env=child_env(EXECUTORCH_OPENVINO_CACHE_DIR=None),
                          timeout=600)
    if done.returncode != 0:
        raise ChildFailed(f"bench_zoo_cpp load --side {side}", done.returncode, done.stderr)
    return last_json(done.stdout)


def cpp_export(tool: Path, folder: Path, out: Path) -> None:
    done = subprocess.run([str(tool), "export", str(folder), str(out)], capture_output=True, text=True,
                          env=child_env(), timeout=600)
    if done.returncode != 0:
        raise ChildFailed("bench_zoo_cpp export", done.returncode, done.stderr)
