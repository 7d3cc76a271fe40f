"""One zoo model made ready to run every way: exported, lowered to each delegate, and written to a
folder that bench_zoo_cpp and zoo.py both read.

The folder: input<i>.npy (the method's inputs) and output<i>.npy (eager PyTorch's outputs), in the
method's order; ours.pte, ours_bf16.pte (ours with INFERENCE_PRECISION_HINT=bf16), xnnpack.pte,
kernels.pte and et_openvino.pte, each when its lowering worked; model.xml / model.bin, the IR our
delegate got, with native.txt (device, properties, the method inputs feeding the IR, the method output
each IR output is); delegate.bin, our delegate's blob, with delegate.txt (its compile specs, the call's
inputs and outputs), for the delegate driven through BackendInterface alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict

from common import programs

PROGRAMS = {"ours": "ours.pte", "ours-bf16": "ours_bf16.pte", "xnnpack": "xnnpack.pte", "kernels": "kernels.pte",
            "et-openvino": "et_openvino.pte"}


def et_openvino_partitioner():
    """ExecuTorch's own OpenVINO partitioner, or why it cannot be had (it imports nncf)."""
    try:
        from executorch.backends.openvino.partitioner import OpenvinoPartitioner
        from executorch.exir.backend.compile_spec_schema import CompileSpec
    except Exception as error:
        return f"{type(error).__name__}: {(str(error).strip().splitlines() or [''])[0]}"
    return OpenvinoPartitioner([CompileSpec("device", b"CPU")])


def prepare(entry, folder: Path, step) -> Dict[str, str]:
    """Exports and lowers `entry` into `folder`. Returns what could not be made (program -> why) and,
    under "delegated", how much of the model our partitioner took."""
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
        eager = model(*inputs)
    for i, tensor in enumerate(eager if isinstance(eager, (tuple, list)) else [eager]):
        np.save(folder / f"output{i}.npy", tensor.numpy())
    exported = torch.export.export(model, inputs)
    et_openvino = et_openvino_partitioner()
    partitioners = {"ours": lambda: [executorch_openvino.OpenvinoPartitioner()],
                    "ours-bf16": lambda: [executorch_openvino.OpenvinoPartitioner(
                        compile_options={"INFERENCE_PRECISION_HINT": "bf16"})],
                    "xnnpack": lambda: [XnnpackPartitioner()], "kernels": lambda: [],
                    "et-openvino": lambda: [et_openvino]}
    missing = {}
    for name, make in partitioners.items():
        if name == "et-openvino" and isinstance(et_openvino, str):
            missing[name] = et_openvino
            continue
        try:
            with step(f"  lowering: {name}"):
                lowered = to_edge_transform_and_lower(exported, partitioner=make())
                (folder / PROGRAMS[name]).write_bytes(lowered.to_executorch().buffer)
        except Exception as error:  # reported; the other programs are still made
            missing[name] = f"lowering failed: {type(error).__name__}: {error}"[:300]
            if name == "ours":
                raise
            continue
        if name == "ours":
            inside, outside, partitions = programs.delegation(lowered, executorch_openvino.BACKEND_ID)
            missing["delegated"] = f"{inside}/{inside + outside} operators in {partitions} partition(s)"
    why = write_native(folder)
    if why:
        missing["native"] = missing["delegate"] = why
    return missing


def write_native(folder: Path) -> str:
    """The IR and the blob of ours.pte's one partition, and how native OpenVINO and the delegate alone
    run them; or why they cannot be (the method is not one partition)."""
    from executorch_openvino.benchmark.backends import partition_ir, single_partition

    pte = (folder / "ours.pte").read_bytes()
    ir = partition_ir(pte, "forward")
    if isinstance(ir, str):
        return ir
    delegate, blob, call_args, plan_inputs, _ = single_partition(pte, "forward")
    (folder / "model.xml").write_bytes(ir.xml)
    (folder / "model.bin").write_bytes(ir.weights)
    (folder / "delegate.bin").write_bytes(blob)
    lines = [f"device {ir.device}"] + [f"property {key} {value}" for key, value in ir.properties.items()]
    lines += [f"input input{j}.npy" for j in ir.input_positions] + [f"output {j}" for j in ir.output_positions]
    (folder / "native.txt").write_text("\n".join(lines) + "\n")
    call_inputs = call_args[:len(call_args) - len(ir.output_positions)]
    lines = [f"spec {spec.key} {bytes(spec.value).hex()}" for spec in delegate.compile_specs]
    lines += [f"input input{plan_inputs.index(v)}.npy" for v in call_inputs]
    lines += [f"output {j}" for j in ir.output_positions]
    (folder / "delegate.txt").write_text("\n".join(lines) + "\n")
    return ""
