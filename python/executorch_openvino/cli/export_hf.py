"""`export-hf MODEL_DIR --task TASK --out DIR`: a Hugging Face checkpoint exported by
optimum-executorch with the `openvino` recipe (executorch_openvino.optimum), every recipe option
a flag, then what each method delegated and what stayed on ExecuTorch's kernels."""

from __future__ import annotations

import collections
from pathlib import Path

from .argument_types import positive, precision_word
from .progress import say, step
from .user_errors import CliError, usage_error
from .export import parse_compile_options

# optimum-executorch's tasks (its task registry, 1.1.0).
TASKS = ("text-generation", "automatic-speech-recognition", "text2text-generation", "fill-mask",
         "image-classification", "multimodal-text-to-text", "image-text-to-text")
WEIGHTS = ("int8", "int8_sym", "int4", "int4_asym")
# Not operators of the model: ExecuTorch's memory planning and tuple unpacking.
_NOT_OPERATORS = ("getitem", "alloc", "executorch_call_delegate")


HELP = "export a Hugging Face model with optimum-executorch's openvino recipe"
DESCRIPTION = ("Loads MODEL (a folder saved with save_pretrained, or a hub id) with optimum-executorch's "
               "loader for TASK, lowers every method to executorch_openvino and writes OUT/model.pte (and model.ptd "
               "with --external-weights). Needs pip install 'executorch-openvino[optimum]'. The same as "
               "`optimum-cli export executorch --recipe openvino`, with the recipe's options as flags.")


def add_arguments(parser) -> None:
    parser.add_argument("model", metavar="MODEL", help="a folder saved with save_pretrained, or a hub id")
    parser.add_argument("--task", required=True, choices=TASKS, help="optimum-executorch's task")
    parser.add_argument("--out", "-o", required=True, type=Path, help="the folder to write model.pte to")
    parser.add_argument("--max-seq-len", type=positive(int), metavar="N",
                        help="context of the KV caches, prompt included (text generation: default 2048)")
    parser.add_argument("--use-custom-sdpa", action="store_true",
                        help="ExecuTorch's custom attention op (delegated too); with --use-custom-kv-cache, "
                        "what sliding-window models such as Gemma 3 need past their window")
    parser.add_argument("--use-custom-kv-cache", action="store_true", help="ExecuTorch's custom KV cache ops")
    parser.add_argument("--device", default="CPU", help="OpenVINO device to compile for at load time (default CPU)")
    parser.add_argument("--precision", type=precision_word, metavar="exact|fast",
                        help="exact: f32, eager's results (the CPU's default); fast: the device's fastest precision")
    parser.add_argument("--weights", choices=WEIGHTS,
                        help="compress the linear layers' weights with NNCF (int4: symmetric, in groups)")
    parser.add_argument("--group-size", type=int, metavar="N", help="int4's group size (default 128)")
    parser.add_argument("--compile-option", action="append", default=[], metavar="KEY=VALUE",
                        help="an OpenVINO property for compile_model (repeatable)")
    parser.add_argument("--precompile", action="append", default=[], metavar="DEVICE",
                        help="embed a model compiled for DEVICE on this machine (repeatable)")
    parser.add_argument("--external-weights", action="store_true",
                        help="the weights go to model.ptd beside model.pte (load both: run/generate --data)")
    parser.add_argument("--logits", choices=("last", "all"),
                        help="text-generation: last (default: forward returns the last position's logits) or all "
                        "(a row per position, as eager; what speculative decoding needs)")


def recipe_options(args) -> dict:
    options = {"device": args.device, "compile_options": parse_compile_options(args.compile_option) or None,
               "precision": args.precision, "weights": args.weights, "group_size": args.group_size,
               "precompile": args.precompile, "external_weights": args.external_weights, "logits": args.logits}
    return {key: value for key, value in options.items() if value not in (None, [], False)}


def _recipe_checked(options: dict) -> None:
    """Every option checked before the (slow) load and export."""
    from executorch_openvino import OpenvinoPartitioner

    try:
        OpenvinoPartitioner(options.get("device", "CPU"), compile_options=options.get("compile_options"),
                            precision=options.get("precision"), precompile=options.get("precompile", ()),
                            weights=options.get("weights"), group_size=options.get("group_size"))
    except (ValueError, ImportError) as error:
        raise usage_error(str(error)) from None


def _method_lines(program, backend_id: str):
    for method in program.methods:
        graph_module = program.exported_program(method).graph_module
        ours, outside = 0, collections.Counter()
        for node in graph_module.graph.nodes:
            if node.op != "call_function":
                continue
            name = getattr(node.target, "__name__", str(node.target))
            if name == "executorch_call_delegate":
                ours += getattr(graph_module, node.args[0].target).backend_id == backend_id
            elif not any(word in name for word in _NOT_OPERATORS):
                outside[str(node.target)] += 1
        rest = ", ".join(f"{op} x{count}" if count > 1 else op for op, count in sorted(outside.items()))
        yield f"  {method}: {ours} executorch_openvino partition(s); outside: {rest or 'nothing'}"


def main(args) -> int:
    import executorch_openvino

    options = recipe_options(args)
    _recipe_checked(options)
    try:
        import executorch_openvino.optimum  # noqa: F401  registers the recipes
        from optimum.exporters.executorch import main_export
    except ImportError as error:
        raise CliError(f"optimum-executorch is needed: pip install 'executorch-openvino[optimum]' ({error})") from None
    task_options = {"max_seq_len": args.max_seq_len, "use_custom_sdpa": args.use_custom_sdpa or None,
                    "use_custom_kv_cache": args.use_custom_kv_cache or None}
    task_options = {key: value for key, value in task_options.items() if value is not None}
    with step(f"exporting {args.model} for {args.task} with the openvino recipe"):
        programs = main_export(str(args.model), task=args.task, recipe="openvino", output_dir=str(args.out),
                               recipe_kwargs=options, **task_options)
    for name, program in programs.items():
        pte = args.out / f"{name}.pte"
        say(f"wrote {pte} ({pte.stat().st_size / 1e6:.2f} MB)")
        for line in _method_lines(program, executorch_openvino.BACKEND_ID):
            say(line)
    data = args.out / "model.ptd"
    if args.external_weights and data.is_file():
        say(f"wrote {data} ({data.stat().st_size / 1e6:.2f} MB): load it with the program")
    return 0
