"""The inputs a command gives a method: --example-input shapes, .npy files, or deterministic
defaults, checked against what the program's MethodMeta declares."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple

from .dtypes import dtype_from_name, dtype_from_scalar_type, dtype_text, shape_text
from .user_errors import CliError, usage_error


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
