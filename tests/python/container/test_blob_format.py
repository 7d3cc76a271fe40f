"""The Python delegate-blob writer and reader against the format in docs/delegate-blob-format.md.

The C++ runtime parses what this writer produces, so besides the round trip the tests pin the
layout field by field (with struct and zlib, independently of the writer) and compare the output
for one fixed input with golden bytes that tests/cpp/blob/delegate_blob_test.cpp pins for the C++
build() too: the two writers agree byte for byte.
"""

from __future__ import annotations

import struct
import sys
import zlib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "python"))

from executorch_openvino.container import blob  # noqa: E402
from executorch_openvino.container.blob import build_blob, parse_blob  # noqa: E402

HEADER_SIZE = 32
ENTRY_SIZE = 24
ALIGNMENT = 64

XML = b'<?xml version="1.0"?>\n<net name="test" version="11"><layers/><edges/></net>\n'
WEIGHTS = bytes((i * 131 + 7) & 0xFF for i in range(1000))

# build("<net/>", {1, 2, 3}) from the C++ library; the same bytes are pinned in the C++ test.
GOLDEN_HEX = (
    "454f5642010001005000000002000000c30000000000000000000000dbc86f6e"
    "01000000224d056880000000000000000600000000000000020000001d80bc55"
    "c000000000000000030000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "3c6e65742f3e0000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "010203"
)


def u16(data: bytes, offset: int) -> int:
    return struct.unpack_from("<H", data, offset)[0]


def u32(data: bytes, offset: int) -> int:
    return struct.unpack_from("<I", data, offset)[0]


def u64(data: bytes, offset: int) -> int:
    return struct.unpack_from("<Q", data, offset)[0]


def entry(data: bytes, index: int) -> tuple[int, int, int, int]:
    """(kind, crc, offset, length) of section table entry `index`."""
    return struct.unpack_from("<IIQQ", data, HEADER_SIZE + index * ENTRY_SIZE)


def header_crc(data: bytes) -> int:
    header_size = u32(data, 8)
    region = bytearray(data[:header_size])
    region[28:32] = b"\0\0\0\0"
    return zlib.crc32(bytes(region))


def flipped(data: bytes, index: int, mask: int = 0x01) -> bytes:
    out = bytearray(data)
    out[index] ^= mask
    return bytes(out)


# --- round trip ---------------------------------------------------------------------------------


def test_round_trips_xml_and_weights():
    parsed = parse_blob(build_blob(XML, WEIGHTS))
    assert parsed.ir_xml == XML
    assert parsed.ir_weights == WEIGHTS
    assert parsed.minor_version == 1  # the version of the newest kind written (1.1: precompiled models)


def test_round_trips_a_model_without_weights():
    parsed = parse_blob(build_blob(XML))
    assert parsed.ir_xml == XML
    assert parsed.ir_weights == b""


@pytest.mark.parametrize("xml_length", [1, 2, 63, 64, 65, 127, 128, 129, 1000])
@pytest.mark.parametrize("weights_length", [0, 1, 64, 65])
def test_round_trips_payloads_of_lengths_around_the_alignment(xml_length, weights_length):
    xml = b"x" * xml_length
    weights = bytes(range(256)) * (weights_length // 256) + bytes(range(weights_length % 256))
    parsed = parse_blob(build_blob(xml, weights))
    assert (parsed.ir_xml, parsed.ir_weights) == (xml, weights)


def test_refuses_to_write_an_empty_xml():
    with pytest.raises(ValueError, match="empty"):
        build_blob(b"", WEIGHTS)


# --- layout, field by field ---------------------------------------------------------------------


def test_writes_the_documented_header():
    data = build_blob(XML, WEIGHTS)
    assert data[0:4] == b"EOVB"
    assert u16(data, 4) == 1  # major
    assert u16(data, 6) == 1  # minor: the newest kind written is 1.1's
    assert u32(data, 8) == HEADER_SIZE + 2 * ENTRY_SIZE  # header size, table included
    assert u32(data, 12) == 2  # section count
    assert u64(data, 16) == len(data)  # total size
    assert u32(data, 24) == 0  # flags
    assert u32(data, 28) == header_crc(data)


def test_writes_the_documented_section_table():
    data = build_blob(XML, WEIGHTS)
    xml_entry, weights_entry = entry(data, 0), entry(data, 1)
    assert xml_entry == (1, zlib.crc32(XML), 128, len(XML))  # 80-byte header rounded up to 64
    assert weights_entry == (2, zlib.crc32(WEIGHTS), 256, len(WEIGHTS))  # 128 + 76 rounded up
    assert data[128 : 128 + len(XML)] == XML
    assert data[256:] == WEIGHTS


@pytest.mark.parametrize("xml_length", [1, 63, 64, 65, 200])
@pytest.mark.parametrize("weights", [b"", b"\x01", WEIGHTS])
def test_aligns_payloads_and_zero_fills_the_gaps(xml_length, weights):
    xml = b"y" * xml_length
    data = build_blob(xml, weights)
    _, _, xml_offset, _ = entry(data, 0)
    _, _, weights_offset, _ = entry(data, 1)
    assert xml_offset % ALIGNMENT == 0 and weights_offset % ALIGNMENT == 0
    # Each payload starts at the first multiple of 64 after what precedes it; nothing else follows.
    assert xml_offset == -(-(HEADER_SIZE + 2 * ENTRY_SIZE) // ALIGNMENT) * ALIGNMENT
    assert weights_offset == -(-(xml_offset + xml_length) // ALIGNMENT) * ALIGNMENT
    assert len(data) == weights_offset + len(weights)
    assert data[HEADER_SIZE + 2 * ENTRY_SIZE : xml_offset] == bytes(xml_offset - 80)
    assert data[xml_offset + xml_length : weights_offset] == bytes(weights_offset - xml_offset - xml_length)


def test_output_matches_the_bytes_the_cpp_writer_produces():
    assert build_blob(b"<net/>", bytes([1, 2, 3])) == bytes.fromhex(GOLDEN_HEX)


# The C++ test pins this blob's CRC-32 (kGoldenPrecompiledCrc): both writers lay out a precompiled
# model alike (metadata lines sorted by property name, model bytes 64-aligned in the payload).
GOLDEN_PRECOMPILED_CRC = 0x03E5567E


def test_precompiled_output_matches_the_bytes_the_cpp_writer_produces():
    model = blob.PrecompiledModel(
        "CPU", "2026.4.1-x", {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": "f32"}, b"compiled"
    )
    data = build_blob(b"<net/>", bytes([1, 2, 3]), [model])
    assert (len(data), zlib.crc32(data)) == (392, GOLDEN_PRECOMPILED_CRC)


def test_round_trips_precompiled_models():
    models = [
        blob.PrecompiledModel("CPU", "2026.4.1-x", {"NUM_STREAMS": "1"}, b"\x01" * 70),
        blob.PrecompiledModel("NPU", "2026.4.1-x", {}, b"\x02"),
    ]
    parsed = parse_blob(build_blob(XML, WEIGHTS, models))
    assert parsed.precompiled == models
    assert (parsed.ir_xml, parsed.ir_weights) == (XML, WEIGHTS)


# The C++ test pins this blob's CRC-32 too (kGoldenInputArgumentsCrc).
GOLDEN_INPUT_ARGUMENTS_CRC = 0xDD3EF05A


def test_input_arguments_output_matches_the_bytes_the_cpp_writer_produces():
    data = build_blob(b"<net/>", bytes([1, 2, 3]), input_arguments=blob.InputArguments(5, (0, 2, 4)))
    assert (len(data), zlib.crc32(data)) == (276, GOLDEN_INPUT_ARGUMENTS_CRC)
    kind, _, offset, length = entry(data, 2)
    assert (kind, length) == (blob.SECTION_INPUT_ARGUMENTS, 20) and u16(data, 6) == 2
    assert struct.unpack_from("<5I", data, offset) == (5, 3, 0, 2, 4)


def test_round_trips_input_arguments_and_their_absence():
    arguments = blob.InputArguments(16, (0, 2, 3, 4, 5))
    assert parse_blob(build_blob(XML, WEIGHTS, input_arguments=arguments)).input_arguments == arguments
    assert parse_blob(build_blob(XML, WEIGHTS)).input_arguments is None
    # An IR that reads no call input at all is not "every input".
    assert parse_blob(build_blob(XML, input_arguments=blob.InputArguments(2, ()))).input_arguments.of_ir_input == ()


@pytest.mark.parametrize("call_inputs, indices", [(3, (1, 1)), (3, (2, 1)), (3, (0, 3)), (0, (0,))])
def test_input_arguments_must_be_increasing_call_inputs(call_inputs, indices):
    with pytest.raises(ValueError, match="not increasing call inputs"):
        blob.InputArguments(call_inputs, indices)


# Pinned in tests/cpp/blob/delegate_blob_test.cpp too (kGoldenNamedWeightsCrc).
GOLDEN_NAMED_WEIGHTS_CRC = 0x4F7AD705


def test_named_weights_output_matches_the_bytes_the_cpp_writer_produces():
    data = blob.build_blob(b"<net/>", b"", (), None, blob.NamedWeights("weights.k", 3, 0x55BC801D))
    assert (len(data), zlib.crc32(data)) == (217, GOLDEN_NAMED_WEIGHTS_CRC)


def test_round_trips_named_weights_with_their_flag():
    named = blob.NamedWeights.of("executorch_openvino.weights.ab", b"\x01\x02\x03")
    data = blob.build_blob(b"<net/>", b"", (), blob.InputArguments(2, (1,)), named)
    assert struct.unpack_from("<I", data, 24)[0] == blob.FLAG_NAMED_WEIGHTS  # the flags field
    parsed = blob.parse_blob(data)
    assert (parsed.minor_version, parsed.named_weights, parsed.ir_weights) == (3, named, b"")
    assert parsed.input_arguments == blob.InputArguments(2, (1,))
    assert blob.parse_blob(blob.build_blob(b"<net/>", b"w")).named_weights is None
    with pytest.raises(ValueError, match="either in the blob or in named data"):
        blob.build_blob(b"<net/>", b"w", (), None, named)
    with pytest.raises(ValueError, match="non-empty key"):
        blob.build_blob(b"<net/>", b"", (), None, blob.NamedWeights("", 1, 0))


# Pinned in tests/cpp/blob/delegate_blob_test.cpp too (kGoldenInputBoundsCrc).
GOLDEN_INPUT_BOUNDS_CRC = 0x49CDEADF
BOUNDS = (blob.InputBound(0, 0, 96), blob.InputBound(2, -4096, 4096))


def test_input_bounds_output_matches_the_bytes_the_cpp_writer_produces():
    data = build_blob(b"<net/>", bytes([1, 2, 3]), input_bounds=BOUNDS)
    assert (len(data), zlib.crc32(data)) == (312, GOLDEN_INPUT_BOUNDS_CRC)
    kind, _, offset, length = entry(data, 2)
    assert (kind, length) == (blob.SECTION_INPUT_BOUNDS, 56) and u16(data, 6) == 4
    assert struct.unpack_from("<II", data, offset) == (2, 0)
    assert struct.unpack_from("<IIqq", data, offset + 32) == (2, 0, -4096, 4096)


def test_round_trips_input_bounds_and_their_absence():
    parsed = parse_blob(build_blob(XML, WEIGHTS, input_arguments=blob.InputArguments(4, (0, 1, 3)), input_bounds=BOUNDS))
    assert (parsed.minor_version, parsed.input_bounds) == (4, BOUNDS)
    assert parsed.input_arguments == blob.InputArguments(4, (0, 1, 3))
    assert parse_blob(build_blob(XML, WEIGHTS)).input_bounds == ()


@pytest.mark.parametrize("bound", [(0, 5, 5), (0, 6, 5), (-1, 0, 1), (0, -(2**63) - 1, 0), (0, 0, 2**63)])
def test_an_input_bound_is_an_input_and_a_non_empty_range(bound):
    with pytest.raises(ValueError, match="low < high"):
        blob.InputBound(*bound)


def test_input_bounds_are_written_in_input_order():
    with pytest.raises(ValueError, match="increasing input order"):
        build_blob(XML, WEIGHTS, input_bounds=(blob.InputBound(1, 0, 2), blob.InputBound(1, 0, 3)))


# Pinned in tests/cpp/blob/delegate_blob_test.cpp too (kGoldenGrownCachesCrc).
GOLDEN_GROWN_CACHES_CRC = 0x555FD50B


def test_grown_caches_output_matches_the_bytes_the_cpp_writer_produces():
    data = build_blob(b"<net/>", bytes([1, 2, 3]), grown_caches=3)
    assert (len(data), zlib.crc32(data)) == (264, GOLDEN_GROWN_CACHES_CRC)
    kind, _, offset, length = entry(data, 2)
    assert (kind, length) == (blob.SECTION_GROWN_CACHES, 8) and u16(data, 6) == 5
    assert struct.unpack_from("<II", data, offset) == (3, 0)


def test_round_trips_grown_caches_and_their_absence():
    """A blob without the section (every blob written before 1.5) says nothing: 0."""
    parsed = parse_blob(build_blob(XML, WEIGHTS, input_bounds=BOUNDS, grown_caches=12))
    assert (parsed.minor_version, parsed.grown_caches, parsed.input_bounds) == (5, 12, BOUNDS)
    assert parse_blob(build_blob(XML, WEIGHTS, input_bounds=BOUNDS)).grown_caches == 0


@pytest.mark.parametrize("count", [-1, 2**32])
def test_a_count_of_grown_caches_fits_a_u32(count):
    with pytest.raises(ValueError, match="grown KV caches"):
        build_blob(XML, WEIGHTS, grown_caches=count)


def test_a_grown_caches_section_counting_none_is_refused():
    data = bytearray(build_blob(XML, WEIGHTS, grown_caches=1))
    _, _, offset, length = entry(bytes(data), 2)
    struct.pack_into("<I", data, offset, 0)  # then sealed again: only the count is wrong
    struct.pack_into("<I", data, HEADER_SIZE + 2 * ENTRY_SIZE + 4, zlib.crc32(bytes(data[offset:offset + length])))
    struct.pack_into("<I", data, 28, header_crc(bytes(data)))
    with pytest.raises(ValueError, match="grown caches section is malformed"):
        parse_blob(bytes(data))


def test_module_constants_match_the_specification():
    assert blob.MAGIC == b"EOVB"
    assert (blob.MAJOR_VERSION, blob.MINOR_VERSION) == (1, 5)
    assert (blob.SECTION_INPUT_ARGUMENTS, blob.SECTION_NAMED_WEIGHTS, blob.FLAG_NAMED_WEIGHTS) == (6, 7, 1)
    assert (blob.SECTION_INPUT_BOUNDS, blob.SECTION_GROWN_CACHES) == (8, 9)
    assert blob.PAYLOAD_ALIGNMENT == ALIGNMENT
    assert (blob.SECTION_IR_XML, blob.SECTION_IR_WEIGHTS, blob.SECTION_PRECOMPILED) == (1, 2, 3)


# --- refusing damaged blobs ---------------------------------------------------------------------


def test_refuses_every_single_bit_flip_in_the_header_and_table():
    data = build_blob(XML, WEIGHTS)
    for bit in range((HEADER_SIZE + 2 * ENTRY_SIZE) * 8):
        with pytest.raises(ValueError):
            parse_blob(flipped(data, bit // 8, 1 << (bit % 8)))


def test_refuses_a_changed_minor_version_because_the_header_checksum_covers_it():
    data = bytearray(build_blob(XML, WEIGHTS))
    struct.pack_into("<H", data, 6, 3)
    with pytest.raises(ValueError, match="checksum"):
        parse_blob(bytes(data))


@pytest.mark.parametrize("where", ["xml", "weights"])
def test_refuses_a_flipped_payload_byte(where):
    data = build_blob(XML, WEIGHTS)
    index = 0 if where == "xml" else 1
    _, _, offset, length = entry(data, index)
    for i in (0, length // 2, length - 1):
        with pytest.raises(ValueError, match=f"section {index} is corrupt"):
            parse_blob(flipped(data, offset + i))


def test_refuses_every_truncation():
    data = build_blob(XML, b"\x05" * 70)
    for length in range(len(data)):
        with pytest.raises(ValueError):
            parse_blob(data[:length])


def test_refuses_a_wrong_major_version():
    data = bytearray(build_blob(XML, WEIGHTS))
    struct.pack_into("<H", data, 4, 2)
    struct.pack_into("<I", data, 28, header_crc(bytes(data)))
    with pytest.raises(ValueError, match="major version 2"):
        parse_blob(bytes(data))


def test_ignores_a_section_of_an_unknown_kind():
    # xml, an unknown kind 99, weights; header and section checksums written correctly.
    unknown = b"from a newer writer"
    sections = [(1, XML, 128), (99, unknown, 256), (2, WEIGHTS, 320)]
    header_size = HEADER_SIZE + len(sections) * ENTRY_SIZE
    total = 320 + len(WEIGHTS)
    data = bytearray(total)
    struct.pack_into("<4sHHIIQII", data, 0, b"EOVB", 1, 3, header_size, len(sections), total, 0, 0)
    for i, (kind, payload, offset) in enumerate(sections):
        struct.pack_into("<IIQQ", data, HEADER_SIZE + i * ENTRY_SIZE, kind, zlib.crc32(payload), offset, len(payload))
        data[offset : offset + len(payload)] = payload
    struct.pack_into("<I", data, 28, header_crc(bytes(data)))
    parsed = parse_blob(bytes(data))
    assert (parsed.minor_version, parsed.ir_xml, parsed.ir_weights) == (3, XML, WEIGHTS)
