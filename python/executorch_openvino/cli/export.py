"""`export MODULE:FACTORY --out model.pte`: torch.export, lower to the delegate, write the .pte,
and say how much was delegated and why the rest was not."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Dict, List, Tuple

from .argument_types import precision_word
from .dtypes import dtype_text, shape_text
from .model_factory import model_from_factory
from .progress import say, step
from .user_errors import CliError, usage_error

_NOT_OPERATORS = ("getitem", "executorch_call_delegate")


HELP = "export a PyTorch model, lower it to executorch_openvino and write a .pte"
DESCRIPTION = ("Imports MODULE (a dotted module name or a path to a .py file), calls FACTORY(), "
               "which returns an nn.Module or (module, example_inputs), exports it with torch.export, lowers "
               "it with OpenvinoPartitioner and writes the .pte.")


def add_arguments(parser) -> None:
    parser.add_argument("model", metavar="MODULE:FACTORY", help="e.g. mymodels:make_resnet or models.py:make")
    parser.add_argument("--out", "-o", required=True, type=Path, help="the .pte file to write")
    parser.add_argument("--device", default="CPU", help="OpenVINO device to compile for at load time (default CPU)")
    parser.add_argument(
        "--example-input",
        action="append",
        metavar="SHAPE:DTYPE",
        help="an example input, e.g. 1,3,224,224:float32 (repeat for each input, in order); "
        "needed when FACTORY returns only a module",
    )
    parser.add_argument(
        "--compile-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an OpenVINO property for compile_model (e.g. PERFORMANCE_HINT=LATENCY), or "
        "compress_to_fp16=1 (repeatable)",
    )
    parser.add_argument("--precision", type=precision_word, metavar="exact|fast",
                        help="exact: f32 on every device, eager's results; fast: the device's fastest precision "
                        "(bf16 or f16 where the hardware has it). Default: exact on CPU, the device's own "
                        "elsewhere; a load may choose again (docs/precision.md)")
    parser.add_argument("--external-weights", metavar="NAME",
                        help="write the weights to NAME.ptd beside the .pte instead of into it (load the program "
                        "with that data file: run/generate --data)")


def parse_compile_options(pairs: List[str]) -> Dict[str, object]:
    options: Dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise usage_error(f"--compile-option {pair!r} is not KEY=VALUE (e.g. PERFORMANCE_HINT=LATENCY)")
        if key == "compress_to_fp16":
            flag = value.strip().lower()
            if flag not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                raise usage_error(f"--compile-option {pair!r}: compress_to_fp16 takes 1 or 0")
            options[key] = flag in ("1", "true", "yes", "on")
        else:
            options[key] = value.strip()
    return options


def delegation_summary(edge_manager, backend_id: str) -> Tuple[int, int, int]:
    """(operators inside our delegates, operators left outside, number of our partitions)."""
    from executorch.exir.lowered_backend_module import LoweredBackendModule

    graph_module = edge_manager.exported_program().graph_module
    modules = [m for _, m in graph_module.named_children()
               if isinstance(m, LoweredBackendModule) and m.backend_id == backend_id]

    def is_operator(node) -> bool:
        return node.op == "call_function" and getattr(node.target, "__name__", "") not in _NOT_OPERATORS

    inside = sum(1 for m in modules for node in m.original_module.graph.nodes if is_operator(node))
    outside = sum(1 for node in graph_module.graph.nodes if is_operator(node))
    return inside, outside, len(modules)


def refusal_lines(edge_manager, refusals: Dict[str, str]) -> List[str]:
    """The reasons operators stayed outside, one line per (operator, reason) with a count."""
    from executorch_openvino.fx_graph import op_name

    graph_module = edge_manager.exported_program().graph_module
    targets = {node.name: node.target for node in graph_module.graph.nodes if node.op == "call_function"}
    grouped: "collections.Counter[Tuple[str, str]]" = collections.Counter()
    for node_name, reason in refusals.items():
        target = targets.get(node_name)
        if target is not None and getattr(target, "__name__", "") in _NOT_OPERATORS:
            continue
        grouped[(op_name(target) if target is not None else node_name, reason)] += 1
    return [f"  {name}{f' (x{count})' if count > 1 else ''}: {reason}"
            for (name, reason), count in sorted(grouped.items())]


def main(args) -> int:
    import torch

    import executorch_openvino
    from executorch.exir import to_edge_transform_and_lower

    options = parse_compile_options(args.compile_option)
    try:
        partitioner = executorch_openvino.OpenvinoPartitioner(device=args.device, compile_options=options,
                                                              external_weights=args.external_weights,
                                                              precision=args.precision)
    except ValueError as error:
        raise usage_error(str(error)) from None
    if args.out.suffix != ".pte":
        say(f"note: {args.out} does not end in .pte")

    with step(f"loading {args.model}"):
        model, inputs, note = model_from_factory(args.model, args.example_input)
    if inputs is None:
        raise usage_error(f"{args.model}() returned a module without example inputs: pass one --example-input "
                          "SHAPE:DTYPE per input (e.g. --example-input 1,3,224,224:float32)")
    described = ", ".join(f"{shape_text(t.shape)} {dtype_text(t.dtype)}" if isinstance(t, torch.Tensor) else repr(t)
                          for t in inputs)
    say(f"model: {type(model).__name__}, inputs {described} ({note})")

    with step("torch.export"):
        exported = torch.export.export(model, inputs)
    with step(f"lowering to executorch_openvino (device {partitioner.options.device})"):
        lowered = to_edge_transform_and_lower(exported, partitioner=[partitioner])
    # Counted before to_executorch(), which turns the graph's operators into out-variants in place.
    inside, outside, partitions = delegation_summary(lowered, executorch_openvino.BACKEND_ID)
    refusals = partitioner.last_support.refusals if partitioner.last_support is not None else {}
    lines = refusal_lines(lowered, refusals) if outside else []
    with step(f"writing {args.out}"):
        program = lowered.to_executorch()
        buffer = program.buffer
        try:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_bytes(buffer)
            if args.external_weights:
                program.write_tensor_data_to_file(str(args.out.parent))
        except OSError as error:
            raise CliError(f"cannot write {args.out}: {error}") from error
    say(f"wrote {args.out} ({len(buffer) / 1e6:.2f} MB)")
    if args.external_weights:
        data = args.out.parent / f"{args.external_weights}.ptd"
        say(f"wrote {data} ({data.stat().st_size / 1e6:.2f} MB): load it with the program (--data)")

    total = inside + outside
    share = 100.0 * inside / total if total else 0.0
    say(f"delegated {inside} of {total} operators ({share:.0f} %) in {partitions} partition(s)")
    if lines:
        say("left on ExecuTorch's kernels:")
        for line in lines:
            say(line)
    return 0
