"""Writer and reader of the delegate blob, the container the runtime library parses.

The format is specified in docs/delegate-blob-format.md and parsed in C++ by src/blob/delegate_blob.cpp.
All integers are little-endian; payloads start at multiples of 64 bytes.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

MAGIC = b"EOVB"
MAJOR_VERSION = 1
MINOR_VERSION = 0
PAYLOAD_ALIGNMENT = 64

SECTION_IR_XML = 1
SECTION_IR_WEIGHTS = 2

_HEADER = struct.Struct("<4sHHIIQII")  # magic, major, minor, header size, count, total size, flags, crc
_ENTRY = struct.Struct("<IIQQ")  # kind, crc, offset, length
_CRC_OFFSET = 28


def _align(value: int) -> int:
    return (value + PAYLOAD_ALIGNMENT - 1) // PAYLOAD_ALIGNMENT * PAYLOAD_ALIGNMENT


def build_blob(ir_xml: bytes, ir_weights: bytes = b"") -> bytes:
    """Packs an OpenVINO IR (the .xml text and the .bin weights) into a delegate blob."""
    if not ir_xml:
        raise ValueError("the IR XML is empty")
    sections = [(SECTION_IR_XML, bytes(ir_xml)), (SECTION_IR_WEIGHTS, bytes(ir_weights))]
    header_size = _HEADER.size + _ENTRY.size * len(sections)

    offset = _align(header_size)
    entries = []
    for kind, payload in sections:
        entries.append((kind, zlib.crc32(payload), offset, len(payload)))
        offset = _align(offset + len(payload))
    total = entries[-1][2] + entries[-1][3]

    out = bytearray(total)
    _HEADER.pack_into(out, 0, MAGIC, MAJOR_VERSION, MINOR_VERSION, header_size, len(sections), total, 0, 0)
    for i, entry in enumerate(entries):
        _ENTRY.pack_into(out, _HEADER.size + i * _ENTRY.size, *entry)
    for (_, payload), (_, _, start, length) in zip(sections, entries):
        out[start : start + length] = payload
    struct.pack_into("<I", out, _CRC_OFFSET, zlib.crc32(bytes(out[:header_size])))
    return bytes(out)


@dataclass(frozen=True)
class ParsedBlob:
    minor_version: int
    ir_xml: bytes
    ir_weights: bytes


def parse_blob(data: bytes) -> ParsedBlob:
    """Reads a delegate blob back (for tools and tests; the runtime uses the C++ parser)."""
    if len(data) < _HEADER.size:
        raise ValueError(f"blob is {len(data)} bytes, shorter than the {_HEADER.size}-byte header")
    magic, major, minor, header_size, count, total, flags, crc = _HEADER.unpack_from(data, 0)
    if magic != MAGIC:
        raise ValueError("bad magic: not an executorch_openvino delegate blob")
    if major != MAJOR_VERSION:
        raise ValueError(f"format major version {major} is not supported")
    if (
        header_size != _HEADER.size + _ENTRY.size * count
        or header_size > len(data)
        or total != len(data)
        or flags != 0
    ):
        raise ValueError("inconsistent header")
    zeroed = bytearray(data[:header_size])
    struct.pack_into("<I", zeroed, _CRC_OFFSET, 0)
    if zlib.crc32(bytes(zeroed)) != crc:
        raise ValueError("header checksum mismatch")
    payloads = {}
    for i in range(count):
        kind, section_crc, offset, length = _ENTRY.unpack_from(data, _HEADER.size + i * _ENTRY.size)
        payload = bytes(data[offset : offset + length])
        if offset < header_size or len(payload) != length or zlib.crc32(payload) != section_crc:
            raise ValueError(f"section {i} is corrupt")
        payloads[kind] = payload
    if not payloads.get(SECTION_IR_XML):
        raise ValueError("no IR XML section")
    return ParsedBlob(minor, payloads[SECTION_IR_XML], payloads.get(SECTION_IR_WEIGHTS, b""))
