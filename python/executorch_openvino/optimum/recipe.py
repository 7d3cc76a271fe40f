"""The `openvino` recipe: what optimum-executorch calls with a task's exportable wrapper
(CausalLMExportableModule, Seq2SeqLMExportableModule, ...) once the Hugging Face model is loaded.

The wrapper's export() gives one ExportedProgram per method (a causal LM's "model"; Whisper's and
T5's "encoder", "text_decoder", "sampler"); all are lowered together with one OpenvinoPartitioner
into one program, whose methods keep those names (a lone program becomes "forward", as the xnnpack
recipe does), with the wrapper's metadata as constant methods (get_max_seq_len, get_eos_ids, ...)
for optimum's ExecuTorchModelFor* classes and ExecuTorch's TextLLMRunner. Caches the wrapper
registers as mutated buffers stay inside the delegate as OpenVINO state (partition/mutated_buffers.py).
"""

from __future__ import annotations

import inspect
from contextlib import contextmanager
from typing import Any, Dict, Iterator, Mapping, Optional, Sequence

# The options a recipe call takes (main_export(..., recipe_kwargs={...}), from_pretrained(...,
# recipe_kwargs={...}), executorch-openvino export-hf), with what each does.
OPTIONS = {
    "device": "OpenVINO device the program compiles for at load time (default CPU; a load may choose again)",
    "precision": "exact (f32, eager's results) or fast (the device's own default: bf16 / f16 where it has them)",
    "compile_options": "OpenVINO properties for compile_model, e.g. {'NUM_STREAMS': '1'}",
    "precompile": "devices to embed a compiled model for, e.g. ['CPU'] (made with this machine's OpenVINO)",
    "external_weights": "True: the delegated weights go to model.ptd beside model.pte (ExecuTorch's runtime "
                        "loads it with data_path; optimum's ExecuTorchModelFor* classes cannot)",
    "weights": "int8 or int4: weight-only compression of the linear layers with NNCF (the quantization extra)",
    "group_size": "int4's group size (default 128; a divisor of every compressed layer's input width)",
    "logits": "text-generation: last (default; forward returns the last position's logits, [1, 1, vocab], and "
              "computes the output layer for that position alone) or all (a row per position given, as eager)",
}
LOGITS = ("last", "all")


def lower_with_openvino(model, *, device: str = "CPU", precision: Optional[str] = None,
                        compile_options: Optional[Mapping[str, Any]] = None, precompile: Sequence[str] = (),
                        external_weights: bool = False, weights: Optional[str] = None,
                        group_size: Optional[int] = None, logits: str = "last", **unknown) -> Dict[str, Any]:
    """{"model": ExecutorchProgramManager}: `model`'s programs lowered to executorch_openvino."""
    if unknown:
        raise TypeError(f"the openvino recipe has no option {', '.join(sorted(unknown))}; it takes: "
                        + "; ".join(f"{name} ({what})" for name, what in OPTIONS.items()))
    if logits not in LOGITS:
        raise ValueError(f"logits is last or all, not {logits!r}")
    from executorch.exir import EdgeCompileConfig, ExecutorchBackendConfig, to_edge_transform_and_lower
    from executorch.exir.passes import MemoryPlanningPass

    from ..partitioner import OpenvinoPartitioner

    # The partitioner checks every option before the (slow) export.
    partitioner = OpenvinoPartitioner(device, compile_options=compile_options, precision=precision,
                                      precompile=precompile, external_weights="model" if external_weights else None,
                                      weights=weights, group_size=group_size)
    with _output_layer_rows(model, logits):
        programs = _exported(model)
    _refuse_torchao_quantization(programs)
    if len(programs) == 1:
        programs = {"forward": next(iter(programs.values()))}
    edge = to_edge_transform_and_lower(programs, partitioner=[partitioner],
                                       compile_config=EdgeCompileConfig(_check_ir_validity=False),
                                       constant_methods=dict(model.metadata or {}))
    # The methods' inputs are not planned into ExecuTorch's memory: a call reads the caller's tensors
    # where they are instead of copying them in first (a Whisper decoder's encoder states, 3 MB, at
    # every step; a long prompt's ids).
    config = ExecutorchBackendConfig(extract_delegate_segments=True,
                                     memory_planning_pass=MemoryPlanningPass(alloc_graph_input=False))
    return {"model": edge.to_executorch(config)}


@contextmanager
def _output_layer_rows(model, logits: str) -> Iterator[None]:
    """While a causal LM's wrapper exports, its Hugging Face model computes the output layer for the
    last position only (transformers' logits_to_keep=1), unless `logits` is "all". A prompt's every
    other row of logits is work nobody reads: optimum's ExecuTorchModelForCausalLM and ExecuTorch's
    TextLLMRunner choose from the last row, and at a 50k-150k vocabulary those rows are a fifth to a
    quarter of a prompt's compute. Models whose forward has no logits_to_keep export as they are."""
    hf = getattr(model, "model", None)
    if (logits == "all" or type(model).__name__ != "CausalLMExportableModule" or hf is None
            or "logits_to_keep" not in inspect.signature(hf.forward).parameters):
        yield
        return
    own = hf.__dict__.get("forward")  # an instance-level forward (a hook's) to put back
    original = hf.forward

    def forward(*args, **kwargs):
        kwargs.setdefault("logits_to_keep", 1)
        return original(*args, **kwargs)

    hf.forward = forward
    try:
        yield
    finally:
        if own is None:
            del hf.forward
        else:
            hf.forward = own


def _refuse_torchao_quantization(programs) -> None:
    """optimum-executorch's --qlinear / --qembedding quantize with torchao before the recipe runs; its
    dequantize ops have neither a rule in OpenVINO's frontend nor a portable ExecuTorch kernel, so such
    a program could not run. The recipe compresses the weights itself, the way OpenVINO runs fastest."""
    for name, program in programs.items():
        found = sorted({str(node.target) for node in program.graph.nodes
                        if node.op == "call_function" and str(node.target).startswith("torchao.")})
        if found:
            raise ValueError(
                f"the {name!r} program holds torchao's quantization ({', '.join(found)}), made by "
                "optimum-executorch's --qlinear / --qembedding: the openvino recipe compresses weights itself, "
                "with NNCF. Drop those arguments and use recipe openvino_int8 or openvino_int4 (optimum-cli), "
                "recipe_kwargs={'weights': 'int4', 'group_size': 128} (Python) or executorch-openvino export-hf "
                "--weights int4")


def _exported(model) -> Dict[str, Any]:
    """The wrapper's programs; a failure of optimum's own export that no recipe avoids, named."""
    try:
        return dict(model.export())
    except Exception as error:
        limit = _known_export_limit(model)
        if limit is None:
            raise
        raise NotImplementedError(limit) from error


def _known_export_limit(model) -> Optional[str]:
    """Why optimum-executorch's own export of `model` fails whatever the recipe, when that is known."""
    if type(getattr(model, "model", None)).__name__ == "T5ForConditionalGeneration":
        from importlib.metadata import version

        return (f"optimum-executorch {version('optimum-executorch')} cannot export T5 with transformers "
                f"{version('transformers')}, whatever the recipe (xnnpack fails the same way): its text_decoder's "
                "cross-attention cache has max_seq_len rows while the encoder's length is dynamic, and T5's "
                "cross-attention adds a mask of the encoder's length to a bias of the cache's length "
                "(huggingface/optimum-executorch#230)")
    return None
