"""Compressed linear layers at decode: what OpenVINO's CPU plugin runs for each weight form, how fast it reads
the weights, and llama.cpp's matrix-vector kernels on the same CPU (issue 30).

A decode step multiplies one token's activations by every weight matrix once, so its speed is the speed at
which the kernels read weights. Native OpenVINO only (no ExecuTorch, no delegate): one model per weight form,
a few matrices of llama.cpp's benchmark shape (4096 outputs, 14336 inputs; four of them, 235 M weights, so
that the weights do not stay in the 32 MiB L3) fed by one [1, 14336] input, built the way NNCF writes
compressed weights (codes -> Convert -> Subtract zero point -> Multiply scale -> Reshape -> MatMul), which the
CPU plugin fuses into one FullyConnectedCompressed node. Then the same weights as a decode step meets them:
SmolLM2-360M's 224 linear layers (dim 960, hidden 2560) one after another, small matrices each waiting for
the last. Every form and workload in the same interleaved rounds; for each, the kernel the plugin chose
(PERF_COUNT's exec type) and the share of the call it took.

llama.cpp: test-backend-ops' own MUL_MAT perf cases at the same shape, one token (n=1), built from the same
vendored source as the LLM bench's llama.cpp (bench/llamacpp); it runs one matrix over and over (half the
L3: partly cached), on hardware_concurrency / 2 threads (1 here); OpenVINO's single-matrix, one-thread row
is the like-for-like comparison.

    .venv/bin/python bench/kernels/fc_kernels.py [--rounds 5] [--forms ...] [--workloads ...] [--no-llamacpp]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common
from common import machine, reports, stats  # noqa: E402
from common.reports import say  # noqa: E402
from common.rounds import rotated  # noqa: E402

OUTPUTS, INPUTS = 4096, 14336  # llama.cpp's test-backend-ops MUL_MAT perf shape (m, k)


@dataclass(frozen=True)
class Form:
    name: str
    bits: int  # 32 / 16: float weights
    signed: bool = True
    group: int = 0  # 0: one scale per output channel
    note: str = ""

    @property
    def zero_point(self) -> bool:
        return self.bits <= 8 and not self.signed

    def bytes(self, n: int, k: int) -> int:
        """A [n, k] weight's bytes as stored: codes, f16 scales, zero points."""
        groups = k // self.group if self.group else 1
        total = n * k * self.bits // 8
        if self.bits <= 8:
            total += n * groups * 2  # f16 scales
            if self.zero_point:
                total += n * groups * self.bits // 8
        return total


FORMS: Dict[str, Form] = {form.name: form for form in (
    Form("f32", 32, note="bandwidth reference"),
    Form("f16", 16),
    Form("u8-channel", 8, signed=False, note="ours' and optimum-intel's int8"),
    Form("i8-channel", 8),
    Form("i8-g32", 8, group=32, note="Q8_0's layout"),
    Form("u4-g128", 4, signed=False, group=128, note="optimum-intel's int4 default"),
    Form("i4-g128", 4, group=128, note="ours' int4 (symmetric, groups of 128)"),
    Form("i4-g64", 4, group=64),
    Form("i4-g32", 4, group=32, note="Q4_0's layout"),
    Form("i4-channel", 4),
    Form("u4-channel", 4, signed=False),
)}


@dataclass(frozen=True)
class Workload:
    """Weight matrices ([outputs, inputs] each) and how they are fed: all from the one input (`chained`
    False: independent, as wide as the hardware allows), or each from the one before (a decode step's
    layers: one node after another, each waiting for the last)."""
    name: str
    shapes: tuple
    chained: bool = False

    def fits(self, form: Form) -> bool:
        return all(k % form.group == 0 for _, k in self.shapes) if form.group else True

    def megabytes(self, form: Form) -> float:
        return sum(form.bytes(n, k) for n, k in self.shapes) / 1e6


def _layers(dim: int, kv: int, hidden: int, layers: int) -> tuple:
    """A Llama decoder's linear layers in the order a decode step runs them: q, k, v, o, gate, up, down."""
    return tuple([(dim, dim), (kv, dim), (kv, dim), (dim, dim), (hidden, dim), (hidden, dim), (dim, hidden)] * layers)


WORKLOADS: Dict[str, Workload] = {w.name: w for w in (
    Workload("4x(4096x14336)", ((OUTPUTS, INPUTS),) * 4),
    Workload("1x(4096x14336)", ((OUTPUTS, INPUTS),)),
    # SmolLM2-360M's 32 layers (dim 960, 5 KV heads of 64, hidden 2560): 224 small matrices, 315 M weights.
    Workload("smollm2-360m layers", _layers(960, 320, 2560, 32), chained=True),
    # Llama-3.2-1B's 16 layers (dim 2048, 8 KV heads of 64, hidden 8192): 112 matrices, 973 M weights.
    Workload("llama3.2-1b layers", _layers(2048, 512, 8192, 16), chained=True),
)}


@dataclass(frozen=True)
class Setting:
    form: Form
    threads: int
    workload: Workload
    dynamic_quantization: Optional[int]  # None: the plugin's default

    @property
    def label(self) -> str:
        dq = "default" if self.dynamic_quantization is None else str(self.dynamic_quantization)
        return f"{self.form.name} t{self.threads} {self.workload.name} dq={dq}"

    def properties(self, profile: bool = False) -> Dict[str, str]:
        props = {"INFERENCE_NUM_THREADS": str(self.threads), "PERFORMANCE_HINT": "LATENCY",
                 "INFERENCE_PRECISION_HINT": "f32"}
        if self.dynamic_quantization is not None:
            props["DYNAMIC_QUANTIZATION_GROUP_SIZE"] = str(self.dynamic_quantization)
        if profile:
            props["PERF_COUNT"] = "YES"
        return props


def settings_for(forms: List[Form], workloads: List[Workload]) -> List[Setting]:
    """Each form at 2 and 1 threads with the plugin's defaults on the first workload; integer forms also
    without dynamic quantization of the activations (weight-only arithmetic) and, grouped, with activation
    groups the size of the weight groups; the llama.cpp-like forms also on a single matrix (test-backend-ops'
    conditions); every form at 2 threads on the other workloads its groups fit."""
    main, others = workloads[0], workloads[1:]
    chosen: List[Setting] = []
    for form in forms:
        chosen += [Setting(form, 2, main, None), Setting(form, 1, main, None)]
        if form.bits <= 8:
            chosen.append(Setting(form, 2, main, 0))
            if form.group and form.group != 32:
                chosen.append(Setting(form, 2, main, form.group))
        for workload in others:
            single = len(workload.shapes) == 1  # test-backend-ops' conditions: one matrix, one thread
            if single and form.name not in ("i4-g32", "i8-g32", "f16"):
                continue
            if workload.fits(form):
                chosen.append(Setting(form, 1 if single else 2, workload, None))
    return chosen


def _weight(ov, ops, form: Form, n: int, k: int, rng: np.random.Generator):
    """One [n, k] weight in `form`, decompressed in the graph as NNCF writes it."""
    if form.bits == 32:
        return ops.constant((rng.standard_normal((n, k), dtype=np.float32) * 0.02))
    if form.bits == 16:
        return ops.convert(ops.constant((rng.standard_normal((n, k), dtype=np.float32) * 0.02).astype(np.float16)),
                           "f32")
    element = {(8, False): ov.Type.u8, (8, True): ov.Type.i8, (4, False): ov.Type.u4, (4, True): ov.Type.i4}
    kind = element[(form.bits, form.signed)]
    shape = [n, k // form.group, form.group] if form.group else [n, k]
    scale_shape = shape[:-1] + [1]

    def codes(dims):
        tensor = ov.Tensor(kind, dims)
        tensor.data[...] = rng.integers(0, 256, tensor.data.shape, dtype=np.uint8).view(tensor.data.dtype)
        return ov.op.Constant(tensor)

    weight = ops.convert(codes(shape), "f16")
    if form.zero_point:
        weight = ops.subtract(weight, ops.convert(codes(scale_shape), "f16"))
    scale = (rng.random(scale_shape, dtype=np.float32) * 1e-3 + 1e-4).astype(np.float16)
    weight = ops.multiply(weight, ops.constant(scale))
    if form.group:
        weight = ops.reshape(weight, ops.constant(np.array([n, k], dtype=np.int64)), False)
    return ops.convert(weight, "f32")


def build_model(form: Form, workload: Workload, seed: int = 0):
    import openvino as ov
    import openvino.opset13 as ops

    rng = np.random.default_rng(seed)
    x = ops.parameter([1, workload.shapes[0][1]], np.float32, name="x")
    if not workload.chained:
        total = None
        for n, k in workload.shapes:
            y = ops.matmul(x, _weight(ov, ops, form, n, k, rng), False, True)
            total = y if total is None else ops.add(total, y)
        return ov.Model([ops.result(total)], [x], f"fc-{form.name}")
    # A decoder's linear layers, seven a layer: q, k, v from the layer's input; o from q; gate and up from o;
    # down from gate * up, added to the layer's input. k and v end in outputs of their own (as a cache would
    # take them), so that nothing is optimised away.
    kept, h = [], x
    shapes = list(workload.shapes)
    while shapes:
        (q, k, v, o, gate, up, down), shapes = shapes[:7], shapes[7:]

        def fc(inp, shape):
            return ops.matmul(inp, _weight(ov, ops, form, *shape, rng), False, True)

        query = fc(h, q)
        kept += [ops.result(fc(h, k)), ops.result(fc(h, v))]
        out = fc(query, o)
        h = ops.add(h, fc(ops.multiply(fc(out, gate), fc(out, up)), down))
    return ov.Model([ops.result(h), *kept], [x], f"fc-chain-{form.name}")


def kernel_of(compiled) -> Dict[str, object]:
    """The FullyConnected nodes' exec types and their share of one call's node time (PERF_COUNT)."""
    request = compiled.create_infer_request()
    x = np.random.default_rng(1).standard_normal(tuple(compiled.inputs[0].get_shape()), dtype=np.float32)
    for _ in range(3):
        request.infer({0: x})
    kinds, fc_time, all_time = set(), 0.0, 0.0
    for node in request.profiling_info:
        if node.status != node.Status.EXECUTED:
            continue
        spent = node.real_time.total_seconds()
        all_time += spent
        if node.node_type.startswith("FullyConnected") or node.node_type == "MatMul":
            kinds.add(f"{node.node_type}:{node.exec_type}")
            fc_time += spent
    return {"kernel": ", ".join(sorted(kinds)), "fc_share": fc_time / all_time if all_time else None}


def measure(settings: List[Setting], rounds: int, calls: int) -> Dict[str, dict]:
    import openvino as ov

    core = ov.Core()
    models: Dict[tuple, object] = {}
    compiled, results = {}, {}
    for setting in settings:
        key = (setting.form.name, setting.workload.name)
        if key not in models:
            models[key] = build_model(setting.form, setting.workload)
        compiled[setting.label] = core.compile_model(models[key], "CPU", setting.properties())
        profiled = core.compile_model(models[key], "CPU", setting.properties(profile=True))
        results[setting.label] = {"setting": setting, "times_ms": [], **kernel_of(profiled)}
        del profiled
        say(f"compiled {setting.label}: {results[setting.label]['kernel']}")
    models.clear()
    requests = {label: model.create_infer_request() for label, model in compiled.items()}
    inputs = {label: np.random.default_rng(2).standard_normal(tuple(model.inputs[0].get_shape()), dtype=np.float32)
              for label, model in compiled.items()}
    for label, request in requests.items():
        for _ in range(3):
            request.infer({0: inputs[label]})
    labels = list(requests)
    for r in range(rounds):
        for label in rotated(labels, r, reverse_odd=True):
            request, x = requests[label], inputs[label]
            timings = []
            for _ in range(calls):
                start = time.perf_counter()
                request.infer({0: x})
                timings.append((time.perf_counter() - start) * 1e3)
            results[label]["times_ms"].append(stats.median(timings))
        say(f"round {r + 1}/{rounds} done")
    return results


def llamacpp_rows(types: List[str]) -> Dict[str, dict]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llamacpp"))
    import llamacpp

    return {kind: llamacpp.mul_mat_perf(kind, m=OUTPUTS, k=INPUTS, n=1) for kind in types}


def report(results: Dict[str, dict], peers: Dict[str, dict], rounds: int, calls: int, header: str) -> str:
    lines = [f"# Compressed linear layers at decode, native OpenVINO and llama.cpp ({reports.stamp()})", "", header, "",
             f"Each cell: the median over {rounds} interleaved rounds of the median of {calls} calls, [lowest–highest "
             "round]. GB/s: the bytes of the weights as stored (codes, f16 scales, zero points) over the time of "
             "one call. dq: the CPU plugin's DYNAMIC_QUANTIZATION_GROUP_SIZE (activations quantized on the fly in "
             "groups of that many; 0: off, weight-only arithmetic in f32).", ""]
    lines += reports.table_head(["form", "threads", "matrices", "dq", "weights MB", "ms a call", "GB/s",
                                 "kernel (PERF_COUNT)", "FC share", "note"], "lrrrrrrlrl")
    for label, entry in results.items():
        setting: Setting = entry["setting"]
        megabytes = setting.workload.megabytes(setting.form)
        mid, low, high = stats.summary(entry["times_ms"])
        rates = [megabytes / 1e3 / (t / 1e3) for t in entry["times_ms"]]
        rate_mid, rate_low, rate_high = stats.summary(rates)
        share = entry.get("fc_share")
        lines.append(reports.row(setting.form.name, setting.threads, setting.workload.name,
                                 "default" if setting.dynamic_quantization is None else setting.dynamic_quantization,
                                 f"{megabytes:.0f}", f"{mid:.2f} [{low:.2f}–{high:.2f}]",
                                 f"{rate_mid:.1f} [{rate_low:.1f}–{rate_high:.1f}]", entry["kernel"],
                                 "–" if share is None else f"{share:.0%}", setting.form.note))
    if peers:
        lines += ["", "llama.cpp's CPU backend, test-backend-ops perf MUL_MAT (type_b f32, m 4096, n 1, k 14336; "
                  "its thread count, one matrix):", ""]
        lines += reports.table_head(["type", "threads", "µs a call", "GB/s", "its line"], "lrrrl")
        for kind, row in peers.items():
            lines.append(reports.row(kind, row.get("threads", "–"), row.get("us", "–"), row.get("gb_s", "–"),
                                     f"`{row.get('line', row.get('error', ''))}`"))
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=15, help="timed calls per setting per round")
    parser.add_argument("--workloads", default=",".join(list(WORKLOADS)[:3]),
                        help="comma-separated, the first the main one, of: " + ", ".join(WORKLOADS)
                        + " (default: the first three; the 1B layers are 4 GB in f32)")
    parser.add_argument("--forms", default=",".join(FORMS), help="comma-separated, of " + ", ".join(FORMS))
    parser.add_argument("--no-llamacpp", action="store_true", help="skip llama.cpp's kernels")
    reports.add_results_dir(parser)
    args = parser.parse_args()
    forms = [FORMS[name] for name in args.forms.split(",")]
    load_before = machine.load_average()
    workloads = [WORKLOADS[name] for name in args.workloads.split(",")]
    results = measure(settings_for(forms, workloads), args.rounds, args.calls)
    peers = {} if args.no_llamacpp else llamacpp_rows(["f32", "f16", "q8_0", "q4_0", "q4_K"])
    header = (f"- {machine.machine(load_before, machine.load_average())}\n"
              f"- {machine.versions('openvino', 'numpy')}")
    text = report(results, peers, args.rounds, args.calls, header)
    reports.print_and_save(text, reports.results_dir(args.results_dir), f"fc-kernels-{reports.stamp()}.md")


if __name__ == "__main__":
    main()
