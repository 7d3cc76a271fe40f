"""Small helpers the Python tests share: a small network, lowering to a .pte in memory or in a folder,
loading its forward method, what a lowered graph delegated, and comparing outputs with eager PyTorch."""

from __future__ import annotations

import operator
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import torch
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime
from torch import nn

import executorch_openvino
from executorch_openvino.fx_graph import op_name
from zoo_models import GLOBAL_REL_TOL

DELEGATE_CALL = torch.ops.higher_order.executorch_call_delegate


class SmallNet(torch.nn.Module):
    """Conv, ReLU, pooling and a linear layer: fully delegated unless told otherwise."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).mean((2, 3)))


def lower(programs, inputs=None, **partitioner_options) -> bytes:
    """A .pte of `programs` (an ExportedProgram, a dict of them, or a module exported with
    `inputs`) lowered with OpenvinoPartitioner(**partitioner_options)."""
    if isinstance(programs, torch.nn.Module):
        programs = torch.export.export(programs, inputs)
    partitioner = executorch_openvino.OpenvinoPartitioner(**partitioner_options)
    return to_edge_transform_and_lower(programs, partitioner=[partitioner]).to_executorch().buffer


def small_net_program(seed: int = 0, **partitioner_options) -> tuple:
    """(a seeded SmallNet, an input for it, its .pte lowered with OpenvinoPartitioner(**partitioner_options))."""
    torch.manual_seed(seed)
    model = SmallNet().eval()
    x = torch.randn(1, 3, 12, 12)
    return model, x, lower(model, (x,), **partitioner_options)


def load_forward(pte):
    """The forward method of a program (bytes or a path) loaded through executorch.runtime."""
    return Runtime.get().load_program(pte).load_method("forward")


def compiled_model_counts() -> Dict[str, int]:
    """How many compiled models the library has made and reused in this process, so far."""
    described = executorch_openvino.runtime.library.loaded().describe_runtime()
    return {key: int(described[key]) for key in ("compiled_models_created", "compiled_models_reused")}


def delegate_calls(graph: torch.fx.Graph) -> List[torch.fx.Node]:
    return [n for n in graph.nodes if n.op == "call_function" and n.target is DELEGATE_CALL]


def outside_ops(graph: torch.fx.Graph) -> List[str]:
    """The operators left on ExecuTorch's own kernels."""
    return [
        op_name(n.target)
        for n in graph.nodes
        if n.op == "call_function" and n.target is not DELEGATE_CALL and n.target is not operator.getitem
    ]


def blob_ir(processed: bytes):
    """The OpenVINO model (ov.Model) inside one of our delegate blobs."""
    import numpy as np
    import openvino as ov

    from executorch_openvino.container.blob import parse_blob

    blob = parse_blob(processed)
    weights = ov.Tensor(np.frombuffer(bytes(blob.ir_weights), np.uint8).copy())
    return ov.Core().read_model(bytes(blob.ir_xml).decode(), weights)


@dataclass
class Lowered:
    backend_ids: List[str]  # of every delegate call, in graph order
    outside_ops: List[str]  # operators left on ExecuTorch's own kernels
    refusals: Dict[str, str]  # the partitioner's reasons for the operator nodes it refused
    pte: Path
    method: object  # executorch.runtime.Method
    program: object  # kept alive with its method

    def run(self, inputs: Sequence) -> List:
        return list(self.method.execute(list(inputs)))


def lower_and_load(model: nn.Module, inputs: tuple, folder: Path, name: str = "model", compile_config=None,
                   **partitioner_args) -> Lowered:
    """`model` exported with `inputs`, lowered with OpenvinoPartitioner(**partitioner_args), written to
    folder/name.pte and its forward method loaded, with what the lowered graph delegated."""
    exported = torch.export.export(model, inputs)
    partitioner = executorch_openvino.OpenvinoPartitioner(**partitioner_args)
    edge = to_edge_transform_and_lower(exported, partitioner=[partitioner], compile_config=compile_config)
    # Read before to_executorch(), which rewrites this graph in place (out variants, allocations).
    graph_module = edge.exported_program().graph_module
    backend_ids = [getattr(graph_module, call.args[0].target).backend_id for call in delegate_calls(graph_module.graph)]
    outside = outside_ops(graph_module.graph)
    refusals = {node: why for node, why in partitioner.last_support.refusals.items() if why != "not a call"}
    path = folder / f"{name}.pte"
    path.write_bytes(edge.to_executorch().buffer)
    program = Runtime.get().load_program(str(path))
    return Lowered(backend_ids, outside, refusals, path, program.load_method("forward"), program)


def flatten(value) -> List:
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in flatten(item)]
    return [value]


def eager(model: nn.Module, inputs: Sequence) -> List[torch.Tensor]:
    with torch.no_grad():
        return flatten(model(*inputs))


def assert_matches(outputs: Sequence, expected: Sequence, rel_tol: float = GLOBAL_REL_TOL,
                   abs_tol: Optional[float] = None) -> None:
    """fp outputs element by element: |out - ref| <= rel_tol * |ref| + abs_tol, so a small element is
    held to its own size, not to the largest element's; abs_tol (for sums that cancel) is rel_tol
    times the tensor's mean |ref| unless given. NaN and infinities where eager has them; integer and
    bool outputs exactly."""
    assert len(outputs) == len(expected), f"{len(outputs)} outputs, eager has {len(expected)}"
    for i, (out, ref) in enumerate(zip(outputs, expected)):
        assert isinstance(out, torch.Tensor), f"output {i}: {type(out).__name__}, expected a tensor"
        assert out.dtype == ref.dtype, f"output {i}: dtype {out.dtype}, eager {ref.dtype}"
        assert out.shape == ref.shape, f"output {i}: shape {tuple(out.shape)}, eager {tuple(ref.shape)}"
        if ref.is_floating_point():
            assert torch.equal(out.isnan(), ref.isnan()), f"output {i}: NaN where eager has none, or not where it has"
            finite = ref.isfinite()
            assert torch.equal(out[~finite], ref[~finite]), f"output {i}: infinities differ from eager's"
            out, ref = out[finite].double(), ref[finite].double()
            if ref.numel() == 0:
                continue
            floor = rel_tol * ref.abs().mean() if abs_tol is None else abs_tol
            allowed = rel_tol * ref.abs() + floor
            excess = (out - ref).abs() - allowed
            worst = int(excess.argmax())
            assert excess[worst] <= 0, (
                f"output {i}: element {worst} is {out[worst].item():.6g}, eager {ref[worst].item():.6g} "
                f"(allowed +-{allowed[worst].item():.3g}); {(excess > 0).sum().item()} of {ref.numel()} elements off"
            )
        else:
            assert torch.equal(out, ref), f"output {i} ({ref.dtype}) differs from eager"


def other_values(inputs: tuple) -> tuple:
    """The same inputs with their elements rotated: new values, still valid (token ids stay ids),
    same shapes and dtypes; Python scalars unchanged (torch.export specialised them)."""
    return tuple(
        torch.roll(x.flatten(), 1).reshape(x.shape) if isinstance(x, torch.Tensor) else x for x in inputs
    )


MISSING_STATE_HELPER = "/nowhere/libexecutorch_openvino_state.so"


def run_without_state_helper(script: str, library_path, *args) -> subprocess.CompletedProcess:
    """Runs `script` (python -c) in a process whose state helper is a missing file, as where it is not
    built: the helper opens once a process, so this takes a process of its own. The script's arguments
    are `args`, then tests/python and the checkout's package, for its sys.path; it ends by printing
    "ok", which is checked, and the process is returned for its log."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, EXECUTORCH_OPENVINO_STATE_LIBRARY=MISSING_STATE_HELPER,
               EXECUTORCH_OPENVINO_LIBRARY=str(library_path))
    done = subprocess.run([sys.executable, "-c", script, *args, here, os.path.join(here, "..", "..", "python")],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stdout[-2000:] + done.stderr[-4000:]
    return done
