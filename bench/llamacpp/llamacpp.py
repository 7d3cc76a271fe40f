"""llama.cpp as a peer in the benchmarks: built from the source llama-cpp-python's sdist vendors
(PyPI, the only source this machine reaches), its CPU backend, and the same weights written as GGUF.

- `build()` downloads the sdist once (pip download), builds llama-bench, llama-quantize and
  llama-lookup with CMake + Ninja (this CPU's instruction sets, AMX aside: isa_options) into a cache
  folder (EXECUTORCH_OPENVINO_LLAMACPP_DIR, default ~/.cache/executorch_openvino/llamacpp); a few
  minutes on 2 cores, once.
- `write_gguf()` writes ExecuTorch's Llama (Meta's layout: rotary pairs of neighbouring channels, as
  llama.cpp's) as an F32 GGUF with a byte-level vocabulary of the model's size (the first 256 ids
  are bytes, so any text tokenizes, about one id per byte; the rest are placeholders): speed and
  acceptance measurements need no real tokenizer. `quantize()` makes Q4_0 / Q8_0 of it.
- `bench()` runs llama-bench (JSON); `lookup()` runs llama-lookup (prompt-lookup decoding) and
  parses its drafted / accepted counts and decode speed.
- `backend="openvino"` (build, bench): llama.cpp's own OpenVINO backend (ggml-openvino), built in a
  folder of its own against the openvino wheel's C++ package (it also needs OpenCL's headers and
  loader: Debian's ocl-icd-opencl-dev, opencl-headers), run on the CPU device, stateful.
- `mul_mat_perf()` runs one of test-backend-ops' MUL_MAT perf cases (llama.cpp's own kernel
  benchmark; built on first use, in a build folder of its own since it needs the tests switched on).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Dict, Optional

VERSION = "0.3.36"  # llama-cpp-python's sdist; vendor/llama.cpp inside
TARGETS = ("llama-bench", "llama-quantize", "llama-lookup")


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


BACKENDS = ("cpu", "openvino")
# How the OpenVINO backend runs: on the CPU, the KV cache as OpenVINO state (faster than its stateless
# mode here: 55.7 against 45.4 tok/s at SmolLM2-135M's shape, Q8_0).
OPENVINO_ENV = {"GGML_OPENVINO_DEVICE": "CPU", "GGML_OPENVINO_STATEFUL_EXECUTION": "1"}


def build(backend: str = "cpu") -> Path:
    """The folder holding the built tools of `backend` (each in a build folder of its own)."""
    if backend not in BACKENDS:
        raise ValueError(f"llama.cpp backend {backend!r}: one of {', '.join(BACKENDS)}")
    out = home() / ("build" if backend == "cpu" else "build-openvino")
    tools = out / "bin"
    options = _openvino_options() if backend == "openvino" else ()
    if not _built(out, [tools / target for target in TARGETS], tests=False, options=options):
        _cmake_build(out, TARGETS, tests=False, options=options)
    return tools


def _openvino_options():
    """CMake options building ggml-openvino against the openvino wheel in this environment."""
    import openvino

    package = Path(openvino.__file__).parent / "cmake"
    if not Path("/usr/include/CL/cl.h").exists():
        raise RuntimeError("llama.cpp's OpenVINO backend needs OpenCL's headers and loader: "
                           "apt-get install ocl-icd-opencl-dev opencl-headers")
    return ("-DGGML_OPENVINO=ON", f"-DOpenVINO_DIR={package}")


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


def _arguments(tests: bool, options=()) -> list:
    return ["-DCMAKE_BUILD_TYPE=Release", *isa_options(), "-DLLAMA_CURL=OFF",
            f"-DLLAMA_BUILD_TESTS={'ON' if tests else 'OFF'}", "-DLLAMA_BUILD_SERVER=OFF", *options]


def _built(out: Path, tools, tests: bool, options=()) -> bool:
    """Whether `tools` are in `out` and it was configured with the options a build would use now."""
    stamp = out / STAMP
    return (all(tool.exists() for tool in tools) and stamp.exists()
            and stamp.read_text() == "\n".join(_arguments(tests, options)))


def _cmake_build(out: Path, targets, tests: bool, options=()) -> None:
    """Configures the vendored source into `out` (CPU backend, this CPU's instructions (isa_options), and
    `options`) and builds `targets`. A folder configured with other options is configured anew."""
    ninja = Path(sys.executable).with_name("ninja")
    arguments = _arguments(tests, options)
    stamp = out / STAMP
    if stamp.exists() and stamp.read_text() != "\n".join(arguments):
        shutil.rmtree(out)
    subprocess.run(["cmake", "-S", str(source()), "-B", str(out), "-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}",
                    *arguments], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(out), "--target", *targets], check=True, capture_output=True)
    stamp.write_text("\n".join(arguments))


def build_kernel_test() -> Path:
    """test-backend-ops, built once beside the tools (LLAMA_BUILD_TESTS on, only that target)."""
    out = home() / "build-tests"
    tool = out / "bin" / "test-backend-ops"
    if not _built(out, [tool], tests=True):
        _cmake_build(out, ("test-backend-ops",), tests=True)
    return tool


# Bytes per block and values per block of ggml's weight types (ggml-common.h): a Q4_0 block is an f16 scale
# and 32 four-bit values, Q8_0 an f16 scale and 32 bytes, Q4_K 256 values in 144 bytes.
TYPE_SIZES = {"f32": (4, 1), "f16": (2, 1), "q8_0": (34, 32), "q4_0": (18, 32), "q4_K": (144, 256)}


def mul_mat_perf(type_a: str, m: int, k: int, n: int = 1) -> dict:
    """test-backend-ops perf on the CPU backend for MUL_MAT(type_a x f32, m, n, k): microseconds a run, the
    weights' bytes read per microsecond (GB/s; it reports FLOPS for this op), and the thread count it used
    (half the hardware threads)."""
    case = f"type_a={type_a},type_b=f32,m={m},n={n},k={k},"
    done = subprocess.run([str(build_kernel_test()), "perf", "-o", "MUL_MAT", "-b", "CPU", "-p", case],
                          capture_output=True, text=True, timeout=600)
    text = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout)
    for line in text.splitlines():
        if case.rstrip(",") in line and "us/run" in line:
            timing = re.search(r"([\d.]+)\s*us/run", line)
            us = float(timing.group(1)) if timing else None
            block_bytes, block_values = TYPE_SIZES[type_a]
            weight_bytes = m * k // block_values * block_bytes
            return {"us": us, "gb_s": round(weight_bytes / us / 1e3, 1) if us else None, "weight_mb": weight_bytes / 1e6,
                    "threads": max(1, (os.cpu_count() or 2) // 2), "line": line.strip()}
    return {"error": f"no result for {case} (exit {done.returncode}): {(done.stdout + done.stderr)[-500:]}"}


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


def bench(model: Path, prompt: int, generate: int, threads: int = 2, backend: str = "cpu") -> dict:
    """llama-bench's prompt and generation tokens/s (means over its repetitions)."""
    env = dict(os.environ, **(OPENVINO_ENV if backend == "openvino" else {}))
    done = subprocess.run([str(build(backend) / "llama-bench"), "-m", str(model), "-p", str(prompt), "-n",
                           str(generate), "-t", str(threads), "-r", "1", "-o", "json"], check=True,
                          capture_output=True, text=True, env=env)
    rows = json.loads(done.stdout)
    result = {}
    for row in rows:
        key = "prompt_tok_s" if row.get("n_prompt") else "decode_tok_s"
        result[key] = row["avg_ts"]
    return result


def lookup(model: Path, prompt: str, generate: int, draft: int = 5, threads: int = 2, context: int = 512) -> dict:
    """llama-lookup (prompt lookup decoding): drafted and accepted tokens, decode tokens/s."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "lookup.log"  # its closing statistics reach a log file, not always the console
        done = subprocess.run([str(build() / "llama-lookup"), "-m", str(model), "-p", prompt, "-n", str(generate),
                               "--spec-draft-n-max", str(draft), "-t", str(threads), "-c", str(context), "--temp", "0",
                               "--ignore-eos", "--log-file", str(log)], capture_output=True, text=True, errors="replace",
                              timeout=900)
        text = (log.read_text(errors="replace") if log.exists() else "") + done.stderr
    if done.returncode != 0:
        raise RuntimeError(f"llama-lookup failed ({done.returncode}): {text[-2000:]}")

    def number(pattern: str) -> Optional[float]:
        found = re.search(pattern, text)
        return float(found.group(1)) if found else None

    return {"drafted": number(r"n_drafted\s*=\s*(\d+)"), "accepted": number(r"n_accept\s*=\s*(\d+)"),
            "decode_tok_s": number(r"decoded\s+\d+\s+tokens in\s+[\d.]+\s+seconds, speed:\s+([\d.]+) t/s"),
            "log": text[-3000:]}
