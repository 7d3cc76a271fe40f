"""Writes the fuzzers' seed corpora (tests/fuzz/corpus/<fuzzer>/), small valid inputs the fuzzers
mutate from. Rerun after a change of the blob format or of the IR cases; the output is committed.

  blob_parse/     delegate blobs: the IR cases of tests/fixtures/make_ir_cases.py, one without
                  weights, one with a section of a kind from a newer minor version, and one with each
                  optional section (precompiled model, input arguments, named weights, input bounds,
                  grown caches)
  backend_init/   the backend_init_fuzzer's input: an IR's XML, a NUL byte, its weights
  state_file/     state files (src/state_file): none, one and two partitions, with the engine's tokens

Usage: python tests/fuzz/make_corpus.py [OUT_DIR]   (default: tests/fuzz/corpus)
"""

from __future__ import annotations

import importlib.util
import shutil
import struct
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "python"))
from executorch_openvino.container import blob  # noqa: E402

# The IR cases the C++ backend tests run; constant_in_place is left out for its 16 KB of weights.
_spec = importlib.util.spec_from_file_location("make_ir_cases", REPO / "tests" / "fixtures" / "make_ir_cases.py")
make_ir_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_ir_cases)
CASE_NAMES = ["add_broadcast", "matmul_bias_relu", "conv2d", "int64_input", "rank0_output", "rank0_input", "multi_io"]


def dynamic_batch_model() -> ov.Model:
    """A dynamic input dimension: the delegate's refusal path for dynamic shapes."""
    x = ops.parameter([-1, 4], np.float32, name="x")
    return ov.Model([ops.relu(x)], [x])


def ir_of(model: ov.Model) -> tuple[bytes, bytes]:
    with tempfile.TemporaryDirectory() as tmp:
        ov.save_model(model, f"{tmp}/model.xml", compress_to_fp16=False)
        return Path(f"{tmp}/model.xml").read_bytes(), Path(f"{tmp}/model.bin").read_bytes()


def with_unknown_section(data: bytes, kind: int) -> bytes:
    """The blob with its weights section (entry 1) relabelled as `kind`, checksums updated."""
    out = bytearray(data)
    struct.pack_into("<I", out, 32 + 24 * 1, kind)
    header_size = struct.unpack_from("<I", out, 8)[0]
    struct.pack_into("<I", out, 28, 0)
    struct.pack_into("<I", out, 28, zlib.crc32(bytes(out[:header_size])))
    return bytes(out)


def state_file(partitions, application: bytes = b"") -> bytes:
    """A state file as src/state_file/state_file.cpp writes it; partitions: (program, form, length, parts)."""
    payload = struct.pack("<I", len(partitions))
    for program, form, length, parts in partitions:
        payload += struct.pack("<QQ", program, len(form)) + form + struct.pack("<qI", length, len(parts))
        payload += b"".join(struct.pack("<Q", len(part)) + part for part in parts)
    payload += struct.pack("<Q", len(application)) + application
    return b"EOVSTATE" + struct.pack("<IQI", 1, len(payload), zlib.crc32(payload)) + payload


def write_state_files(folder: Path) -> None:
    tokens = b"EOVTOKN1" + struct.pack("<QQ4q", 3, 4, 1, 22, 333, 4444)  # the engine's: held, count, tokens
    form = b"paged, 2 caches, blocks of 32 positions in 64 bytes"
    (folder / "empty.state").write_bytes(state_file([]))
    (folder / "one.state").write_bytes(state_file([(7, form, 5, [bytes(range(64)), bytes(64)])], tokens))
    (folder / "two.state").write_bytes(state_file([(7, form, 33, [b"a" * 128, b"b" * 128]),
                                                   (9, b"", 0, [])], tokens))


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "corpus"
    blobs, inits, states = out / "blob_parse", out / "backend_init", out / "state_file"
    for folder in (blobs, inits, states):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    write_state_files(states)

    irs = {name: ir_of(make_ir_cases.CASES[name]()[0]) for name in CASE_NAMES}
    irs["dynamic_batch"] = ir_of(dynamic_batch_model())
    for name, (xml, weights) in irs.items():
        (inits / f"{name}.ir").write_bytes(xml + b"\0" + weights)
        (blobs / f"{name}.eovb").write_bytes(blob.build_blob(xml, weights))

    xml, weights = irs["matmul_bias_relu"]
    (blobs / "no_weights.eovb").write_bytes(blob.build_blob(irs["add_broadcast"][0]))
    (blobs / "unknown_kind.eovb").write_bytes(with_unknown_section(blob.build_blob(xml, weights), 99))
    if hasattr(blob, "PrecompiledModel"):
        precompiled = blob.PrecompiledModel("CPU", "2026.4.1-stand-in", {"INFERENCE_PRECISION_HINT": "f32"}, b"model")
        (blobs / "precompiled.eovb").write_bytes(blob.build_blob(xml, weights, [precompiled]))
    arguments = blob.InputArguments(3, (1,))
    (blobs / "input_arguments.eovb").write_bytes(blob.build_blob(xml, weights, (), arguments))
    named = blob.NamedWeights.of("executorch_openvino.weights.seed", weights)
    (blobs / "named_weights.eovb").write_bytes(blob.build_blob(xml, b"", (), arguments, named))
    bounds = (blob.InputBound(0, -4, 4),)
    (blobs / "input_bounds.eovb").write_bytes(blob.build_blob(xml, weights, (), arguments, None, bounds))
    (blobs / "grown_caches.eovb").write_bytes(blob.build_blob(xml, weights, (), arguments, None, bounds, 4))

    total = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"wrote {sum(1 for f in out.rglob('*') if f.is_file())} seeds ({total} bytes) to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
