"""`make demo`: a PyTorch model through the whole path, and how it compares.

Exports a ResNet-18 (random weights, 224x224), lowers it to executorch_openvino with
`to_edge_transform_and_lower`, saves the .pte, runs it from Python with `executorch.runtime` and
from C++ with the `executorch-openvino-run` runner, and prints the fraction of operators delegated,
the largest difference from eager PyTorch, and the median latency next to native OpenVINO running
the same IR (same properties, one infer request, input set once).
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "examples"))

import executorch_openvino  # noqa: E402  (its library joins ExecuTorch's runtime, imported below)
from executorch_openvino.cli import known_messages_hidden  # noqa: E402

# ExecuTorch's exporter imports torchao, which logs a "Failed to load" line per CUDA kernel library a
# CPU-only torch cannot load, and torch.export warns from inside its decompositions: the demo's output
# is its own, as the command line's is (the same known messages, nothing else, are hidden).
with known_messages_hidden():
    from executorch.exir import to_edge_transform_and_lower  # noqa: E402
    from executorch.exir.lowered_backend_module import LoweredBackendModule  # noqa: E402
    from executorch.runtime import Runtime  # noqa: E402
from executorch_openvino.container import compile_specs  # noqa: E402
from executorch_openvino.container.blob import parse_blob  # noqa: E402
from models import resnet18  # noqa: E402

RUNS = int(os.environ.get("DEMO_RUNS", "30"))


def operator_counts(lowered_program):
    """(operators inside our delegate, operators left on ExecuTorch's kernels, our lowered modules)."""
    graph_module = lowered_program.exported_program().graph_module
    modules = [m for _, m in graph_module.named_children()
               if isinstance(m, LoweredBackendModule) and m.backend_id == executorch_openvino.BACKEND_ID]
    inside = sum(1 for m in modules for n in m.original_module.graph.nodes
                 if n.op == "call_function" and n.target.__name__ != "getitem")
    outside = sum(1 for n in graph_module.graph.nodes if n.op == "call_function"
                  and n.target.__name__ not in ("getitem", "executorch_call_delegate"))
    return inside, outside, modules


def median_ms(run, runs=RUNS):
    run()  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def native_openvino(module: LoweredBackendModule, image: torch.Tensor):
    """The same IR compiled by OpenVINO directly with the same properties; returns a callable."""
    import numpy as np
    import openvino as ov

    blob = parse_blob(module.processed_bytes)
    options = compile_specs.from_compile_specs(module.compile_specs)
    core = ov.Core()
    model = core.read_model(model=blob.ir_xml, weights=ov.Tensor(np.frombuffer(blob.ir_weights, np.uint8)))
    properties = compile_specs.load_time_properties(options.device, options.properties, options.precision)  # as the library does
    request = core.compile_model(model, options.device, properties).create_infer_request()
    request.set_input_tensor(ov.Tensor(image.numpy()))
    return request.infer


def main() -> int:
    build = Path(os.environ.get("EXECUTORCH_OPENVINO_BUILD", REPO / "build"))
    found = executorch_openvino.info()
    print("== executorch_openvino demo ==")
    print(f"library:  {found.library_path} (backend {found.backend_id}, registered: {found.backend_registered})")
    print(f"OpenVINO: {found.openvino_version} at {found.openvino_runtime_path}, devices {', '.join(found.devices)}")
    print(f"ExecuTorch {found.executorch_version}, torch {torch.__version__}")
    if found.openvino_error:
        print(found.openvino_error)
        return 1

    model, (image,) = resnet18()
    parameters = sum(p.numel() for p in model.parameters()) / 1e6
    print(f"\nmodel: ResNet-18, {parameters:.1f} M parameters (random weights), input {tuple(image.shape)}")

    start = time.perf_counter()
    lowered = to_edge_transform_and_lower(
        torch.export.export(model, (image,)), partitioner=[executorch_openvino.OpenvinoPartitioner()]
    )
    pte = lowered.to_executorch().buffer
    path = build / "demo" / "resnet18.pte"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pte)
    print(f"export + lower + save: {time.perf_counter() - start:.1f} s -> {path} ({len(pte) / 1e6:.1f} MB)")

    inside, outside, modules = operator_counts(lowered)
    print(f"delegated: {inside} of {inside + outside} operators ({100 * inside / (inside + outside):.0f} %) "
          f"in {len(modules)} partition(s)")

    method = Runtime.get().load_program(path).load_method("forward")
    ours = method.execute([image])[0]
    with torch.no_grad():
        eager = model(image)
    difference = (ours - eager).abs().max().item()
    scale = eager.abs().max().item()
    print(f"parity with eager PyTorch: max |difference| {difference:.2e} (output scale {scale:.2f}, "
          f"relative {difference / max(scale, 1.0):.1e})")

    ours_ms = median_ms(lambda: method.execute([image]))
    native_ms = median_ms(native_openvino(modules[0], image)) if len(modules) == 1 else float("nan")
    cpp_ms, cpp_difference = run_from_cpp(build, path, image, eager)
    print(f"C++ (executorch-openvino-run): max |difference| from eager {cpp_difference:.2e}")
    print(f"median latency over {RUNS} runs:")
    print(f"  executorch_openvino from Python (executorch.runtime)   {ours_ms:7.2f} ms   {ours_ms / native_ms:.3f}x")
    print(f"  executorch_openvino from C++ (executorch-openvino-run) {cpp_ms:7.2f} ms   {cpp_ms / native_ms:.3f}x")
    print(f"  native OpenVINO (its Python API), same IR and properties {native_ms:7.2f} ms   1.000x")
    return 0


def run_from_cpp(build: Path, pte: Path, image: torch.Tensor, eager: torch.Tensor):
    """Runs the .pte with the C++ runner; returns its median latency (ms) and its largest
    difference from eager PyTorch."""
    import numpy as np

    folder = pte.parent
    np.save(folder / "image.npy", image.numpy())
    runner = build / "site" / "executorch_openvino" / "bin" / "executorch-openvino-run"
    result = subprocess.run(
        [str(runner), str(pte), "--input", str(folder / "image.npy"), "--output-dir", str(folder),
         "--iterations", str(RUNS)],
        capture_output=True, text=True, check=True,
    )
    median = float(re.search(r"p50:\s+([0-9.]+) ms", result.stdout).group(1))
    output = torch.from_numpy(np.load(folder / "output0.npy"))
    return median, (output - eager).abs().max().item()


if __name__ == "__main__":
    with known_messages_hidden():  # lowering warns once per copy of the program (see above)
        sys.exit(main())
