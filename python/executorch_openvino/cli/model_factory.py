"""MODULE:FACTORY: the user's model, from a dotted module name or a .py file, and its example inputs."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Optional, Sequence

from .method_inputs import parse_example_input
from .user_errors import CliError, usage_error


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
