"""Dtypes and shapes as the command line names and prints them, and ExecuTorch's scalar types."""

from __future__ import annotations

from typing import Sequence

from .user_errors import CliError, usage_error

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
