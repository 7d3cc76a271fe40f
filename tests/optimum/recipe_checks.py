"""What every task's tests check of a program the `openvino` recipe made: which methods, what our
delegate took and what stayed on ExecuTorch's kernels, that no cache is left for ExecuTorch to
copy in and out (it lives in OpenVINO as state) and what that state is; and each export made once
per test module."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Callable, Dict, List

import executorch_openvino
from executorch_openvino.ir_passes.grown_cache import GROWN_VARIABLE_PREFIX

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


def openvino_variables(program, method: str) -> Dict[str, object]:
    """{variable id: shape} of the OpenVINO state in our delegate's IR(s) of `method`."""
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
            variables.update({v.get_info().variable_id.removeprefix(GROWN_VARIABLE_PREFIX): v.get_info().data_shape
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
