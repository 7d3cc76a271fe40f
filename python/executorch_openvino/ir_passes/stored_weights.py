"""A linear layer's weight read as it is stored.

ExecuTorch's edge graph spells linear(x, W) as mm(x, permute(W)); the frontend turns it into
MatMul(x, Transpose(W)), where the weight the layer multiplies by is a Transpose of a constant, not
a constant. NNCF's weight compression takes only constants (directly or through a Convert) for
weights, so it left every large layer in float (small ones are folded to constants before
conversion, fx_passes/constant_folding.py); and OpenVINO's CPU plugin folds the Transpose at compile
time, holding a second copy of every weight while it does. MatMul(x, W, transpose_b=True) is the same
product on the stored weight, the form OpenVINO's own PyTorch conversion gives a linear layer.
"""

from __future__ import annotations

from .ir_reading import permutation, source
from .lowering import Lowering


def read_weights_as_stored(lowering: Lowering) -> None:
    """Folds, in place, each Transpose of a constant that swaps the last two axes into the MatMul
    it feeds (the MatMul's transpose flag for that input flips)."""
    import openvino.opset13 as ops

    changed = False
    for node in lowering.model.get_ordered_ops():
        if node.get_type_name() != "MatMul":
            continue
        attributes = node.get_attributes()
        flags = [attributes["transpose_a"], attributes["transpose_b"]]
        inputs = [source(node, 0), source(node, 1)]
        replaced = False
        for index in (0, 1):
            moved = inputs[index].get_node()
            if moved.get_type_name() != "Transpose" or not _is_stored(source(moved).get_node()):
                continue
            order = permutation(moved)
            rank = len(order) if order is not None else 0
            if rank < 2 or order != list(range(rank - 2)) + [rank - 1, rank - 2]:
                continue
            inputs[index], flags[index], replaced = source(moved), not flags[index], True
        if replaced:
            product = ops.matmul(inputs[0], inputs[1], flags[0], flags[1])
            product.set_friendly_name(node.get_friendly_name())
            for target in list(node.output(0).get_target_inputs()):
                target.replace_source_output(product.output(0))
            product.output(0).get_tensor().set_names(node.output(0).get_names())
            changed = True
    if changed:
        lowering.model.validate_nodes_and_infer_types()


def _is_stored(node) -> bool:
    """A constant, or a Convert of one (an fp16-stored weight)."""
    while node.get_type_name() == "Convert":
        node = source(node).get_node()
    return node.get_type_name() == "Constant"
