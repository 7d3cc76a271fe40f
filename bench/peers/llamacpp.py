"""llama.cpp as a peer: built from the source llama-cpp-python's sdist vendors (PyPI, the only
source this machine reaches), its CPU backend, on the same weights written as GGUF.

- `build()` downloads the sdist once (pip download), builds llama-bench and llama-quantize
  with CMake + Ninja (this CPU's instruction sets, AMX aside: isa_options) into a cache
  folder (EXECUTORCH_OPENVINO_LLAMACPP_DIR, default ~/.cache/executorch_openvino/llamacpp); a few
  minutes on 2 cores, once.
- `write_gguf()` writes ExecuTorch's Llama (Meta's layout: rotary pairs of neighbouring channels, as
  llama.cpp's) as an F32 GGUF with a byte-level vocabulary of the model's size (the first 256 ids
  are bytes, so any text tokenizes, about one id per byte; the rest are placeholders): speed and
  acceptance measurements need no real tokenizer. `quantize()` makes Q4_0 / Q8_0 of it.
- `bench()` runs llama-bench (JSON), `Runner` as a conversation of the LLM benchmark.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Dict

VERSION = "0.3.36"  # llama-cpp-python's sdist; vendor/llama.cpp inside
TARGETS = ("llama-bench", "llama-quantize")


def home() -> Path:
    return Path(os.environ.get("EXECUTORCH_OPENVINO_LLAMACPP_DIR", Path.home() / ".cache" / "executorch_openvino" / "llamacpp"))


def source() -> Path:
    """vendor/llama.cpp of the sdist, downloaded and unpacked once."""
    unpacked = home() / f"llama_cpp_python-{VERSION}" / "vendor" / "llama.cpp"
    if unpacked.is_dir():
        return unpacked
    home().mkdir(parents=True, exist_ok=True)
    archive = home() / f"llama_cpp_python-{VERSION}.tar.gz"
    if not archive.exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                        f"llama-cpp-python=={VERSION}", "-d", str(home())], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(home(), filter="data")
    return unpacked


def build() -> Path:
    """The folder holding the built tools."""
    out = home() / "build"
    if not _built(out):
        _cmake_build(out)
    return out / "bin"


def built() -> bool:
    """Whether the tools are built (a smoke run uses them only then)."""
    return _built(home() / "build")


# ggml's x86 instruction-set options, by the /proc/cpuinfo flag that allows each.
_ISA_OPTIONS = {"sse4_2": "GGML_SSE42", "f16c": "GGML_F16C", "fma": "GGML_FMA", "bmi2": "GGML_BMI2", "avx": "GGML_AVX",
                "avx2": "GGML_AVX2", "avx_vnni": "GGML_AVX_VNNI", "avx512f": "GGML_AVX512",
                "avx512vbmi": "GGML_AVX512_VBMI", "avx512_vnni": "GGML_AVX512_VNNI", "avx512_bf16": "GGML_AVX512_BF16"}
_AMX_OPTIONS = {"amx_tile": "GGML_AMX_TILE", "amx_int8": "GGML_AMX_INT8", "amx_bf16": "GGML_AMX_BF16"}
AMX_VARIABLE = "EXECUTORCH_OPENVINO_LLAMACPP_AMX"


def isa_options() -> list:
    """This CPU's instruction sets as ggml's options, AMX left out unless AMX_VARIABLE is 1: ggml's AMX
    matmul crashed at its first tile instruction (SIGSEGV or SIGILL at ldtilecfg in its worker threads) on
    the Xeon VM these benchmarks ran on on 2026-12-05, where OpenVINO runs. -march=native (GGML_NATIVE) would
    switch AMX on by itself, so the sets are named one by one."""
    try:
        flags = set(next(line for line in Path("/proc/cpuinfo").read_text().splitlines()
                         if line.startswith("flags")).split(":", 1)[1].split())
    except (OSError, StopIteration):
        return ["-DGGML_NATIVE=ON"]
    chosen = dict(_ISA_OPTIONS, **(_AMX_OPTIONS if os.environ.get(AMX_VARIABLE) == "1" else {}))
    return ["-DGGML_NATIVE=OFF"] + [f"-D{option}={'ON' if flag in flags else 'OFF'}" for flag, option in chosen.items()]


STAMP = "executorch_openvino-options.txt"  # the CMake options a build folder was configured with


def _arguments() -> list:
    return ["-DCMAKE_BUILD_TYPE=Release", *isa_options(), "-DLLAMA_CURL=OFF", "-DLLAMA_BUILD_TESTS=OFF",
            "-DLLAMA_BUILD_SERVER=OFF"]


def _built(out: Path) -> bool:
    """Whether the tools are in `out` and it was configured with the options a build would use now."""
    stamp = out / STAMP
    return (all((out / "bin" / tool).exists() for tool in TARGETS) and stamp.exists()
            and stamp.read_text() == "\n".join(_arguments()))


def _cmake_build(out: Path) -> None:
    """Configures the vendored source into `out` (CPU backend, this CPU's instructions: isa_options) and
    builds the tools. A folder configured with other options is configured anew."""
    ninja = Path(sys.executable).with_name("ninja")
    arguments = _arguments()
    stamp = out / STAMP
    if stamp.exists() and stamp.read_text() != "\n".join(arguments):
        shutil.rmtree(out)
    subprocess.run(["cmake", "-S", str(source()), "-B", str(out), "-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}",
                    *arguments], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(out), "--target", *TARGETS], check=True, capture_output=True)
    stamp.write_text("\n".join(arguments))


def _gguf():
    sys.path.insert(0, str(source() / "gguf-py"))
    import gguf

    return gguf


def _byte_vocabulary(size: int):
    """GPT-2's printable stand-ins for the 256 bytes, then placeholders up to `size`."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    codes = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            codes.append(256 + extra)
            extra += 1
    by_byte = dict(zip(printable, (chr(c) for c in codes)))
    # One merge (llama.cpp refuses a BPE vocabulary without any) whose result is id 256.
    return [by_byte[b] for b in range(256)] + ["ab"] + [f"<unused{i}>" for i in range(size - 257)]


def write_gguf(state: Dict[str, "object"], *, dim: int, layers: int, heads: int, kv_heads: int, hidden: int,
               vocab: int, context: int, path: Path, norm_eps: float = 1e-5, rope_base: float = 10000.0) -> Path:
    """ExecuTorch's Llama weights (state dict names) as an F32 GGUF of llama.cpp's llama architecture."""
    import numpy as np

    gguf = _gguf()
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_context_length(context)
    writer.add_embedding_length(dim)
    writer.add_block_count(layers)
    writer.add_feed_forward_length(hidden)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_rope_dimension_count(dim // heads)
    writer.add_layer_norm_rms_eps(norm_eps)
    writer.add_rope_freq_base(rope_base)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    tokens = _byte_vocabulary(vocab)
    writer.add_token_list(tokens)
    writer.add_token_types([gguf.TokenType.NORMAL] * 257 + [gguf.TokenType.UNUSED] * (vocab - 257))
    writer.add_token_merges(["a b"])
    writer.add_bos_token_id(vocab - 1)
    writer.add_eos_token_id(vocab - 2)
    names = {"tok_embeddings.weight": "token_embd.weight", "norm.weight": "output_norm.weight",
             "output.weight": "output.weight"}
    per_layer = {"attention.wq": "attn_q", "attention.wk": "attn_k", "attention.wv": "attn_v", "attention.wo": "attn_output",
                 "feed_forward.w1": "ffn_gate", "feed_forward.w2": "ffn_down", "feed_forward.w3": "ffn_up",
                 "attention_norm": "attn_norm", "ffn_norm": "ffn_norm"}
    for layer in range(layers):
        for ours, theirs in per_layer.items():
            names[f"layers.{layer}.{ours}.weight"] = f"blk.{layer}.{theirs}.weight"
    for ours, theirs in names.items():
        writer.add_tensor(theirs, np.ascontiguousarray(state[ours].detach().float().numpy()))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def quantize(f32: Path, kind: str) -> Path:
    out = f32.with_name(f"{f32.stem}-{kind}.gguf")
    if not out.exists():
        subprocess.run([str(build() / "llama-quantize"), str(f32), str(out), kind], check=True, capture_output=True)
    return out


def bench(model: Path, prompt: int, generate: int, threads: int = 2) -> dict:
    """llama-bench's prompt and generation tokens/s (means over its repetitions)."""
    done = subprocess.run([str(build() / "llama-bench"), "-m", str(model), "-p", str(prompt), "-n", str(generate),
                           "-t", str(threads), "-r", "1", "-o", "json"], check=True, capture_output=True, text=True)
    rows = json.loads(done.stdout)
    result = {}
    for row in rows:
        key = "prompt_tok_s" if row.get("n_prompt") else "decode_tok_s"
        result[key] = row["avg_ts"]
    return result
