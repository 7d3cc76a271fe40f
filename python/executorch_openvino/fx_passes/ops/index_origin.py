"""index_add and index_copy reach the delegate as aten.index_put (to_edge decomposes them), whose
negative indices count from the end; eager's index_add / index_copy raise for any negative index.
Such a node (its provenance, meta["from_node"], names one of them) gets FROM_ZERO_PREFIX before its
name, so the IR operations the frontend names after it carry the prefix and
ir_passes/index_bounds.py bounds the index from 0 (blob section 8) instead of from minus the size.
The node itself is left as it is."""

from __future__ import annotations

import torch

# A prefix of an FX node's name, and so of the friendly names of the IR operations made for it.
FROM_ZERO_PREFIX = "from_zero_index__"
_ORIGINS = ("aten.index_add", "aten.index_copy")


def _made_from(sources) -> bool:
    for source in sources or ():
        if str(source.target).startswith(_ORIGINS) or _made_from(getattr(source, "from_node", None)):
            return True
    return False


def _mark(graph_module: torch.fx.GraphModule, node: torch.fx.Node):
    if not node.name.startswith(FROM_ZERO_PREFIX) and _made_from(node.meta.get("from_node")):
        node._rename(FROM_ZERO_PREFIX + node.name)  # fx keeps names unique in the graph
    # Not replaced. rewrite_operators recompiles once after the pass: a recompile here, per node, cost 0.3 s
    # each on a 32-layer Llama (65 cache writes, 20 s of its export).
    return None


REWRITES = {"aten.index_put.default": _mark}
