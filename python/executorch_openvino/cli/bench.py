"""`bench model.pte`: latency of the .pte through executorch.runtime against native OpenVINO on the
same IR (and, given the model, XNNPACK and eager PyTorch), as a Markdown table.

Native OpenVINO is possible when the method is one executorch_openvino partition and nothing else:
the partition's IR is read from the .pte's delegate data and compiled with the same device and
properties, with one infer request whose inputs are set once.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

from ._common import CliError, model_from_factory, percentile, say, step, time_calls, usage_error
from .run import load_method_inputs

OURS = "executorch_openvino (executorch.runtime)"
NATIVE = "native OpenVINO (same IR and properties)"
XNNPACK = "XNNPACK (executorch.runtime)"
EAGER = "PyTorch eager"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="time a .pte against native OpenVINO on the same IR (and XNNPACK, given the model)",
        description="Median and p90 latency of a .pte's method through executorch.runtime, of native "
        "OpenVINO running the same IR, and with --model of the same model lowered to XNNPACK and in eager "
        "PyTorch.",
    )
    parser.add_argument("pte", type=Path, metavar="MODEL.pte")
    parser.add_argument("--method", default="forward", help="the method to time (default forward)")
    parser.add_argument("--iterations", "-n", type=int, default=50, help="timed calls per backend (default 50)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls first (default 5)")
    parser.add_argument("--input", action="append", metavar="FILE.npy",
                        help="an input (repeat for each, in order); default: deterministic values")
    parser.add_argument("--model", metavar="MODULE:FACTORY",
                        help="the model the .pte came from: also lowered to XNNPACK in memory and run eagerly")
    parser.add_argument("--plot", type=Path, metavar="FILE.png", help="also draw a bar chart (needs matplotlib)")
    parser.set_defaults(func=main)


@dataclass
class Row:
    backend: str
    times: List[float] = field(default_factory=list)
    note: str = ""  # why there are no times

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def p90(self) -> float:
        return percentile(self.times, 0.9)


# --- native OpenVINO ---------------------------------------------------------------------------------


def single_partition(pte_bytes: bytes, method: str):
    """(the delegate, its data, its input positions, its output positions) when `method` is exactly
    one executorch_openvino partition and nothing else; otherwise the reason as a string."""
    from executorch.exir._serialize._program import deserialize_pte_binary
    from executorch.exir.schema import DataLocation, DelegateCall, KernelCall

    from executorch_openvino import BACKEND_ID

    program = deserialize_pte_binary(pte_bytes).program
    plan = next((p for p in program.execution_plan if p.name == method), None)
    if plan is None:
        return f"no execution plan named {method!r}"
    instructions = [ins.instr_args for chain in plan.chains for ins in chain.instructions]
    kernels = sum(isinstance(args, KernelCall) for args in instructions)
    calls = [args for args in instructions if isinstance(args, DelegateCall)]
    ours = [d for d in plan.delegates if d.id == BACKEND_ID]
    if len(ours) != 1 or len(plan.delegates) != 1 or len(calls) != 1 or kernels:
        others = len(plan.delegates) - len(ours)
        return (f"the method has {len(ours)} executorch_openvino partition(s), {others} other delegate(s) and "
                f"{kernels} operator call(s) on ExecuTorch's kernels; native OpenVINO is compared only when one "
                "partition covers the whole method")
    delegate = ours[0]
    if delegate.processed.location != DataLocation.INLINE:
        return "the delegate's data is not in the .pte"
    data = program.backend_delegate_data[delegate.processed.index].data
    return delegate, bytes(data), calls[0].args, list(plan.inputs), list(plan.outputs)


def native_openvino(pte_bytes: bytes, method: str, inputs: Sequence) -> Tuple[Optional[Callable], Callable, str]:
    """(a call running one inference natively, a function returning its outputs as
    (method output index, array) pairs, a description) or (None, None, the reason)."""
    found = single_partition(pte_bytes, method)
    if isinstance(found, str):
        return None, None, found
    delegate, data, call_args, plan_inputs, plan_outputs = found

    import numpy as np
    import openvino as ov

    from executorch_openvino import compile_specs
    from executorch_openvino.blob import parse_blob

    blob = parse_blob(data)
    options = compile_specs.from_compile_specs(delegate.compile_specs)
    core = ov.Core()
    model = core.read_model(model=blob.ir_xml, weights=ov.Tensor(np.frombuffer(blob.ir_weights, np.uint8)))
    # What the library compiles with: the program's properties plus its load-time defaults.
    properties = compile_specs.load_time_properties(options.device, options.properties)
    compiled = core.compile_model(model, options.device, properties)
    count = len(compiled.inputs)
    if len(call_args) != count + len(compiled.outputs):
        return None, None, "the IR's inputs and outputs do not match the delegate call's"
    try:
        positions = [plan_inputs.index(value) for value in call_args[:count]]
    except ValueError:
        return None, None, "the delegate reads values that are not inputs of the method"
    request = compiled.create_infer_request()
    arrays = [np.ascontiguousarray(inputs[position].numpy()) for position in positions]
    for j, array in enumerate(arrays):
        request.set_input_tensor(j, ov.Tensor(array))

    def outputs():
        _ = arrays  # the request reads their memory: keep them alive with it
        result = []
        for k, value in enumerate(call_args[count:]):
            if value in plan_outputs:
                result.append((plan_outputs.index(value), request.get_output_tensor(k).data.copy()))
        return result

    described = ", ".join(f"{key}={value}" for key, value in properties.items())
    return request.infer, outputs, f"{options.device}{f' ({described})' if described else ''}"


# --- XNNPACK and eager -------------------------------------------------------------------------------


def xnnpack_method(model, inputs):
    """The model lowered to XNNPACK in memory, loaded through executorch.runtime; or the reason."""
    import torch

    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime

    try:
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    except ImportError as error:
        return f"this ExecuTorch wheel has no XNNPACK partitioner ({error})"
    if "XnnpackBackend" not in Runtime.get().backend_registry.registered_backend_names:
        return "this ExecuTorch runtime has no XnnpackBackend"
    with step("lowering the model to XNNPACK"):
        lowered = to_edge_transform_and_lower(torch.export.export(model, tuple(inputs)),
                                              partitioner=[XnnpackPartitioner()])
        buffer = lowered.to_executorch().buffer
    program = Runtime.get().load_program(buffer)
    method = program.load_method("forward")
    method.program = program  # the program holds the bytes the method runs from: keep it alive
    return method


# --- output ------------------------------------------------------------------------------------------


def table(rows: Sequence[Row]) -> List[str]:
    native = next((row for row in rows if row.backend == NATIVE and row.times), None)
    lines = ["| backend | median ms | p90 ms | ratio to native OpenVINO |", "| --- | ---: | ---: | ---: |"]
    for row in rows:
        if not row.times:
            lines.append(f"| {row.backend} | n/a | n/a | n/a |")
            continue
        ratio = f"{row.median / native.median:.3f}x" if native is not None and native.median > 0 else "n/a"
        lines.append(f"| {row.backend} | {row.median:.3f} | {row.p90:.3f} | {ratio} |")
    return lines


def plot(rows: Sequence[Row], path: Path, title: str) -> bool:
    """A bar chart of the medians with the p90 marked; False when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    timed = [row for row in rows if row.times]
    figure, axes = plt.subplots(figsize=(7, 0.6 * len(timed) + 1.6))
    names = [row.backend for row in timed][::-1]
    medians = [row.median for row in timed][::-1]
    upper = [row.p90 - row.median for row in timed][::-1]
    axes.barh(names, medians, xerr=[[0] * len(timed), upper], capsize=4, color="#4a7ebb")
    for y, value in enumerate(medians):
        axes.text(value, y, f" {value:.3f}", va="center", ha="left", fontsize=8)
    axes.set_xlabel("latency, ms (bar: median, whisker: p90)")
    axes.set_title(title, fontsize=10)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return True


def main(args) -> int:
    import numpy as np
    import torch

    if args.iterations < 1 or args.warmup < 0:
        raise usage_error("--iterations must be at least 1 and --warmup at least 0")
    program, inputs, notes = load_method_inputs(args.pte, args.method, args.input)
    say(f"{args.pte}: method {args.method!r}; {args.iterations} timed call(s) per backend after {args.warmup} warm-up")
    for note in notes:
        say(f"  {note}")
    rows: List[Row] = []

    with step("loading the method (OpenVINO compiles it)"):
        method = program.load_method(args.method)
    with step(f"timing {OURS}"):
        ours_times = time_calls(lambda: method.execute(inputs), args.iterations, args.warmup)
    rows.append(Row(OURS, ours_times))
    ours_outputs = method.execute(inputs)

    native_row = Row(NATIVE)
    with step("compiling the same IR with native OpenVINO"):
        infer, native_outputs, description = native_openvino(args.pte.read_bytes(), args.method, inputs)
    if infer is None:
        native_row.note = description
    else:
        with step(f"timing native OpenVINO, {description}"):
            native_row.times = time_calls(infer, args.iterations, args.warmup)
        differences = [float(np.max(np.abs(array.astype(np.float64) - ours_outputs[i].double().numpy()), initial=0.0))
                       for i, array in native_outputs() if isinstance(ours_outputs[i], torch.Tensor)]
        if differences:
            say(f"  outputs agree with executorch_openvino's: max |difference| {max(differences):.2e}")
    rows.append(native_row)

    xnnpack_row = Row(XNNPACK)
    if args.model is None:
        xnnpack_row.note = "pass --model MODULE:FACTORY (a .pte cannot be lowered again)"
        rows.append(xnnpack_row)
    else:
        model, _, _ = model_from_factory(args.model)
        try:
            xnnpack = xnnpack_method(model, inputs)
        except Exception as error:  # the model may not lower to XNNPACK: report it, keep the rest
            xnnpack = f"lowering to XNNPACK failed: {type(error).__name__}: {error}"
        if isinstance(xnnpack, str):
            xnnpack_row.note = xnnpack
        else:
            with step(f"timing {XNNPACK}"):
                xnnpack_row.times = time_calls(lambda: xnnpack.execute(inputs), args.iterations, args.warmup)
        rows.append(xnnpack_row)

        def eager():
            with torch.no_grad():
                model(*inputs)

        with step(f"timing {EAGER}"):
            rows.append(Row(EAGER, time_calls(eager, args.iterations, args.warmup)))

    say()
    for line in table(rows):
        say(line)
    for row in rows:
        if row.note:
            say(f"{row.backend}: n/a: {row.note}")
    say("executorch.runtime rows include its Python call (inputs wrapped, outputs copied); native OpenVINO "
        "is one reused infer request with its inputs set once.")

    if args.plot is not None:
        title = f"{args.pte.name} ({args.method}), {args.iterations} calls"
        try:
            drawn = plot(rows, args.plot, title)
        except OSError as error:
            raise CliError(f"cannot write {args.plot}: {error}") from error
        if drawn:
            say(f"wrote {args.plot}")
        else:
            say(f"--plot: matplotlib is not installed, so {args.plot} was not drawn (pip install matplotlib); "
                "the table above has the numbers")
    return 0
