"""Writer and reader of the delegate blob, the container the runtime library parses.

The format is specified in docs/delegate-blob-format.md and parsed in C++ by src/blob/delegate_blob.cpp.
All integers are little-endian; payloads start at multiples of 64 bytes.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

MAGIC = b"EOVB"
MAJOR_VERSION = 1
# 1.1 added precompiled models, 1.2 input arguments, 1.3 named weights, 1.4 input bounds, 1.5 grown caches.
MINOR_VERSION = 5
# A writer sets the minor version of the newest kind it writes, so older readers take what they can read.
_MINOR_OF_KIND = {3: 1, 6: 2, 7: 3, 8: 4, 9: 5}
PAYLOAD_ALIGNMENT = 64
# Flags a reader must know to use the blob (it refuses bits it does not know).
FLAG_NAMED_WEIGHTS = 1  # the weights are in the program's named data (SECTION_NAMED_WEIGHTS)
_KNOWN_FLAGS = FLAG_NAMED_WEIGHTS

SECTION_IR_XML = 1
SECTION_IR_WEIGHTS = 2
SECTION_PRECOMPILED = 3
SECTION_INPUT_ARGUMENTS = 6
SECTION_NAMED_WEIGHTS = 7
SECTION_INPUT_BOUNDS = 8
SECTION_GROWN_CACHES = 9

_HEADER = struct.Struct("<4sHHIIQII")  # magic, major, minor, header size, count, total size, flags, crc
_ENTRY = struct.Struct("<IIQQ")  # kind, crc, offset, length
_CRC_OFFSET = 28


def _align(value: int) -> int:
    return (value + PAYLOAD_ALIGNMENT - 1) // PAYLOAD_ALIGNMENT * PAYLOAD_ALIGNMENT


@dataclass(frozen=True)
class PrecompiledModel:
    """A compiled model exported for one device, with what the runtime checks before using it."""

    device: str
    openvino_version: str  # the build number of the runtime that compiled it
    properties: dict[str, str]  # the OpenVINO properties it was compiled with
    model: bytes  # what compiled_model.export_model() wrote


def _precompiled_payload(model: PrecompiledModel) -> bytes:
    lines = [f"device={model.device}", f"openvino={model.openvino_version}"]
    lines += [f"property:{key}={value}" for key, value in sorted(model.properties.items())]
    meta = "".join(line + "\n" for line in lines).encode()
    if any(b < 0x20 and b != 0x0A for b in meta):
        raise ValueError("precompiled model metadata must be printable text")
    head = struct.pack("<I", len(meta)) + meta
    return head + bytes(_align(len(head)) - len(head)) + bytes(model.model)


def _parse_precompiled(payload: bytes) -> PrecompiledModel:
    if len(payload) < 4:
        raise ValueError("precompiled section too short")
    (meta_size,) = struct.unpack_from("<I", payload, 0)
    if meta_size > len(payload) - 4:
        raise ValueError("precompiled section metadata overruns it")
    fields: dict[str, str] = {}
    properties: dict[str, str] = {}
    for line in payload[4 : 4 + meta_size].decode().split("\n"):
        if not line:
            continue
        key, _, value = line.partition("=")
        if key.startswith("property:"):
            properties[key[len("property:") :]] = value
        else:
            fields[key] = value
    start = _align(4 + meta_size)
    if start >= len(payload) or "device" not in fields or "openvino" not in fields:
        raise ValueError("precompiled section is incomplete")
    return PrecompiledModel(fields["device"], fields["openvino"], properties, bytes(payload[start:]))


@dataclass(frozen=True)
class InputArguments:
    """Which of the delegate call's inputs the IR reads: the call's input count, and for each IR
    input, in order, the call input it is (strictly increasing)."""

    call_inputs: int
    of_ir_input: tuple[int, ...]

    def __post_init__(self):
        indices = list(self.of_ir_input)
        if any(b <= a for a, b in zip(indices, indices[1:])) or any(not 0 <= i < self.call_inputs for i in indices):
            raise ValueError(f"IR inputs {indices} are not increasing call inputs below {self.call_inputs}")


def _input_arguments_payload(arguments: InputArguments) -> bytes:
    indices = list(arguments.of_ir_input)
    return struct.pack(f"<II{len(indices)}I", arguments.call_inputs, len(indices), *indices)


def _parse_input_arguments(payload: bytes) -> InputArguments:
    if len(payload) < 8 or len(payload) % 4:
        raise ValueError("input arguments section is malformed")
    call_inputs, count = struct.unpack_from("<II", payload, 0)
    if count != (len(payload) - 8) // 4:
        raise ValueError("input arguments section is malformed")
    return InputArguments(call_inputs, struct.unpack_from(f"<{count}I", payload, 8))


@dataclass(frozen=True)
class NamedWeights:
    """The IR's weights kept outside the blob, in the program's named data (the .pte's own, or a
    .ptd file beside it): the key they are stored under, and their size and CRC-32, which the
    runtime checks before using them."""

    key: str
    size: int
    crc32: int

    @staticmethod
    def of(key: str, weights: bytes) -> "NamedWeights":
        return NamedWeights(key, len(weights), zlib.crc32(weights))


def _named_weights_payload(weights: NamedWeights) -> bytes:
    key = weights.key.encode()
    if not key or b"\0" in key:
        raise ValueError(f"named weights need a non-empty key without NUL, got {weights.key!r}")
    return struct.pack("<QII", weights.size, weights.crc32, len(key)) + key


def _parse_named_weights(payload: bytes) -> NamedWeights:
    if len(payload) < 16:
        raise ValueError("named weights section is malformed")
    size, crc, key_size = struct.unpack_from("<QII", payload, 0)
    if key_size == 0 or key_size != len(payload) - 16:
        raise ValueError("named weights section is malformed")
    return NamedWeights(payload[16:].decode(), size, crc)


@dataclass(frozen=True)
class InputBound:
    """Every value IR input `input` takes lies in [low, high): it indexes a dimension of that many
    entries (or is a position in a context of that length), and a value outside is refused before
    OpenVINO would compute with it."""

    input: int
    low: int
    high: int

    def __post_init__(self):
        if not (0 <= self.input < 2**32 and -(2**63) <= self.low < self.high <= 2**63 - 1):
            raise ValueError(f"input bound {self} is not an input index with low < high in 64 bits")


_BOUND = struct.Struct("<IIqq")  # input, zero, low, high


def _input_bounds_payload(bounds) -> bytes:
    bounds = list(bounds)
    if any(b.input <= a.input for a, b in zip(bounds, bounds[1:])):
        raise ValueError(f"input bounds {bounds} are not in increasing input order")
    return struct.pack("<II", len(bounds), 0) + b"".join(_BOUND.pack(b.input, 0, b.low, b.high) for b in bounds)


def _parse_input_bounds(payload: bytes) -> tuple:
    if len(payload) < 8 or (len(payload) - 8) % _BOUND.size:
        raise ValueError("input bounds section is malformed")
    count, _ = struct.unpack_from("<II", payload, 0)
    if count != (len(payload) - 8) // _BOUND.size:
        raise ValueError("input bounds section is malformed")
    bounds = tuple(InputBound(i, low, high) for i, _, low, high in
                   (_BOUND.unpack_from(payload, 8 + n * _BOUND.size) for n in range(count)))
    if any(b.input <= a.input for a, b in zip(bounds, bounds[1:])):
        raise ValueError("input bounds section is malformed")
    return bounds


_GROWN_CACHES = struct.Struct("<II")  # count, zero


def _grown_caches_payload(count: int) -> bytes:
    if not 0 < count < 2**32:
        raise ValueError(f"a blob counts 1 or more grown KV caches, got {count}")
    return _GROWN_CACHES.pack(count, 0)


def _parse_grown_caches(payload: bytes) -> int:
    if len(payload) != _GROWN_CACHES.size or not _GROWN_CACHES.unpack_from(payload)[0]:
        raise ValueError("grown caches section is malformed")
    return _GROWN_CACHES.unpack_from(payload)[0]


def build_blob(ir_xml: bytes, ir_weights: bytes = b"", precompiled: list[PrecompiledModel] | tuple = (),
               input_arguments: InputArguments | None = None, named_weights: NamedWeights | None = None,
               input_bounds=(), grown_caches: int = 0) -> bytes:
    """Packs an OpenVINO IR (the .xml text and the .bin weights, or where in the program's named
    data the weights are), any models precompiled for named devices, which call inputs the IR
    reads (None: all, in order), the values IR inputs may take (InputBound, by input) and how many
    of its KV caches grow with the conversation (ir_passes/grown_cache.py; 0: none) into a
    delegate blob."""
    if not ir_xml:
        raise ValueError("the IR XML is empty")
    if named_weights is not None and ir_weights:
        raise ValueError("the IR's weights go either in the blob or in named data, not both")
    # Payloads are read where they lie and copied once, into the joined blob: at an LLM's size each
    # further copy of the weights costs seconds and their size in memory again.
    sections = [(SECTION_IR_XML, memoryview(ir_xml).cast("B"))]
    if named_weights is None:
        sections.append((SECTION_IR_WEIGHTS, memoryview(ir_weights).cast("B")))
    else:
        sections.append((SECTION_NAMED_WEIGHTS, _named_weights_payload(named_weights)))
    sections += [(SECTION_PRECOMPILED, _precompiled_payload(model)) for model in precompiled]
    if input_arguments is not None:
        sections.append((SECTION_INPUT_ARGUMENTS, _input_arguments_payload(input_arguments)))
    if input_bounds:
        sections.append((SECTION_INPUT_BOUNDS, _input_bounds_payload(input_bounds)))
    if grown_caches:
        sections.append((SECTION_GROWN_CACHES, _grown_caches_payload(grown_caches)))
    header_size = _HEADER.size + _ENTRY.size * len(sections)

    offset = _align(header_size)
    entries = []
    for kind, payload in sections:
        entries.append((kind, zlib.crc32(payload), offset, len(payload)))
        offset = _align(offset + len(payload))
    total = entries[-1][2] + entries[-1][3]

    header = bytearray(header_size)
    minor = max(_MINOR_OF_KIND.get(kind, 1) for kind, _ in sections)
    flags = FLAG_NAMED_WEIGHTS if named_weights is not None else 0
    _HEADER.pack_into(header, 0, MAGIC, MAJOR_VERSION, minor, header_size, len(sections), total, flags, 0)
    for i, entry in enumerate(entries):
        _ENTRY.pack_into(header, _HEADER.size + i * _ENTRY.size, *entry)
    struct.pack_into("<I", header, _CRC_OFFSET, zlib.crc32(header))
    pieces, end = [header], header_size
    for (_, payload), (_, _, start, length) in zip(sections, entries):
        pieces += [bytes(start - end), payload]
        end = start + length
    return b"".join(pieces)


@dataclass(frozen=True)
class ParsedBlob:
    minor_version: int
    ir_xml: bytes
    ir_weights: bytes
    precompiled: list[PrecompiledModel] = field(default_factory=list)
    input_arguments: InputArguments | None = None  # None: the IR reads every call input, in order
    named_weights: NamedWeights | None = None  # set: the weights are in named data, ir_weights is empty
    input_bounds: tuple = ()  # InputBound per bounded IR input, by input
    grown_caches: int = 0  # how many KV caches grow with the conversation; 0: none said


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
        or flags & ~_KNOWN_FLAGS
    ):
        raise ValueError("inconsistent header")
    zeroed = bytearray(data[:header_size])
    struct.pack_into("<I", zeroed, _CRC_OFFSET, 0)
    if zlib.crc32(bytes(zeroed)) != crc:
        raise ValueError("header checksum mismatch")
    payloads = {}
    precompiled = []
    for i in range(count):
        kind, section_crc, offset, length = _ENTRY.unpack_from(data, _HEADER.size + i * _ENTRY.size)
        payload = bytes(data[offset : offset + length])
        if offset < header_size or len(payload) != length or zlib.crc32(payload) != section_crc:
            raise ValueError(f"section {i} is corrupt")
        if kind == SECTION_PRECOMPILED:
            precompiled.append(_parse_precompiled(payload))
        elif kind == SECTION_INPUT_ARGUMENTS:
            payloads[kind] = _parse_input_arguments(payload)
        elif kind == SECTION_NAMED_WEIGHTS:
            payloads[kind] = _parse_named_weights(payload)
        elif kind == SECTION_INPUT_BOUNDS:
            payloads[kind] = _parse_input_bounds(payload)
        elif kind == SECTION_GROWN_CACHES:
            payloads[kind] = _parse_grown_caches(payload)
        else:
            payloads[kind] = payload
    if not payloads.get(SECTION_IR_XML):
        raise ValueError("no IR XML section")
    if (SECTION_NAMED_WEIGHTS in payloads) != bool(flags & FLAG_NAMED_WEIGHTS):
        raise ValueError("the named-weights flag and section disagree")
    if SECTION_NAMED_WEIGHTS in payloads and payloads.get(SECTION_IR_WEIGHTS):
        raise ValueError("the blob holds weights and also names weights in named data")
    return ParsedBlob(minor, payloads[SECTION_IR_XML], payloads.get(SECTION_IR_WEIGHTS, b""), precompiled,
                      payloads.get(SECTION_INPUT_ARGUMENTS), payloads.get(SECTION_NAMED_WEIGHTS),
                      payloads.get(SECTION_INPUT_BOUNDS, ()), payloads.get(SECTION_GROWN_CACHES, 0))
