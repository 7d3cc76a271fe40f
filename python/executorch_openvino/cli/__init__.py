"""The command line: `python -m executorch_openvino` or `executorch-openvino`.

    executorch-openvino --cmake-prefix-path       the prefix for find_package(executorch_openvino)
    executorch-openvino doctor [--skip CHECK]     checks the installation, one line per check
    executorch-openvino export MODULE:FACTORY --out model.pte [--example-input 1,3,224,224:float32]
    executorch-openvino export-hf MODEL_DIR --task text-generation --out DIR [--weights int4] [--max-seq-len N]
    executorch-openvino run model.pte [--input x.npy] [--output-dir out] [--option KEY=VALUE]
    executorch-openvino bench model.pte [-n 50 | -t SECONDS] [--rounds 5] [--mode latency|throughput]
        [--requests N] [--option KEY=VALUE] [--model MODULE:FACTORY] [--json F] [--csv F] [--plot F]
    executorch-openvino generate model.pte --tokenizer tokenizer.json --prompt TEXT [--max-new-tokens N]
    executorch-openvino transcribe DIR --audio speech.wav [--processor MODEL_DIR] [--max-new-tokens N]
    executorch-openvino serve model.pte --tokenizer DIR [--port 8000] [--max-sessions N]

Exit status: 0 on success, 1 when something failed, 2 for a wrong argument. --help and argument
errors import neither torch nor ExecuTorch; each command imports what it needs when it runs.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import traceback
from typing import List, Optional

from .cmake_package import cmake_config, cmake_prefix
from .progress import show_steps_when_verbose
from .user_errors import USAGE_ERROR, CliError
from ._third_party_noise import known_messages_hidden

PROG = "executorch-openvino"


def build_parser() -> argparse.ArgumentParser:
    # The commands' modules are imported here, not with the package: the runner's console script
    # (cli/runner.py) imports this package and needs none of them.
    from . import bench, doctor, export, export_hf, generate, run, serve, transcribe

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="The OpenVINO delegate for ExecuTorch: check the installation, export and lower "
        "a PyTorch model to a .pte, run it, and time it against native OpenVINO.",
    )
    parser.add_argument(
        "--cmake-prefix-path",
        action="store_true",
        help="print the prefix for find_package(executorch_openvino) (for CMAKE_PREFIX_PATH) and exit",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="show logs, warnings and tracebacks")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    # A command is a module named after it (export_hf: export-hf) with its HELP, DESCRIPTION,
    # add_arguments(parser) and main(args).
    for module in (doctor, export, export_hf, run, bench, generate, transcribe, serve):
        name = module.__name__.rsplit(".", 1)[1].replace("_", "-")
        command = subparsers.add_parser(name, help=module.HELP, description=module.DESCRIPTION)
        module.add_arguments(command)
        command.set_defaults(func=module.main)
        command.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                             help="show logs, warnings and tracebacks")  # after the command works too
    return parser


def _print_cmake_prefix() -> int:
    print(cmake_prefix())
    if cmake_config().is_file():
        return 0
    print(
        f"{PROG}: {cmake_config()} does not exist: the CMake package exists only in an installed wheel "
        "(pip install .); this is a source checkout",
        file=sys.stderr,
    )
    return 1


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, or a wrong argument (argparse printed why)
        return exit_.code if isinstance(exit_.code, int) else USAGE_ERROR

    if args.cmake_prefix_path:
        return _print_cmake_prefix()
    if args.command is None:
        parser.print_help(sys.stderr)
        return USAGE_ERROR

    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    show_steps_when_verbose(args.verbose)
    # Without -v, third-party start-up noise is hidden, one known message at a time.
    with contextlib.nullcontext() if args.verbose else known_messages_hidden():
        try:
            return args.func(args)
        except CliError as error:
            if args.verbose:
                traceback.print_exc()
            print(f"{PROG} {args.command}: error: {error}", file=sys.stderr)
            return error.code
        except KeyboardInterrupt:
            print(f"{PROG} {args.command}: interrupted", file=sys.stderr)
            return 130
        except Exception as error:  # the model, torch.export, lowering or the runtime failed
            if args.verbose:
                traceback.print_exc()
            print(f"{PROG} {args.command}: error: {type(error).__name__}: {error}", file=sys.stderr)
            if not args.verbose:
                print(f"(run `{PROG} -v {args.command} ...` for the traceback)", file=sys.stderr)
            return 1


__all__ = ["main", "build_parser"]
