"""A .pte whose delegate data was damaged is refused with a clear error, never run and never a
crash, and the process keeps working: bit flips anywhere in our blob inside a real program."""

from __future__ import annotations

import pytest
import torch

import executorch_openvino
from executorch_openvino.container import blob, delegate_blobs
from lowering import load_forward, small_net_program


@pytest.fixture(scope="module")
def program():
    model, x, pte = small_net_program(seed=8)
    (ours,) = delegate_blobs(pte)
    start = pte.find(ours.data)  # where the blob lies in the file, to damage it there
    assert start >= 0
    return model, x, pte, start, ours.parsed


def _places(start: int, parsed) -> dict:
    header = blob._HEADER.size + blob._ENTRY.size * 2
    xml_at = start + blob._align(header)
    return {
        "magic": start,
        "major version": start + 4,
        "section count": start + 12,
        "total size": start + 16,
        "header checksum": start + 28,
        "section table": start + blob._HEADER.size + 8,
        "IR XML": xml_at + len(parsed.ir_xml) // 2,
        "IR weights": start + blob._align(xml_at - start + len(parsed.ir_xml)) + len(parsed.ir_weights) // 2,
    }


@pytest.mark.parametrize(
    "where",
    ["magic", "major version", "section count", "total size", "header checksum", "section table", "IR XML", "IR weights"],
)
def test_a_bit_flip_in_the_delegate_blob_is_refused_and_the_process_keeps_working(program, where):
    model, x, pte, start, parsed = program
    offset = _places(start, parsed)[where]
    damaged = bytearray(pte)
    damaged[offset] ^= 0x10
    with pytest.raises(RuntimeError, match="invalid delegate blob"):
        load_forward(bytes(damaged))
    method = load_forward(pte)  # the intact program still loads and runs
    torch.testing.assert_close(method.execute([x])[0], model(x), rtol=1e-4, atol=1e-5)


def test_the_damage_is_named(program):
    _, _, pte, start, parsed = program
    damaged = bytearray(pte)
    damaged[_places(start, parsed)["IR weights"]] ^= 0x01
    with pytest.raises(RuntimeError, match=r"section 1 \(kind 2\) checksum mismatch: the blob is corrupt"):
        load_forward(bytes(damaged))
    assert "checksum mismatch" in executorch_openvino.runtime.library.loaded().last_error()
