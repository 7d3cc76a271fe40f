"""What the rewrites share: inserting ATen calls before a node, stored constants, and putting a
replacement in the place of a node (including the getitem users of an op with several outputs)."""

from __future__ import annotations

import operator
from typing import Sequence, Union

import torch

aten = torch.ops.aten


class UnsupportedCase(RuntimeError):
    """A node a rewrite cannot compute exactly; the message is the partitioner's refusal reason."""


class Builder:
    """Inserts ATen calls before `before`; `call` returns the new node."""

    def __init__(self, graph_module: torch.fx.GraphModule, before: torch.fx.Node) -> None:
        self.graph_module, self.graph, self.before = graph_module, graph_module.graph, before

    def call(self, op, *args, **kwargs) -> torch.fx.Node:
        with self.graph.inserting_before(self.before):
            return self.graph.call_function(op, args, kwargs)

    def constant(self, tensor: torch.Tensor, name: str) -> torch.fx.Node:
        """A get_attr of `tensor`, stored on the graph module (so it lands in the IR's weights)."""
        attribute = f"_executorch_openvino_{name}_{self.before.name}"
        self.graph_module.register_buffer(attribute, tensor)
        with self.graph.inserting_before(self.before):
            node = self.graph.get_attr(attribute)
        node.meta["val"] = tensor
        return node

    def cast(self, value: torch.fx.Node, dtype: torch.dtype) -> torch.fx.Node:
        return self.call(aten._to_copy.default, value, dtype=dtype)

    def per_channel_view(self, value: torch.fx.Node, axis: int, rank: int) -> torch.fx.Node:
        # 1-d scales and zero points, shaped to broadcast along `axis` of the data.
        shape = [1] * rank
        shape[axis] = -1
        return self.call(aten.view.default, value, shape)


def tensor_of(node) -> torch.Tensor:
    """The fake tensor a node stands for (its meta["val"])."""
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    if not isinstance(value, torch.Tensor):
        raise UnsupportedCase(f"the shape and dtype of {getattr(node, 'name', node)} are unknown")
    return value


def static_sizes(tensor: torch.Tensor, what: str) -> list:
    sizes = list(tensor.shape)
    if not all(isinstance(size, int) for size in sizes):
        raise UnsupportedCase(f"{what} needs static sizes, got {tuple(sizes)}")
    return sizes


def replace_node(graph: torch.fx.Graph, node: torch.fx.Node,
                 replacement: Union[torch.fx.Node, Sequence[torch.fx.Node]]) -> None:
    """Puts `replacement` in the place of `node`: a node for a single output, a tuple for an op
    with several (its getitem users then read the matching element)."""
    if isinstance(replacement, torch.fx.Node):
        replacement.meta.update(node.meta)
        node.replace_all_uses_with(replacement)
    else:
        for user in list(node.users):
            if user.target is not operator.getitem:
                raise UnsupportedCase(f"{node.name}: a result of several outputs is used whole")
            element = replacement[user.args[1]]
            if element is None and not user.users:
                graph.erase_node(user)
                continue
            if element is None:
                raise UnsupportedCase(f"{node.name}: output {user.args[1]} is not computed")
            element.meta.update(user.meta)
            user.replace_all_uses_with(element)
            graph.erase_node(user)
    graph.erase_node(node)
