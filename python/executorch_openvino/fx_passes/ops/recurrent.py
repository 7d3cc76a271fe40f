"""executorch_openvino::lstm / ::gru (ops/whole_ops.py) unrolled into ATen calls, step by step,
as PyTorch defines the layers: per layer and direction, the input projection of every step in one
linear, then per step the hidden projection and the gates. Built directly (a dozen nodes a step),
not traced: tracing PyTorch's decomposition costs more than the lowering it saves.

LSTM gates i, f, g, o:  c' = f c + i g,  h' = o tanh(c')  (times W_hr with proj_size)
GRU gates r, z, n:      n = tanh(x_n + r (h W_hn + b_hn)),  h' = (1 - z) n + z h
"""

from __future__ import annotations

import torch

from .builder import Builder, UnsupportedCase, aten, static_sizes, tensor_of


def _gates(build: Builder, value, count: int, size: int):
    return [build.call(aten.slice.Tensor, value, -1, k * size, (k + 1) * size) for k in range(count)]


def _linear(build: Builder, x, weight, bias=None):
    return build.call(aten.linear.default, x, weight, bias)


def _lstm_step(build: Builder, projected_input, h, c, weights, hidden: int):
    w_hh, b_hh, w_hr = weights["w_hh"], weights.get("b_hh"), weights.get("w_hr")
    gates = build.call(aten.add.Tensor, projected_input, _linear(build, h, w_hh, b_hh))
    i, f, g, o = _gates(build, gates, 4, hidden)
    i, f, o = (build.call(aten.sigmoid.default, v) for v in (i, f, o))
    c = build.call(aten.add.Tensor, build.call(aten.mul.Tensor, f, c),
                   build.call(aten.mul.Tensor, i, build.call(aten.tanh.default, g)))
    h = build.call(aten.mul.Tensor, o, build.call(aten.tanh.default, c))
    if w_hr is not None:
        h = _linear(build, h, w_hr)
    return h, c


def _gru_step(build: Builder, projected_input, h, _, weights, hidden: int):
    x_r, x_z, x_n = _gates(build, projected_input, 3, hidden)
    h_r, h_z, h_n = _gates(build, _linear(build, h, weights["w_hh"], weights.get("b_hh")), 3, hidden)
    r = build.call(aten.sigmoid.default, build.call(aten.add.Tensor, x_r, h_r))
    z = build.call(aten.sigmoid.default, build.call(aten.add.Tensor, x_z, h_z))
    n = build.call(aten.tanh.default, build.call(aten.add.Tensor, x_n, build.call(aten.mul.Tensor, r, h_n)))
    # (1 - z) n + z h, written as n + z (h - n)
    h = build.call(aten.add.Tensor, n, build.call(aten.mul.Tensor, z, build.call(aten.sub.Tensor, h, n)))
    return h, None


def _unroll(graph_module: torch.fx.GraphModule, node: torch.fx.Node, kind: str):
    x, hx, params, has_biases, num_layers, _dropout, train, bidirectional, batch_first = node.args
    if train:
        raise UnsupportedCase("a recurrent layer in training mode (dropout between layers)")
    sizes = static_sizes(tensor_of(x), "a recurrent layer")
    steps = sizes[0 if not batch_first else 1]
    directions = 2 if bidirectional else 1
    per_layer = len(params) // (num_layers * directions)
    names = ["w_ih", "w_hh"] + (["b_ih", "b_hh"] if has_biases else [])
    if per_layer == len(names) + 1:
        names.append("w_hr")  # LSTM with proj_size
    if per_layer != len(names):
        raise UnsupportedCase(f"a recurrent layer with {per_layer} parameters per layer and direction")
    hidden = tensor_of(params[0]).shape[0] // (4 if kind == "lstm" else 3)
    step = _lstm_step if kind == "lstm" else _gru_step
    h_states, c_states = (hx[0], hx[1]) if kind == "lstm" else (hx, None)

    build = Builder(graph_module, node)
    layer_input = build.call(aten.transpose.int, x, 0, 1) if batch_first else x  # (steps, batch, features)
    final_h, final_c = [], []
    for layer in range(num_layers):
        outputs = []
        for direction in range(directions):
            index = layer * directions + direction
            weights = dict(zip(names, params[index * per_layer:(index + 1) * per_layer]))
            projected = _linear(build, layer_input, weights["w_ih"], weights.get("b_ih"))
            h = build.call(aten.select.int, h_states, 0, index)
            c = build.call(aten.select.int, c_states, 0, index) if c_states is not None else None
            sequence = [None] * steps
            for t in (reversed(range(steps)) if direction else range(steps)):
                h, c = step(build, build.call(aten.select.int, projected, 0, t), h, c, weights, hidden)
                sequence[t] = h
            outputs.append(build.call(aten.stack.default, sequence, 0))
            final_h.append(h)
            final_c.append(c)
        layer_input = outputs[0] if directions == 1 else build.call(aten.cat.default, outputs, -1)
    y = build.call(aten.transpose.int, layer_input, 0, 1) if batch_first else layer_input
    h_n = build.call(aten.stack.default, final_h, 0)
    if kind == "gru":
        return (y, h_n)
    return (y, h_n, build.call(aten.stack.default, final_c, 0))


REWRITES = {
    "executorch_openvino.lstm.default": lambda gm, node: _unroll(gm, node, "lstm"),
    "executorch_openvino.gru.default": lambda gm, node: _unroll(gm, node, "gru"),
}
