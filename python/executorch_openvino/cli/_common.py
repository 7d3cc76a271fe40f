"""Helpers the subcommands share: user errors, MODULE:FACTORY loading, example inputs, dtypes,
the inputs of a program's method and the CMake prefix (timing: executorch_openvino.benchmark)."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, List, Optional, Sequence, Tuple

PACKAGE_DIR = Path(__file__).resolve().parents[1]
CMAKE_CONFIG = Path("share", "cmake", "executorch_openvino", "executorch_openvinoConfig.cmake")

USAGE_ERROR = 2


class CliError(Exception):
    """A failure the user can fix from the command line; main() prints it without a traceback.
    `code` is the exit status: 2 for a wrong argument, 1 for anything else."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def usage_error(message: str) -> CliError:
    return CliError(message, USAGE_ERROR)


# --- run-time options (--option KEY=VALUE) --------------------------------------------------------


def positive(kind):
    """An argparse type: a number of `kind` (int or float) greater than 0."""

    def parse(text: str):
        import argparse

        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{text!r}: must be more than 0")
        return value

    return parse


def option_pair(text: str) -> Tuple[str, str]:
    """argparse type of --option: `KEY=VALUE` (checked here without importing anything; the key and
    value are checked by the library when they are applied)."""
    import argparse

    key, sep, value = text.partition("=")
    if not sep or not key.strip() or not value.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE (e.g. num_threads=4 or device=AUTO)")
    return key.strip(), value.strip()


PRECISIONS = ("exact", "fast")  # container.compile_specs.PRECISIONS, without importing ExecuTorch for --help


def precision_word(text: str) -> str:
    """argparse type of --precision: exact or fast, in any case."""
    import argparse

    if text.lower() not in PRECISIONS:
        raise argparse.ArgumentTypeError(f"{text!r}: choose exact (f32, eager's results) or fast (the device's "
                                         "fastest precision)")
    return text.lower()


def precision_pair(text: str) -> Tuple[str, str]:
    """argparse type of run / bench / generate --precision: the --option pair it stands for."""
    return "precision", precision_word(text)


@contextmanager
def options_applied(pairs: Sequence[Tuple[str, str]]) -> Iterator[dict]:
    """Sets the --option values with executorch_openvino.set_options for programs loaded inside the
    block, and removes them after it. Yields them as a dict."""
    import executorch_openvino

    chosen = dict(pairs)
    try:
        executorch_openvino.set_options(**chosen)
    except executorch_openvino.OptionError as error:
        raise usage_error(f"--option: {error}") from None
    try:
        yield chosen
    finally:
        executorch_openvino.set_options(**{key: None for key in chosen})


def loaded_models_since(before: List[dict]) -> List[dict]:
    """The compiled models of executorch_openvino that appeared (or gained a user) since `before`
    (a compiled_models() list): those of the program loaded in between."""
    import executorch_openvino

    return [model for model in executorch_openvino.compiled_models() if model not in before]


def describe_model(model: dict) -> str:
    """`CPU (ir): PERFORMANCE_HINT=LATENCY, ...` for one compiled_models() entry."""
    properties = ", ".join(f"{key}={value}" for key, value in model.items() if key not in ("device", "source", "users"))
    return f"{model.get('device')} ({model.get('source')}): {properties}"


# --- CMake package -------------------------------------------------------------------------------


def cmake_prefix() -> Path:
    """The prefix find_package(executorch_openvino) searches: the installed package's folder."""
    return PACKAGE_DIR


def cmake_config() -> Path:
    return cmake_prefix() / CMAKE_CONFIG


# --- progress ------------------------------------------------------------------------------------


def say(text: str = "") -> None:
    print(text, flush=True)


@contextmanager
def step(what: str) -> Iterator[None]:
    """Prints `what ...` before a slow step and its duration when it ends."""
    print(f"{what} ...", end="", flush=True)
    start = time.perf_counter()
    try:
        yield
    except BaseException:
        print(" failed", flush=True)
        raise
    print(f" {time.perf_counter() - start:.1f} s", flush=True)


# --- dtypes --------------------------------------------------------------------------------------

# Names accepted on the command line -> torch dtype attribute.
_DTYPE_NAMES = {
    "float32": "float32", "float": "float32", "f32": "float32", "fp32": "float32",
    "float16": "float16", "half": "float16", "f16": "float16", "fp16": "float16",
    "bfloat16": "bfloat16", "bf16": "bfloat16",
    "float64": "float64", "double": "float64", "f64": "float64",
    "int64": "int64", "long": "int64", "i64": "int64",
    "int32": "int32", "int": "int32", "i32": "int32",
    "int16": "int16", "i16": "int16",
    "int8": "int8", "i8": "int8",
    "uint8": "uint8", "u8": "uint8",
    "bool": "bool",
}

# ExecuTorch's ScalarType numbering (TensorInfo.dtype()) -> torch dtype attribute.
_SCALAR_TYPES = {
    0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16", 6: "float32",
    7: "float64", 11: "bool", 15: "bfloat16",
}


def dtype_from_name(name: str):
    import torch

    key = name.strip().lower()
    if key not in _DTYPE_NAMES:
        raise usage_error(f"unknown dtype {name!r}; use one of {', '.join(sorted(set(_DTYPE_NAMES.values())))}")
    return getattr(torch, _DTYPE_NAMES[key])


def dtype_from_scalar_type(code: int):
    import torch

    if code not in _SCALAR_TYPES:
        raise CliError(f"the program declares an input of ExecuTorch scalar type {code}, which this tool cannot make")
    return getattr(torch, _SCALAR_TYPES[code])


def dtype_text(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def shape_text(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


# --- inputs --------------------------------------------------------------------------------------


def default_tensor(shape: Sequence[int], dtype, seed: int):
    """A deterministic input: standard normal values for floating dtypes, zeros for integers
    (safe as indices), True for bool."""
    import torch

    shape = tuple(int(d) for d in shape)
    if dtype.is_floating_point:
        generator = torch.Generator().manual_seed(seed)
        return torch.randn(shape, generator=generator, dtype=torch.float32).to(dtype)
    if dtype == torch.bool:
        return torch.ones(shape, dtype=torch.bool)
    return torch.zeros(shape, dtype=dtype)


def parse_example_input(text: str, index: int):
    """`1,3,224,224:float32` (the dtype defaults to float32; `:float32` alone is a scalar)."""
    shape_part, _, dtype_part = text.partition(":")
    dtype = dtype_from_name(dtype_part or "float32")
    shape_part = shape_part.strip().strip("[]()")
    try:
        shape = [int(d) for d in shape_part.split(",") if d.strip()] if shape_part else []
    except ValueError:
        raise usage_error(f"--example-input {text!r}: the shape must be comma-separated integers, e.g. 1,3,224,224:float32") from None
    if any(d < 0 for d in shape):
        raise usage_error(f"--example-input {text!r}: negative dimension")
    return default_tensor(shape, dtype, seed=index)


def method_input_specs(program, method: str) -> List[Tuple[Tuple[int, ...], Any]]:
    """(shape, torch dtype) of each input of `method`, from the program's MethodMeta."""
    meta = program.metadata(method)
    specs = []
    for i in range(meta.num_inputs()):
        try:
            info = meta.input_tensor_meta(i)
        except Exception as error:  # a non-tensor input
            raise CliError(f"input {i} of {method!r} is not a tensor ({error}); pass it with --input") from error
        specs.append((tuple(int(d) for d in info.sizes()), dtype_from_scalar_type(int(info.dtype()))))
    return specs


def load_inputs(specs, files: Optional[Sequence[str]]) -> Tuple[list, List[str]]:
    """The method's inputs: from .npy files (one per input, in order) or deterministic defaults.
    Returns the tensors and one line describing each."""
    import numpy as np
    import torch

    files = list(files or [])
    if files and len(files) != len(specs):
        raise usage_error(f"the method takes {len(specs)} input(s) but {len(files)} --input file(s) were given")
    tensors, notes = [], []
    for i, (shape, dtype) in enumerate(specs):
        expected = f"{shape_text(shape)} {dtype_text(dtype)}"
        if not files:
            tensors.append(default_tensor(shape, dtype, seed=i))
            kind = "seeded normal" if dtype.is_floating_point else ("ones" if dtype == torch.bool else "zeros")
            notes.append(f"input {i}: {expected}, default values ({kind}, seed {i})")
            continue
        path = Path(files[i])
        try:
            array = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as error:
            raise usage_error(f"--input {path}: cannot read it as a .npy file: {error}") from None
        tensor = torch.from_numpy(np.ascontiguousarray(array))
        if tuple(tensor.shape) != tuple(shape):
            raise usage_error(f"--input {path}: shape {shape_text(tensor.shape)}, but input {i} of the method is {expected}")
        note = f"input {i}: {expected} from {path}"
        if tensor.dtype != dtype:
            same_kind = tensor.dtype.is_floating_point == dtype.is_floating_point and torch.bool not in (tensor.dtype, dtype)
            if not same_kind:
                raise usage_error(f"--input {path}: dtype {dtype_text(tensor.dtype)}, but input {i} of the method is {expected}")
            note += f" (converted from {dtype_text(tensor.dtype)})"
            tensor = tensor.to(dtype)
        tensors.append(tensor)
        notes.append(note)
    return tensors, notes


# --- MODULE:FACTORY ------------------------------------------------------------------------------

def _import_module(name: str):
    as_path = Path(name)
    if name.endswith(".py") or as_path.is_file():
        if not as_path.is_file():
            raise usage_error(f"cannot load {name}: no such file")
        # Named after the file, the same in every process and every time (the name lands in what
        # torch.export records, and so in bench's XNNPACK cache key).
        digest = hashlib.sha1(str(as_path.resolve()).encode()).hexdigest()[:12]
        module_name = f"_executorch_openvino_user_{as_path.stem}_{digest}"
        spec = importlib.util.spec_from_file_location(module_name, as_path)
        if spec is None or spec.loader is None:
            raise usage_error(f"cannot load {name} as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        # The file's own folder is importable, as when it is run as a script.
        folder = str(as_path.resolve().parent)
        if folder not in sys.path:
            sys.path.append(folder)
        try:
            spec.loader.exec_module(module)
        except Exception as error:
            del sys.modules[module_name]
            raise usage_error(f"importing {name} failed: {type(error).__name__}: {error}") from error
        return module
    # As `python -m` does, the working folder is importable (console scripts do not add it).
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.append(str(Path.cwd()))
    try:
        return importlib.import_module(name)
    except Exception as error:
        raise usage_error(f"cannot import module {name!r}: {type(error).__name__}: {error}") from error


def load_factory(spec: str):
    """`MODULE:FACTORY` -> the FACTORY callable; MODULE is a dotted name or a .py file."""
    module_name, sep, attribute = spec.rpartition(":")
    if not sep or not module_name or not attribute:
        raise usage_error(f"{spec!r} is not MODULE:FACTORY (e.g. mymodels:make_model or path/to/models.py:make_model)")
    module = _import_module(module_name)
    factory = module
    for part in attribute.split("."):
        if not hasattr(factory, part):
            raise usage_error(f"{module_name} has no attribute {attribute!r}")
        factory = getattr(factory, part)
    if not callable(factory):
        raise usage_error(f"{module_name}:{attribute} is not callable (it is a {type(factory).__name__})")
    return factory


def model_from_factory(spec: str, example_inputs: Optional[Sequence[str]] = None):
    """Calls FACTORY(); returns (eval-mode module, example input tuple or None, note).
    FACTORY returns an nn.Module or (module, example_inputs); --example-input values, when given,
    take the place of the factory's."""
    import torch

    factory = load_factory(spec)
    try:
        made = factory()
    except Exception as error:
        raise CliError(f"{spec}() raised {type(error).__name__}: {error}") from error
    inputs = None
    if isinstance(made, (tuple, list)):
        if len(made) != 2:
            raise usage_error(f"{spec}() returned a {type(made).__name__} of {len(made)} items; expected an nn.Module or (module, example_inputs)")
        made, inputs = made
        if isinstance(inputs, torch.Tensor):
            inputs = (inputs,)
        elif isinstance(inputs, (tuple, list)):
            inputs = tuple(inputs)
        else:
            raise usage_error(f"{spec}() returned example inputs of type {type(inputs).__name__}; expected a tensor or a tuple of tensors")
    if not isinstance(made, torch.nn.Module):
        raise usage_error(f"{spec}() returned a {type(made).__name__}; expected a torch.nn.Module or (module, example_inputs)")
    note = "example inputs from the factory" if inputs is not None else None
    if example_inputs:
        if inputs is not None:
            note = "example inputs from --example-input, in place of the factory's"
        else:
            note = "example inputs from --example-input"
        inputs = tuple(parse_example_input(text, i) for i, text in enumerate(example_inputs))
    return made.eval(), inputs, note
