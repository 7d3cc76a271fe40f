"""The IR as the bytes the blob carries: its XML and its weights, the same bytes for the same graph."""

from __future__ import annotations

import mmap
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Tuple, Union


def stable_names(model) -> None:
    """Names the model and its unnamed operations by their place in the graph. OpenVINO names them
    from process-wide counters (Model280, Constant_21532), so the same graph converted twice
    would give two different IRs: no compiled model shared between methods or programs lowered from
    the same export, and no hit in the model cache."""
    model.set_friendly_name("executorch_openvino")
    _name_by_place(model, "")


def _counters_name(op) -> bool:
    """Whether the op's name is a counter's (Constant_21532): its own, or one a pass copied from the op
    it replaced (ir_passes/low_bit_weights.py's narrowed weights keep their originals' names)."""
    name = op.get_friendly_name()
    if name == op.get_name():
        return True
    kind, _, number = name.rpartition("_")
    return kind == op.get_type_name() and number.isdigit()


def _name_by_place(model, prefix: str) -> None:
    for index, op in enumerate(model.get_ordered_ops()):
        if _counters_name(op):  # nobody chose it
            op.set_friendly_name(f"{prefix}{op.get_type_name()}_{index}")
        if op.get_type_name() == "If":  # its branches are models of their own (a model's own conditionals)
            for branch, body in (("then", op.get_then_body()), ("else", op.get_else_body())):
                body.set_friendly_name(f"{op.get_friendly_name()}.{branch}")
                _name_by_place(body, f"{op.get_friendly_name()}.{branch}.")


def serialize(model, compress_to_fp16: bool = False) -> Tuple[bytes, bytes]:
    """The IR's XML and weights. OpenVINO's save_model stores fp32 weights as fp16 by default; here
    that happens only when asked for."""
    with serialized(model, compress_to_fp16) as (xml, weights):
        return xml, bytes(weights)


@contextmanager
def serialized(model, compress_to_fp16: bool = False) -> Iterator[Tuple[bytes, Union[memoryview, bytes]]]:
    """serialize(), with the weights as the file save_model wrote, mapped into memory and valid inside
    the block only: the blob copies them once, from there (reading the file into bytes first cost a
    second copy, 1.7 s of a 620 MB model's 5.6 s container write)."""
    import openvino as ov

    stable_names(model)
    with tempfile.TemporaryDirectory(prefix="executorch_openvino_") as folder:
        xml = Path(folder) / "model.xml"
        ov.save_model(model, str(xml), compress_to_fp16=compress_to_fp16)
        with open(xml.with_suffix(".bin"), "rb") as weights_file:
            if not weights_file.seek(0, 2):  # a model without weights: an empty file cannot be mapped
                yield xml.read_bytes(), b""
                return
            # Unmapped before the folder goes: Windows cannot delete a mapped file.
            with mmap.mmap(weights_file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                view = memoryview(mapped)
                try:
                    yield xml.read_bytes(), view
                finally:
                    view.release()  # fails (BufferError) if a caller kept a view of it past the block
