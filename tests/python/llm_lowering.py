"""ExecuTorch's tiny Llama (and a transformers Llama with a static cache) exported the ways the LLM
tests lower it, lowered once per variant and process, with what the lowered program holds; and step
functions of eager PyTorch and of a loaded program in each variant's calling convention."""

from __future__ import annotations

import copy
import dataclasses
import functools
import gc
from dataclasses import dataclass
from pathlib import Path

import openvino as ov
import torch

import executorch_openvino
from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower
from executorch.runtime import Runtime
from executorch_openvino.container.blob import parse_blob
from executorch_openvino.llm.hf_export import export_causal_lm, static_cache_decoder
from executorch_openvino.runtime import library
from llm_models import (CONTEXT, eager_step, et_llama, export_et_llama, hf_llama, hf_method_step, hf_step,
                        method_step, with_custom_ops)
from lowering import blob_ir, delegate_calls, outside_ops

PROMPT = [5, 17, 99, 3, 42, 7, 64]
STEPS = 64
VARIANTS = ["dynamic_prompt", "one_token", "custom_ops", "hf_static_cache"]


@dataclass
class Lowered:
    model: torch.nn.Module  # eager
    partitioner: executorch_openvino.OpenvinoPartitioner
    pte: bytes
    buffers_to_mutate: dict  # what ExecuTorch itself still copies back after a call
    buffers: list  # the program's buffers
    delegate_calls: int
    delegate_arg_shapes: list
    outside_ops: list
    ir: ov.Model  # the delegate's IR
    grown_caches: int = 0  # how many KV caches the delegate's blob says grow


@functools.lru_cache(maxsize=None)
def lowered(variant: str = "dynamic_prompt", stateful: bool = True) -> Lowered:
    """The tiny Llama exported one way and lowered (what the lowered graph holds is read before
    to_executorch, which rewrites it)."""
    dynamic = variant != "one_token"
    if variant == "hf_static_cache":
        hf = hf_llama()
        exported = export_causal_lm(copy.deepcopy(hf), CONTEXT)
        model = static_cache_decoder(hf, CONTEXT)  # the eager reference, with its own cache
    else:
        model = et_llama(dynamic, use_sdpa_with_kv_cache_op=variant == "custom_ops")
        if variant == "custom_ops":
            model = with_custom_ops(model)
        exported = export_et_llama(model, dynamic)
    partitioner = executorch_openvino.OpenvinoPartitioner(stateful=stateful)
    # The custom ops are not core ATen: ExecuTorch's own LLM export lowers without its IR check.
    config = EdgeCompileConfig(_check_ir_validity=False) if variant == "custom_ops" else None
    edge = to_edge_transform_and_lower(exported, partitioner=[partitioner], compile_config=config)
    program = edge.exported_program()
    graph_module = program.graph_module
    calls = delegate_calls(graph_module.graph)
    processed = getattr(graph_module, calls[0].args[0].target).processed_bytes
    ir = blob_ir(processed)
    shapes = [tuple(a.meta["val"].shape) for a in calls[0].args[1:] if isinstance(a.meta.get("val"), torch.Tensor)]
    facts = Lowered(model, partitioner, b"", dict(program.graph_signature.buffers_to_mutate),
                    list(program.graph_signature.buffers), len(calls), shapes, outside_ops(graph_module.graph), ir,
                    parse_blob(processed).grown_caches)
    return dataclasses.replace(facts, pte=edge.to_executorch().buffer)


def eager_of(variant: str, model):
    """A step function of a fresh copy of the eager model, in the variant's calling convention."""
    return (hf_step if variant == "hf_static_cache" else eager_step)(copy.deepcopy(model))


def ours_of(variant: str, method):
    return (hf_method_step if variant == "hf_static_cache" else method_step)(method)


def steps(variant: str, case: "Lowered"):
    """(eager step, a step function of a freshly loaded program)."""
    return eager_of(variant, case.model), ours_of(variant, load(case.pte))


def load(pte):
    # Program.load_method hands back the same method for the same program: a second conversation
    # needs a program of its own.
    return Runtime.get().load_program(pte).load_method("forward")


def attentions():
    """Sorted "grown"/"paged", one a compiled model alive (earlier tests' methods collected first)."""
    gc.collect()
    return sorted(model.get("attention", "grown") for model in library.load().describe_compiled_models())


def hf_text_program(folder: Path) -> Path:
    """`folder` with a byte-level tokenizer.json and model.pte: transformers' tiny Llama of the tokenizer's
    vocabulary in the Hugging Face convention, every position's logits (what batched conversations need)."""
    from llm_tokenizer import train

    tokenizer = train(folder / "tokenizer.json")
    model = hf_llama(seed=3, vocab_size=tokenizer.get_vocab_size())
    edge = to_edge_transform_and_lower(export_causal_lm(model, CONTEXT),
                                       partitioner=[executorch_openvino.OpenvinoPartitioner()])
    (folder / "model.pte").write_bytes(edge.to_executorch().buffer)
    return folder
