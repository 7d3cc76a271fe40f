"""`executorch-openvino serve MODEL.pte --tokenizer DIR`: ExecuTorch's OpenAI-compatible server
(executorch.examples.llm_server), unchanged, with this package's model worker
(executorch-openvino-worker) behind it."""

from __future__ import annotations

import importlib.util
import os
import signal
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

from .argument_types import positive
from .user_errors import CliError, usage_error

HELP = "serve a language model over OpenAI's chat API (ExecuTorch's server, this delegate's worker)"
DESCRIPTION = (
    "Starts ExecuTorch's OpenAI-compatible server (/v1/chat/completions, /v1/models, sessions) in front of "
    "executorch-openvino-worker, which loads the program once and hosts its named sessions. The chat template "
    "comes from the tokenizer folder's tokenizer_config.json. Needs the [serve] extra: "
    "pip install 'executorch-openvino[serve]'. docs/serving.md.")
SERVER = "executorch.examples.llm_server.python.server"
NEEDED = ("fastapi", "uvicorn", "pydantic", "transformers", "tokenizers")


def add_arguments(parser) -> None:
    parser.add_argument("pte", type=Path, metavar="MODEL.pte", help="a language-model program")
    parser.add_argument("--tokenizer", type=Path, required=True, metavar="DIR",
                        help="the model's tokenizer folder (tokenizer.json and tokenizer_config.json)")
    parser.add_argument("--data", type=Path, metavar="WEIGHTS.ptd", help="the program's weights, when kept apart")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--model-id", help="the model's name on /v1/models (default: the program's file name)")
    parser.add_argument("--max-sessions", type=positive(int), default=8, metavar="N",
                        help="named sessions hosted at once, each with its own caches (default 8)")
    parser.add_argument("--max-context", type=positive(int), metavar="N",
                        help="refuse prompts past N tokens with a 400 (default: the program's context)")
    parser.add_argument("--state-dir", type=Path, metavar="DIR",
                        help="keep named sessions' states in DIR across restarts (written when a session closes "
                        "and when the server stops, read back when it opens again)")
    parser.add_argument("--no-think", action="store_true", help="reasoning off by default (Qwen3's templates)")


def missing_dependencies():
    return [name for name in NEEDED if importlib.util.find_spec(name) is None]


_CONTEXT = """
import sys
from executorch.runtime import Runtime
program = Runtime.get().load_program(sys.argv[1])
for name in ("get_max_context_len", "get_max_seq_len"):
    if name in program.method_names:
        print(int(program.load_method(name).execute([])[0]))
        break
"""


def program_context(pte: Path):
    """The context the program was exported with, from its metadata methods; None without them. Read
    in a process of its own: ExecuTorch's runtime brings torch, which this process, waiting on the
    server for as long as it runs, should not keep in memory."""
    done = subprocess.run([sys.executable, "-c", _CONTEXT, str(pte)], capture_output=True, text=True)
    lines = done.stdout.split()
    return int(lines[-1]) if done.returncode == 0 and lines and lines[-1].isdigit() else None


def worker_launcher(folder: Path, args) -> Path:
    """The executable the server spawns: this interpreter running the worker, with our options
    (the server passes only the model and tokenizer)."""
    options = ["--max-sessions", str(args.max_sessions)]
    if args.data is not None:
        options += ["--data", str(args.data.resolve())]
    if args.state_dir is not None:
        options += ["--state-dir", str(args.state_dir.resolve())]
    quoted = " ".join("'" + part.replace("'", "'\\''") + "'" for part in
                      [sys.executable, "-m", "executorch_openvino.serving.worker", *options])
    path = folder / "executorch-openvino-worker"
    path.write_text(f'#!/bin/sh\nexec {quoted} "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def server_command(args, launcher: Path, tokenizer_json: Path, context) -> list:
    command = [sys.executable, "-m", SERVER, "--worker-bin", str(launcher), "--model-path", str(args.pte.resolve()),
               "--tokenizer-path", str(tokenizer_json), "--hf-tokenizer", str(tokenizer_json.parent),
               "--model-id", args.model_id or args.pte.stem, "--host", args.host, "--port", str(args.port)]
    if context:
        command += ["--max-context", str(context)]
    if args.no_think:
        command.append("--no-think")
    return command


def main(args) -> int:
    if os.name != "posix":
        raise CliError("serve runs on Linux and macOS: ExecuTorch's server cancels through a POSIX pipe")
    if not args.pte.is_file():
        raise usage_error(f"{args.pte}: no such file (the program)")
    folder = args.tokenizer if args.tokenizer.is_dir() else args.tokenizer.parent
    tokenizer_json = folder / "tokenizer.json"
    for needed in (tokenizer_json, folder / "tokenizer_config.json"):
        if not needed.is_file():
            raise usage_error(f"{needed}: no such file (--tokenizer is the model's tokenizer folder, with "
                              "tokenizer.json and the chat template's tokenizer_config.json)")
    if args.data is not None and not args.data.is_file():
        raise usage_error(f"{args.data}: no such file (the data file)")
    missing = missing_dependencies()
    if missing:
        raise CliError(f"serve needs {', '.join(missing)}: pip install 'executorch-openvino[serve]'")
    context = args.max_context or program_context(args.pte)
    with tempfile.TemporaryDirectory(prefix="executorch-openvino-serve-") as temporary:
        command = server_command(args, worker_launcher(Path(temporary), args), tokenizer_json.resolve(), context)
        server = subprocess.Popen(command)
        # Stopped by a service manager: the server stops its worker on SIGTERM too.
        signal.signal(signal.SIGTERM, lambda *_: server.terminate())
        try:
            return server.wait()
        except KeyboardInterrupt:
            server.send_signal(signal.SIGINT)
            try:
                return server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                return server.wait()
