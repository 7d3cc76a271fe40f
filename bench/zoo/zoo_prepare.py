"""One zoo model made ready to run every way: exported, lowered to each delegate, and written to a
folder that bench_zoo_cpp and the Python side both read.

The folder: input<i>.npy (the method's inputs) and output<i>.npy (eager PyTorch's outputs), in the
method's order; ours.pte, xnnpack.pte, kernels.pte and et_openvino.pte (each when its lowering
worked), ours_bf16.pte (ours with INFERENCE_PRECISION_HINT=bf16); model.xml / model.bin, the IR
inside our delegate's blob; native.txt (device, properties and the IR's inputs and outputs, for
bench_zoo_cpp) and native.json (the same, for the Python native variant).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Optional, Union

from zoo_results import (ET_OV_CPP, ET_OV_PY, KERNELS_PY, NATIVE_CPP, NATIVE_CPP_REBIND, NATIVE_PY, OURS_BF16_CPP,
                         XNNPACK_CPP, XNNPACK_PY, ModelRun, Result)


def et_openvino_partitioner():
    """ExecuTorch's own OpenVINO partitioner, or why it cannot be had (it imports nncf)."""
    try:
        from executorch.backends.openvino.partitioner import OpenvinoPartitioner
        from executorch.exir.backend.compile_spec_schema import CompileSpec
    except Exception as error:
        text = str(error).strip().splitlines()[0] if str(error).strip() else ""
        return f"{type(error).__name__}: {text}"
    return OpenvinoPartitioner([CompileSpec("device", b"CPU")])


def _operator_counts(lowered, backend_id: str):
    from executorch.exir.lowered_backend_module import LoweredBackendModule

    graph_module = lowered.exported_program().graph_module
    modules = [m for _, m in graph_module.named_children()
               if isinstance(m, LoweredBackendModule) and m.backend_id == backend_id]
    inside = sum(1 for m in modules for n in m.original_module.graph.nodes
                 if n.op == "call_function" and n.target.__name__ != "getitem")
    outside = sum(1 for n in graph_module.graph.nodes if n.op == "call_function"
                  and n.target.__name__ not in ("getitem", "executorch_call_delegate"))
    return inside, outside, len(modules)


def _as_list(outputs) -> List:
    return list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]


def prepare(entry, folder: Path, run: ModelRun, et_openvino: Union[str, object], step, ours_only: bool = False,
            extra_ours: Optional[Dict[str, Dict[str, str]]] = None) -> list:
    """Exports and lowers `entry` into `folder`; records what could not be made on `run`. Returns the
    example inputs (torch tensors). `ours_only` skips every other lowering; `extra_ours` names more
    programs of ours to write, each with its compile options (bench/before_after/before_after.py uses both)."""
    import numpy as np
    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    import executorch_openvino

    model, inputs = entry.make()
    folder.mkdir(parents=True, exist_ok=True)
    for i, tensor in enumerate(inputs):
        np.save(folder / f"input{i}.npy", tensor.numpy())
    with torch.no_grad():
        eager = _as_list(model(*inputs))
    for i, tensor in enumerate(eager):
        np.save(folder / f"output{i}.npy", tensor.numpy())
    exported = torch.export.export(model, inputs)

    def lower(name, partitioners):
        lowered = to_edge_transform_and_lower(exported, partitioner=partitioners)
        (folder / f"{name}.pte").write_bytes(lowered.to_executorch().buffer)
        return lowered

    def lower_or_note(name, partitioners, variants):
        try:
            lower(name, partitioners)
        except Exception as error:
            for variant in variants:
                run.result(variant).note = f"lowering failed: {type(error).__name__}: {error}"[:300]

    with step("  lowering to executorch_openvino"):
        ours = lower("ours", [executorch_openvino.OpenvinoPartitioner()])
    inside, outside, partitions = _operator_counts(ours, executorch_openvino.BACKEND_ID)
    run.delegated = f"{inside}/{inside + outside} ops in {partitions} partition(s)"
    for name, options in (extra_ours or {}).items():
        with step(f"  lowering to executorch_openvino with {options}"):
            lower(name, [executorch_openvino.OpenvinoPartitioner(compile_options=options)])
    if not ours_only:
        with step("  lowering to XNNPACK"):
            lower_or_note("xnnpack", [XnnpackPartitioner()], (XNNPACK_CPP, XNNPACK_PY))
        with step("  lowering with no delegate"):
            lower_or_note("kernels", [], (KERNELS_PY,))
        with step("  lowering to executorch_openvino in bf16"):
            lower_or_note("ours_bf16", [executorch_openvino.OpenvinoPartitioner(
                compile_options={"INFERENCE_PRECISION_HINT": "bf16"})], (OURS_BF16_CPP,))
        if isinstance(et_openvino, str):
            mark_unavailable(run, (ET_OV_CPP, ET_OV_PY), et_openvino)
        else:
            with step("  lowering to ExecuTorch's OpenVINO delegate"):
                lower_or_note("et_openvino", [et_openvino], (ET_OV_CPP, ET_OV_PY))
    write_native(folder, run)
    return inputs


def write_native(folder: Path, run: ModelRun) -> None:
    """model.xml / model.bin from ours.pte's delegate blob, and how native OpenVINO is to run them."""
    from executorch_openvino.container import compile_specs
    from executorch_openvino.container.blob import parse_blob
    from executorch_openvino.benchmark.backends import single_partition

    found = single_partition((folder / "ours.pte").read_bytes(), "forward")
    if isinstance(found, str):
        mark_unavailable(run, (NATIVE_CPP, NATIVE_CPP_REBIND, NATIVE_PY), found)
        return
    delegate, data, call_args, plan_inputs, plan_outputs = found
    blob = parse_blob(data)
    options = compile_specs.from_compile_specs(delegate.compile_specs)
    # What the library compiles with: the program's properties plus its load-time defaults.
    properties = compile_specs.load_time_properties(options.device, options.properties, options.precision)
    (folder / "model.xml").write_bytes(blob.ir_xml)
    (folder / "model.bin").write_bytes(blob.ir_weights)
    # The delegate call's arguments are its inputs then its outputs, as method values; the IR's
    # inputs and outputs are in that order.
    input_positions = [plan_inputs.index(value) for value in call_args if value in plan_inputs]
    output_positions = [plan_outputs.index(value) for value in call_args if value in plan_outputs]
    lines = [f"device {options.device}"] + [f"property {key} {value}" for key, value in properties.items()]
    lines += [f"input input{j}.npy" for j in input_positions] + [f"output {j}" for j in output_positions]
    (folder / "native.txt").write_text("\n".join(lines) + "\n")
    (folder / "native.json").write_text(json.dumps({
        "device": options.device, "properties": properties,
        "input_positions": input_positions, "output_positions": output_positions,
    }))


def mark_unavailable(run: ModelRun, variants, reason: str) -> None:
    for variant in variants:
        run.results[variant] = Result(note=reason)
