"""Dynamic dimensions of an exported graph as OpenVINO dimensions with bounds.

A model exported with `torch.export.Dim("batch", min=1, max=64)` carries symbolic sizes in its fake
tensors; the range torch.export proved for each one becomes OpenVINO's Dimension(min, max), so the
IR keeps the bounds and the runtime refuses shapes outside them with a clear error.
"""

from __future__ import annotations

from typing import List


def bounds(size, ranges=None) -> tuple:
    """(min, max) of one size; max is -1 when unbounded. A plain int is its own bounds. `ranges` is
    an ExportedProgram's range_constraints: tracing assumes a dynamic size is not 0 or 1 (its
    shape environment says 2..), while range_constraints has the range the user declared."""
    if isinstance(size, int):
        return size, size
    node = size.node
    if node.is_nested_int():
        raise ValueError("nested (jagged) sizes are not supported")
    expr = node.expr
    if getattr(expr, "is_number", False):
        value = int(expr)
        return value, value
    found = (ranges or {}).get(expr)
    if found is None:
        found = node.shape_env.bound_sympy(expr)
    lower = int(found.lower) if _finite(found.lower) else 0
    upper = int(found.upper) if _finite(found.upper) else -1
    if lower == 2:
        # Tracing assumes a dynamic size is neither 0 nor 1, and ExecuTorch's edge program keeps
        # that 2 instead of the minimum the user declared (Dim(min=1), the common case, exports a
        # graph valid for 1). Size 1 is allowed; 0 is not.
        lower = 1
    return max(lower, 0), upper


def _finite(bound) -> bool:
    # torch's own integer infinity (int_oo, what Dim.AUTO leaves a size with no limit) says
    # is_finite True to sympy; int() of it raises.
    from torch.utils._sympy.numbers import IntInfinity, NegativeIntInfinity

    return bool(bound.is_finite) and not isinstance(bound, (IntInfinity, NegativeIntInfinity))


def partial_shape(shape, ranges=None):
    """An ov.PartialShape for a tensor's (possibly symbolic) shape."""
    import openvino as ov

    dims: List = []
    for size in shape:
        lower, upper = bounds(size, ranges)
        dims.append(ov.Dimension(lower) if lower == upper else ov.Dimension(lower, upper))
    return ov.PartialShape(dims)


def describe(shape, ranges=None) -> str:
    """'[1..64,16]' for messages."""
    parts = []
    for size in shape:
        lower, upper = bounds(size, ranges)
        parts.append(str(lower) if lower == upper else f"{lower}..{'inf' if upper < 0 else upper}")
    return "[" + ",".join(parts) + "]"

