"""The linear layers alone (`make bench-linear-stack`): a small LLM's decode step spends most of its time
in its linear layers, so this times exactly those, one token at a time, in OpenVINO's CPU plugin and in
ExecuTorch's XNNPACK, with the weight formats each side's recipe uses. It is the reproduction an
upstream report about OpenVINO's compressed-weight kernels can carry: no ExecuTorch delegate, no
attention, no cache, no Python loop in the OpenVINO rows (one `InferRequest.infer` a step).

The model is the transformer's linears in its order (q, k, v, o, gate, up, down per layer; the
projections' outputs summed back so nothing is dead code) at a shape from bench/hf_recipe (SmolLM2-135M
by default), M = 1 row. Variants:

  openvino int8 asym      NNCF INT8_ASYM per output channel (our recipe's and optimum-intel's int8)
  openvino int8 sym       NNCF INT8_SYM
  openvino int4 sym g32   NNCF INT4_SYM, groups of 32 (our recipe's int4 at this size)
  ... each with the CPU plugin's dynamic quantization of activations at its default (group 32) and off
  xnnpack 8da8w / 8da4w   torchao's Int8DynamicActivationIntxWeightConfig (int8 per channel / int4 in
                          groups of 32), as optimum-executorch's xnnpack recipe quantizes, lowered to
                          XNNPACK and run through executorch.runtime

    python bench/kernels/linear_stack.py [--size smollm2-135m] [--rounds 7] [--results-dir DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/
from common import paths  # noqa: E402

from executorch_openvino import benchmark  # noqa: E402

REPORT = {
    "description": [
        "A small LLM's linear layers alone, one token (M = 1) a call: OpenVINO's CPU plugin on the IR NNCF "
        "compresses (f32 inference precision, as the delegate's default), and ExecuTorch's XNNPACK with "
        "torchao's dynamic-activation quantization (optimum-executorch's xnnpack recipe). Interleaved rounds; "
        "median [lowest–highest]; ratios per round against the XNNPACK row of the same bit width."],
    "tables": [{"title": "The linear layers of one decode step", "columns": [
        {"title": "variant", "field": "variant"},
        {"title": "ms a step", "field": "latency_ms", "format": ".3f"},
        {"title": "weights MB", "field": "weights_mb", "format": ".1f"},
        {"title": "time / XNNPACK's", "field": "latency_ms", "vs_field": "baseline", "format": ".2f", "unit": "×"}]}],
}


class LinearStack(torch.nn.Module):
    """The linear layers of `layers` transformer blocks, in their order, for one hidden vector."""

    def __init__(self, dim: int, kv_dim: int, hidden: int, layers: int):
        super().__init__()
        self.blocks = torch.nn.ModuleList()
        for _ in range(layers):
            block = torch.nn.ModuleDict({
                "q": torch.nn.Linear(dim, dim, bias=False), "k": torch.nn.Linear(dim, kv_dim, bias=False),
                "v": torch.nn.Linear(dim, kv_dim, bias=False), "o": torch.nn.Linear(dim, dim, bias=False),
                "gate": torch.nn.Linear(dim, hidden, bias=False), "up": torch.nn.Linear(dim, hidden, bias=False),
                "down": torch.nn.Linear(hidden, dim, bias=False)})
            self.blocks.append(block)
        self.kv_dim = kv_dim

    def forward(self, x):
        for b in self.blocks:
            q, k, v = b["q"](x), b["k"](x), b["v"](x)
            # k and v join the residual so they stay live; the sum costs nothing next to the matmuls.
            h = x + b["o"](q) + torch.cat([k, v, q[..., 2 * self.kv_dim:]], dim=-1)
            x = h + b["down"](torch.nn.functional.silu(b["gate"](h)) * b["up"](h))
        return x


def stack_for(size_name: str) -> tuple:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hf_recipe"))
    import hf_recipe_models as models

    size = models.SIZES[size_name]
    kv_dim = size.dim // size.heads * size.kv_heads
    torch.manual_seed(0)
    model = LinearStack(size.dim, kv_dim, size.hidden, size.layers).eval()
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.02)
    return model, torch.randn(1, 1, size.dim), size


def openvino_variants(model, example, work: Path) -> dict:
    """IR per NNCF mode, each compiled with dynamic quantization at the plugin's default and off."""
    import nncf
    import openvino as ov

    core = ov.Core()
    converted = ov.convert_model(model, example_input=(example,))
    modes = {"int8 asym": dict(mode=nncf.CompressWeightsMode.INT8_ASYM),
             "int8 sym": dict(mode=nncf.CompressWeightsMode.INT8_SYM),
             "int4 sym g32": dict(mode=nncf.CompressWeightsMode.INT4_SYM, group_size=32, all_layers=True)}
    calls = {}
    data = {0: example.numpy()}
    for name, options in modes.items():
        compressed = nncf.compress_weights(converted.clone(), **options)
        path = work / f"{name.replace(' ', '_')}.xml"
        ov.save_model(compressed, path, compress_to_fp16=False)
        weights_mb = path.with_suffix(".bin").stat().st_size / 1e6
        for dq, label in ((None, "dynamic quantization 32 (default)"), ("0", "no dynamic quantization")):
            props = {"INFERENCE_PRECISION_HINT": "f32", "NUM_STREAMS": "1"}
            if dq is not None:
                props["DYNAMIC_QUANTIZATION_GROUP_SIZE"] = dq
            request = core.compile_model(core.read_model(path), "CPU", props).create_infer_request()
            calls[f"openvino {name}, {label}"] = (lambda r=request: r.infer(data), weights_mb,
                                                   "xnnpack 8da4w" if "int4" in name else "xnnpack 8da8w")
    return calls


def xnnpack_variants(model, example, work: Path) -> dict:
    import copy

    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime
    from torchao.quantization.granularity import PerAxis, PerGroup
    from torchao.quantization.quant_api import Int8DynamicActivationIntxWeightConfig, quantize_
    from torchao.utils import unwrap_tensor_subclass

    calls = {}
    runtime = Runtime.get()
    for name, dtype, granularity in (("8da8w", torch.int8, PerAxis(0)), ("8da4w", torch.int4, PerGroup(32))):
        quantized = copy.deepcopy(model)
        quantize_(quantized, Int8DynamicActivationIntxWeightConfig(weight_dtype=dtype, weight_granularity=granularity))
        unwrap_tensor_subclass(quantized)
        program = to_edge_transform_and_lower(torch.export.export(quantized, (example,)),
                                              partitioner=[XnnpackPartitioner()]).to_executorch()
        path = work / f"xnnpack_{name}.pte"
        path.write_bytes(program.buffer)
        method = runtime.load_program(path).load_method("forward")
        calls[f"xnnpack {name}"] = (lambda m=method: m.execute((example,)), path.stat().st_size / 1e6, None)
    return calls


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="smollm2-135m", help="a Llama size of bench/hf_recipe")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=700, help="timed calls per variant, over all rounds")
    parser.add_argument("--results-dir", type=Path, default=paths.RESULTS)
    args = parser.parse_args(argv)
    torch.set_num_threads(torch.get_num_threads())
    model, example, size = stack_for(args.size)
    with tempfile.TemporaryDirectory() as folder:
        calls = {**openvino_variants(model, example, Path(folder)), **xnnpack_variants(model, example, Path(folder))}
        runners = {name: benchmark.SequentialRunner(call) for name, (call, _, _) in calls.items()}
        timed = benchmark.interleaved(runners, args.rounds, calls=args.calls, warmup=20)
    run = benchmark.new_run("linear-stack", f"The linear layers of {args.size}'s decode step: OpenVINO against XNNPACK",
                            checkout=paths.REPO, report=REPORT, versions=["torch", "executorch", "openvino", "nncf",
                                                                          "torchao"],
                            settings={"size": args.size, "layers": size.layers, "dim": size.dim,
                                      "hidden": size.hidden, "rounds": args.rounds, "calls": args.calls})
    for name, slices in timed.slices.items():
        _, weights_mb, baseline = calls[name]
        benchmark.add_row(run, args.size, name, latency_ms=[s.latencies_ms for s in slices], weights_mb=weights_mb,
                          baseline=baseline or name)
    markdown = benchmark.save(benchmark.finish(run), args.results_dir)
    print(markdown.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
