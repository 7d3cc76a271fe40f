"""`run model.pte`: run a method through executorch.runtime, print its outputs, save them as .npy."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

from .argument_types import option_pair, precision_pair
from .dtypes import dtype_text, shape_text
from .method_inputs import load_inputs, method_input_specs
from .progress import say
from .run_options import describe_model, loaded_models_since, options_applied
from .user_errors import CliError, usage_error

SHOWN_VALUES = 6


HELP = "run a .pte through executorch.runtime and print (or save) its outputs"
DESCRIPTION = ("Runs one method of a .pte through executorch.runtime. Inputs come from .npy files "
               "(one per input, in order) or are deterministic defaults of the declared shapes and dtypes.")


def add_arguments(parser) -> None:
    parser.add_argument("pte", type=Path, metavar="MODEL.pte")
    parser.add_argument("--method", default="forward", help="the method to run (default forward)")
    parser.add_argument("--input", action="append", metavar="FILE.npy", help="an input (repeat for each, in order)")
    add_data_argument(parser)
    parser.add_argument("--output-dir", type=Path, metavar="DIR",
                        help="write the outputs as DIR/output_<i>.npy and the inputs used as DIR/input_<i>.npy")
    add_option_argument(parser)


def add_data_argument(parser) -> None:
    parser.add_argument("--data", type=Path, metavar="FILE.ptd",
                        help="the data file the program keeps its weights in (export --external-weights)")


def add_option_argument(parser) -> None:
    parser.add_argument("--option", action="append", default=[], type=option_pair, metavar="KEY=VALUE",
                        help="a run-time option of the delegate, for programs loaded by this command (repeatable): "
                        "device, num_threads, num_streams, performance_hint, precision, inference_precision, "
                        "cache_dir, enable_mmap, enable_profiling, attention (docs/options.md)")
    # The same list as --option: --precision fast is --option precision=fast.
    parser.add_argument("--precision", dest="option", action="append", type=precision_pair, metavar="exact|fast",
                        help="exact: f32, eager's results; fast: the device's fastest precision (bf16 or f16 where "
                        "the hardware has it); overrides the program's choice (docs/precision.md)")


def load_method_inputs(pte: Path, method: str, input_files, data: Optional[Path] = None):
    """(executorch.runtime Program, input tensors, lines describing them)."""
    from executorch.runtime import Runtime

    for path, what in ((pte, "program"), (data, "data file")):
        if path is not None and not path.is_file():
            raise usage_error(f"{path}: no such file (the {what})")
    try:
        program = Runtime.get().load_program(pte, data_path=data)
    except RuntimeError as error:
        raise CliError(f"cannot load {pte} as an ExecuTorch program: {error}") from error
    if method not in program.method_names:
        raise usage_error(f"{pte} has no method {method!r}; its methods: {', '.join(sorted(program.method_names))}")
    inputs, notes = load_inputs(method_input_specs(program, method), input_files)
    return program, inputs, notes


def to_numpy(value):
    import numpy as np
    import torch

    if isinstance(value, torch.Tensor):
        tensor = value.detach().cpu()
        if tensor.dtype == torch.bfloat16:  # numpy has no bfloat16
            tensor = tensor.float()
        return tensor.numpy()
    return np.asarray(value)


def describe_value(value) -> str:
    import torch

    if not isinstance(value, torch.Tensor):
        return f"{type(value).__name__} {value!r}"
    flat = value.detach().reshape(-1)
    shown = flat[:SHOWN_VALUES].tolist()
    values = ", ".join(f"{v:.6g}" if isinstance(v, float) else str(v) for v in shown)
    if flat.numel() > SHOWN_VALUES:
        values += ", ..."
    text = f"{shape_text(value.shape)} {dtype_text(value.dtype)}  [{values}]"
    if flat.numel() > 1 and value.dtype.is_floating_point:
        as_float = flat.float()
        text += f"  min {as_float.min().item():.6g} max {as_float.max().item():.6g}"
    return text


def main(args) -> int:
    with options_applied(args.option) as chosen:
        return _run(args, chosen)


def _run(args, chosen: dict) -> int:
    import numpy as np

    import executorch_openvino

    program, inputs, notes = load_method_inputs(args.pte, args.method, args.input, args.data)
    say(f"{args.pte}: method {args.method!r}, {len(inputs)} input(s)")
    for note in notes:
        say(f"  {note}")
    if chosen:
        say("options: " + ", ".join(f"{key}={value}" for key, value in chosen.items()))

    before = executorch_openvino.compiled_models()
    start = time.perf_counter()
    method = program.load_method(args.method)
    loaded = time.perf_counter()
    outputs = method.execute(inputs)
    done = time.perf_counter()
    say(f"loaded the method in {(loaded - start) * 1e3:.1f} ms, executed in {(done - loaded) * 1e3:.2f} ms")
    for model in loaded_models_since(before):
        say(f"executorch_openvino model: {describe_model(model)}")
    for i, value in enumerate(outputs):
        say(f"output {i}: {describe_value(value)}")

    if args.output_dir is not None:
        try:
            args.output_dir.mkdir(parents=True, exist_ok=True)
            for i, value in enumerate(inputs):
                np.save(args.output_dir / f"input_{i}.npy", to_numpy(value))
            for i, value in enumerate(outputs):
                np.save(args.output_dir / f"output_{i}.npy", to_numpy(value))
        except OSError as error:
            raise CliError(f"cannot write to {args.output_dir}: {error}") from error
        say(f"wrote {len(outputs)} output(s) and {len(inputs)} input(s) as .npy to {args.output_dir}")
    return 0
