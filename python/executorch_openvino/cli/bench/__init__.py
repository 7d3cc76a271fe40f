"""`bench model.pte`: the .pte through executorch.runtime against native OpenVINO on the same IR
(and, given the model, XNNPACK and eager PyTorch), timed in interleaved rounds, every backend's
outputs checked against eager PyTorch (without the model: against executorch_openvino's).

Latency mode (the default) makes one call at a time; throughput mode keeps several requests in
flight with OpenVINO's THROUGHPUT hint, as OpenVINO's benchmark_app does. Run-time options
(--option) apply to ours; native OpenVINO compiles with the properties ours' compiled model then
reports, so both run the same configuration. The results are one run of the engine's format
(executorch_openvino.benchmark, built by report.py): its table printed by the engine's renderer, the
run itself with --json, its CSV with --csv and its plot with --plot.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Dict, List, Optional

from ...benchmark import backends
from ..argument_types import option_pair, positive
from ..model_factory import model_from_factory
from ..progress import say, step
from ..run_options import describe_model, options_applied
from ..user_errors import CliError, usage_error
from ..run import add_data_argument, add_option_argument, load_method_inputs

# (report, the engine's rounds and renderer, xnnpack_cache and ../_third_party_noise are imported when
# bench runs: --help and argument errors need none of them.)

ALL_BACKENDS = (backends.OURS, backends.FAST, backends.NATIVE, backends.XNNPACK, backends.EAGER)
NEED_THE_MODEL = (backends.XNNPACK, backends.EAGER)
NOT_CHOSEN = "not chosen (--backends)"


def _backend_list(text: str) -> List[str]:
    import argparse

    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in ALL_BACKENDS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"{text!r}: choose from {', '.join(ALL_BACKENDS)} (comma-separated)")
    return names


HELP = "time a .pte against native OpenVINO on the same IR (and XNNPACK and eager, given the model)"
DESCRIPTION = ("Times a .pte's method through executorch.runtime, native OpenVINO running the same IR with "
               "the same properties, and with --model the model lowered to XNNPACK and in eager PyTorch. The backends "
               "take turns in interleaved rounds (each round starts with the next one), so the machine's load reaches "
               "all alike; each row gives the ratio of the whole run and the range of the per-round ratios. Every "
               "backend's outputs are compared with eager PyTorch's (without --model: with executorch_openvino's).")


def add_arguments(parser) -> None:
    parser.add_argument("pte", type=Path, metavar="MODEL.pte")
    parser.add_argument("--method", default="forward", help="the method to time (default forward)")
    add_data_argument(parser)
    parser.add_argument("--input", action="append", metavar="FILE.npy",
                        help="an input (repeat for each, in order); default: deterministic values")
    parser.add_argument("--model", metavar="MODULE:FACTORY",
                        help="the model the .pte came from: adds XNNPACK (lowered once, then cached) and eager "
                        "PyTorch, and is the reference for the output check")
    parser.add_argument("--backends", type=_backend_list, metavar="LIST",
                        help=f"which to time, comma-separated: {', '.join(ALL_BACKENDS)} (default: all available)")
    amount = parser.add_mutually_exclusive_group()
    amount.add_argument("--iterations", "-n", type=positive(int), default=50,
                        help="timed calls per backend, over all rounds (default 50)")
    amount.add_argument("-t", "--time", type=positive(float), metavar="SECONDS",
                        help="time each backend for SECONDS over all rounds, instead of a number of calls")
    parser.add_argument("--rounds", type=positive(int), default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls per backend first (default 5)")
    parser.add_argument("--mode", choices=("latency", "throughput"), default="latency",
                        help="latency: one call at a time (default); throughput: several requests in flight, "
                        "with performance_hint=THROUGHPUT unless --option sets it")
    parser.add_argument("--requests", type=positive(int),
                        help="throughput mode: requests in flight per backend (default: the streams OpenVINO chose)")
    parser.add_argument("--streams", type=option_pair_value("num_streams"), metavar="N",
                        help="the same as --option num_streams=N (OpenVINO's streams: parallel inferences)")
    add_option_argument(parser)
    parser.add_argument("--xnnpack-cache", type=Path, metavar="DIR",
                        help="where the XNNPACK program is kept (default $XDG_CACHE_HOME/executorch_openvino/bench, "
                        "else ~/.cache/executorch_openvino/bench)")
    parser.add_argument("--no-xnnpack-cache", action="store_true", help="lower to XNNPACK every time")
    parser.add_argument("--json", type=Path, metavar="FILE.json",
                        help="also write the run as JSON (every figure; `python -m executorch_openvino.benchmark "
                        "FILE.json` prints its table again)")
    parser.add_argument("--csv", type=Path, metavar="FILE.csv", help="also write one row per backend as CSV")
    parser.add_argument("--plot", type=Path, metavar="FILE.png", help="also draw a bar chart (needs matplotlib)")


def option_pair_value(key: str):
    """argparse type for a flag that is a shorthand of --option KEY=VALUE."""
    def parse(text: str):
        return option_pair(f"{key}={text}")

    return parse


def _options(args) -> list:
    pairs = list(args.option)
    keys = {key for key, _ in pairs}
    if args.streams is not None:
        if "num_streams" in keys:
            raise usage_error("--streams and --option num_streams both given: use one")
        pairs.append(args.streams)
    if args.mode == "throughput" and "performance_hint" not in keys:
        pairs.append(("performance_hint", "THROUGHPUT"))
    return pairs


def main(args) -> int:
    if args.warmup < 0:
        raise usage_error("--warmup must be at least 0")
    if args.requests is not None and args.mode != "throughput":
        raise usage_error("--requests applies to --mode throughput")
    chosen_backends = args.backends or list(ALL_BACKENDS)
    if args.backends and args.model is None and set(args.backends) & set(NEED_THE_MODEL):
        raise usage_error("xnnpack and eager need --model MODULE:FACTORY (a .pte cannot be lowered again)")
    with options_applied(_options(args)) as chosen:
        return _bench(args, chosen, chosen_backends)


def _bench(args, chosen: Dict[str, str], chosen_backends: List[str]) -> int:
    from ...benchmark import body, finish
    from ...benchmark.rounds import interleaved
    from . import report

    throughput = args.mode == "throughput"
    _, inputs, notes = load_method_inputs(args.pte, args.method, args.input, args.data)
    rounds = args.rounds if args.time is not None else min(args.rounds, args.iterations)
    amount = f"{args.time:g} s" if args.time is not None else f"{args.iterations} timed call(s)"
    say(f"{args.pte}: method {args.method!r}; {args.mode} mode; {amount} per backend in {rounds} interleaved "
        f"round(s), after {args.warmup} warm-up call(s)")
    for note in notes:
        say(f"  {note}")
    if chosen:
        say("  options: " + ", ".join(f"{key}={value}" for key, value in chosen.items()))

    made: List[backends.Backend] = []
    with step("loading the method through executorch.runtime (OpenVINO compiles it)"):
        ours = backends.ours(args.pte, args.method, inputs, args.requests if throughput else 1, args.data)
    made.append(ours)
    if ours.properties:
        say(f"  executorch_openvino model: {describe_model(ours.properties)}")
    requests = ours.requests
    if backends.FAST in chosen_backends:  # what precision=fast would give, in the same rounds
        with step("loading it again with precision=fast"):
            fast = backends.ours_fast(args.pte, args.method, inputs, requests, ours.properties, args.data)
        made.append(fast)
        if fast.properties:
            say(f"  precision=fast model: {describe_model(fast.properties)}")
    else:
        made.append(backends.unavailable(backends.FAST, NOT_CHOSEN))
    if backends.NATIVE in chosen_backends:
        with step("compiling the same IR with native OpenVINO"):
            made.append(backends.native(args.pte.read_bytes(), args.method, inputs, ours.properties, requests,
                                        throughput, args.data))
    else:
        made.append(backends.unavailable(backends.NATIVE, NOT_CHOSEN))

    model = None
    if args.model is None:
        made += [backends.unavailable(key, "pass --model MODULE:FACTORY (a .pte cannot be lowered again)")
                 for key in NEED_THE_MODEL]
    else:
        model, _, _ = model_from_factory(args.model)
        made.append(_xnnpack(args, model, inputs, requests) if backends.XNNPACK in chosen_backends
                    else backends.unavailable(backends.XNNPACK, NOT_CHOSEN))
        made.append(backends.eager(model, inputs, requests))  # the outputs' reference even when not timed
    for backend in made:
        if backend.runner is not None and backend.key not in chosen_backends:  # ours and eager are made anyway
            backend.runner, backend.note = None, NOT_CHOSEN
    timed = {b.key: b.runner for b in made if b.runner is not None}

    reference = backends.EAGER if model is not None else backends.OURS
    run = report.new_bench_run(args, rounds=rounds, requests=requests, options=chosen, reference=reference,
                               timed=list(timed))
    with step(f"timing {', '.join(timed)} in {rounds} interleaved round(s)"), backends.one_torch_thread():
        measured = interleaved(timed, rounds, calls=None if args.time is not None else args.iterations,
                               seconds=args.time, warmup=args.warmup)

    outputs = {b.key: b.outputs() for b in made if b.outputs is not None and (b.key in timed or b.key == reference)}
    report.add_backends(run, made, measured, report.output_differences(outputs, reference))
    finish(run)
    say()
    say("\n".join(body(run)).rstrip())
    _write(args, run)
    return 0


def _xnnpack(args, model, inputs, requests: int) -> backends.Backend:
    from .._third_party_noise import native_stderr_filtered
    from .xnnpack_cache import default_folder, xnnpack_program

    folder: Optional[Path] = None if args.no_xnnpack_cache else (args.xnnpack_cache or default_folder())
    try:
        program, source = xnnpack_program(model, inputs, folder)
    except ImportError as error:
        return backends.unavailable(backends.XNNPACK, f"this ExecuTorch wheel has no XNNPACK partitioner ({error})")
    except Exception as error:  # the model may not lower to XNNPACK: report it, time the rest
        return backends.unavailable(backends.XNNPACK, f"lowering to XNNPACK failed: {type(error).__name__}: {error}")
    say(f"  XNNPACK program: {source}")
    # ExecuTorch's C++ runtime prints CPU-probing lines when XNNPACK's thread pool starts; -v keeps them.
    quiet = contextlib.nullcontext() if getattr(args, "verbose", False) else native_stderr_filtered()
    with quiet:
        made = backends.xnnpack(program, args.method, inputs, requests)
        if made.runner is not None:
            made.runner.run(1, None)  # the thread pool starts at the first call
    return made


def _write(args, run: dict) -> None:
    from ...benchmark import csv_text, write
    from ...benchmark.report import plot

    try:
        if args.json is not None:
            write(run, args.json)
            say(f"wrote {args.json}")
        if args.csv is not None:
            args.csv.parent.mkdir(parents=True, exist_ok=True)
            args.csv.write_text(csv_text(run))
            say(f"wrote {args.csv}")
        if args.plot is not None:
            if plot(run, args.plot):
                say(f"wrote {args.plot}")
            else:
                say(f"--plot: matplotlib is not installed, so {args.plot} was not drawn (pip install "
                    "'executorch-openvino[plot]'); the table above has the numbers")
    except OSError as error:
        raise CliError(f"cannot write {error.filename or 'the results'}: {error}") from error
