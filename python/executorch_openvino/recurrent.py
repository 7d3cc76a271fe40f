"""Recurrent layers (nn.LSTM, nn.GRU) kept whole through ExecuTorch's edge lowering.

to_edge decomposes aten.lstm / aten.gru into their per-step arithmetic, a few hundred nodes, and
ExecuTorch's edge passes and verifiers then spend most of the lowering time on them (a two-layer
LSTM of ten steps: ~30 s of ~40, our partitioner and preprocess ~3 s). Before decomposition the
partitioner renames each layer our delegate takes to an operator of this package with the same
schema (executorch_openvino::lstm / ::gru), which ExecuTorch leaves alone; the IR conversion
(rewrites/recurrent.py) then unrolls it into the steps PyTorch defines for the layer.
"""

from __future__ import annotations

import logging
from typing import Callable, Optional

import torch

logger = logging.getLogger(__name__)

_LIBRARY = torch.library.Library("executorch_openvino", "DEF")
_LIBRARY.define(
    "lstm(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, "
    "bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)"
)
_LIBRARY.define(
    "gru(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, "
    "bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)"
)


def _lstm(*args):
    return tuple(t.clone(memory_format=torch.contiguous_format) for t in torch.ops.aten.lstm.input(*args))


def _gru(*args):
    return tuple(t.clone(memory_format=torch.contiguous_format) for t in torch.ops.aten.gru.input(*args))


for _name, _impl in (("lstm", _lstm), ("gru", _gru)):
    _LIBRARY.impl(_name, _impl, "CompositeExplicitAutograd")
    torch.library.register_fake(f"executorch_openvino::{_name}", _impl, lib=_LIBRARY)

# ATen layer -> ours, and back (what rewrites/recurrent.py expands).
KEPT_WHOLE = {
    torch.ops.aten.lstm.input: torch.ops.executorch_openvino.lstm.default,
    torch.ops.aten.gru.input: torch.ops.executorch_openvino.gru.default,
}
ATEN_OF = {ours: aten for aten, ours in KEPT_WHOLE.items()}


def keep_whole(exported_program, refusal: Callable[[torch.fx.Node], Optional[str]], skipped: Callable[[str], bool]):
    """Renames, in place, the recurrent layers `refusal` accepts once renamed (it returns None for
    them) and `skipped` does not name ("aten.lstm.input", "aten.lstm" or our name, as skip_ops
    takes them); the others keep their ATen operator and are decomposed as usual."""
    from .op_support import op_name

    graph = exported_program.graph_module.graph
    renamed = False
    for node in graph.nodes:
        ours = KEPT_WHOLE.get(node.target) if node.op == "call_function" else None
        if ours is None or skipped(op_name(node.target)) or skipped(op_name(ours)):
            continue
        node.target = ours
        reason = refusal(node)
        if reason is not None:
            node.target = ATEN_OF[ours]
            logger.info("decomposing %s as usual: %s", node.name, reason)
            continue
        renamed = True
    if renamed:
        exported_program.graph_module.recompile()
    return exported_program
