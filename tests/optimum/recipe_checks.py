"""What every task's tests check of a program the `openvino` recipe made: which methods, what our
delegate took and what stayed on ExecuTorch's kernels, that no cache is left for ExecuTorch to
copy in and out (it lives in OpenVINO as state) and what that state is; and each export made once
per test module."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Callable, Dict, List

import executorch_openvino
from executorch_openvino.container.ir_names import exported_name

DELEGATE = "executorch_call_delegate"


def export(folder: Path, task: str, out: Path, recipe: str = "openvino", recipe_kwargs=None, **task_kwargs):
    """optimum-executorch's main_export with our recipe: {name: ExecutorchProgramManager}, and the
    .pte files written to `out`."""
    import executorch_openvino.optimum  # noqa: F401  registers the recipes
    from optimum.exporters.executorch import main_export

    return main_export(str(folder), task=task, recipe=recipe, output_dir=str(out),
                       recipe_kwargs=dict(recipe_kwargs or {}), **task_kwargs)


def exported_once(tmp_path_factory, make: Callable) -> Callable:
    """get(name) -> (ExecutorchProgramManager, the folder of its .pte): make(name, folder) exports
    it (main_export's result) the first time a name is asked for."""
    made = {}

    def get(name):
        if name not in made:
            out = tmp_path_factory.mktemp(f"{name}-pte")
            made[name] = (make(name, out)["model"], out)
        return made[name]

    return get


def openvino_variables(program, method: str, prefixed: bool = False) -> Dict[str, object]:
    """{variable id: shape} of the OpenVINO state in our delegate's IR(s) of `method` (ids as the
    exported program named the caches, unless `prefixed`)."""
    import numpy as np
    import openvino as ov

    from executorch_openvino.container.blob import parse_blob

    graph_module = program.exported_program(method).graph_module
    variables = {}
    for node in graph_module.graph.nodes:
        if node.op == "call_function" and DELEGATE in str(node.target):
            blob = parse_blob(getattr(graph_module, node.args[0].target).processed_bytes)
            weights = ov.Tensor(np.frombuffer(bytes(blob.ir_weights), np.uint8).copy())
            ir = ov.Core().read_model(bytes(blob.ir_xml).decode(), weights)
            variables.update({(v.get_info().variable_id if prefixed else exported_name(v.get_info().variable_id)):
                              v.get_info().data_shape
                              for v in ir.get_variables()})
    return variables


def method_report(program, method: str) -> Dict[str, object]:
    """backend ids of the delegate calls, the operators outside, and the buffers ExecuTorch mutates."""
    exported = program.exported_program(method)
    graph_module = exported.graph_module
    backends, outside = [], []
    for node in graph_module.graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem or _is_allocation(node):
            continue
        if DELEGATE in str(node.target):
            backends.append(getattr(graph_module, node.args[0].target).backend_id)
        else:
            outside.append(str(node.target))
    return {"backends": backends, "outside": outside,
            "mutated_buffers": sorted(exported.graph_signature.buffers_to_mutate.values())}


def _is_allocation(node) -> bool:
    """to_executorch's memory planning (memory.alloc): no operator of the model."""
    return getattr(node.target, "__name__", "") == "alloc" and "memory" in getattr(node.target, "__module__", "")


def assert_delegated(program, method: str, allowed_outside: List[str] = ()) -> Dict[str, object]:
    """One call of our delegate at least, none of another; nothing outside but `allowed_outside`
    (substrings of operator names, each with its reason in the caller); no buffer left to ExecuTorch."""
    report = method_report(program, method)
    assert report["backends"] and set(report["backends"]) == {executorch_openvino.BACKEND_ID}, report
    unexpected = [op for op in report["outside"] if not any(allowed in op for allowed in allowed_outside)]
    assert not unexpected, f"{method}: outside the delegate: {unexpected}"
    assert report["mutated_buffers"] == [], f"{method}: buffers ExecuTorch copies in and out: {report}"
    return report


def assert_greedy_steps_equal_eager(step: Callable, eager_logits: Callable, prompt: List[int], steps: int,
                                    check: Callable) -> List[int]:
    """Greedy decoding of our program (executorch_openvino.generation.greedy over `step(tokens, position)`,
    which returns the logits of the positions it was given, or the last one's), each step's logits checked
    against eager PyTorch's on the whole sequence so far, without a cache (`eager_logits(sequence)`: a row
    per position): the prompt's every row returned at the first step, then the new position.
    `check(got, want, what)` compares; returns the `steps` ids chosen."""
    from executorch_openvino.generation import greedy

    returned = []

    def recorded(tokens, position):  # each call's logits kept (a copy: a program may reuse its output)
        logits = step(tokens, position)
        returned.append(logits.clone() if hasattr(logits, "clone") else logits.copy())
        return logits

    chosen = greedy(recorded, prompt, steps)
    sequence = list(prompt)
    for index, (token, logits) in enumerate(zip(chosen, returned)):
        want = eager_logits(sequence)
        got, want = (logits, want[-len(logits):]) if index == 0 else (logits[-1:], want[-1:])
        check(got, want, f"step {index}, position {len(sequence) - 1}")
        sequence.append(token)
    return chosen


def causal_lm_step(ours, *first_inputs, token_a_call: bool = False) -> Callable:
    """step(tokens, position) over optimum's ExecuTorchModelForCausalLM (or multimodal model) forward: a row
    of logits per position given. `first_inputs` go with the call at position 0 only (an image's pixels);
    `token_a_call`: the program takes one token a call (static shapes), so the tokens are fed one at a time."""
    import torch

    def step(tokens: List[int], position: int):
        if token_a_call:
            return torch.cat([ours.forward(torch.tensor([[token]]), torch.tensor([position + i]))[0]
                              for i, token in enumerate(tokens)])
        extra = first_inputs if position == 0 else ()
        return ours.forward(torch.tensor([tokens]), torch.arange(position, position + len(tokens)), *extra)[0]

    return step
