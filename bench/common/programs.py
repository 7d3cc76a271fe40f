"""What a lowered program holds: how many of its operators our delegate took, in how many
partitions, and how many stayed on ExecuTorch's kernels."""

from __future__ import annotations

from typing import Tuple


def delegation(lowered, backend_id: str) -> Tuple[int, int, int]:
    """(operators inside `backend_id`'s partitions, operators outside any, partitions) of an
    EdgeProgramManager's forward method."""
    from executorch.exir.lowered_backend_module import LoweredBackendModule

    graph_module = lowered.exported_program().graph_module
    modules = [m for _, m in graph_module.named_children()
               if isinstance(m, LoweredBackendModule) and m.backend_id == backend_id]
    inside = sum(1 for m in modules for n in m.original_module.graph.nodes
                 if n.op == "call_function" and n.target.__name__ != "getitem")
    outside = sum(1 for n in graph_module.graph.nodes if n.op == "call_function"
                  and n.target.__name__ not in ("getitem", "executorch_call_delegate"))
    return inside, outside, len(modules)
