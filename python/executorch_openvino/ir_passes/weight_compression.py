"""Weight-only compression of the partition's OpenVINO model (the partitioner's `weights` argument):
NNCF's compress_weights on the IR, the way optimum-intel compresses the models OpenVINO GenAI runs.

Compressing the IR, rather than the torch graph before export, leaves torch.export and to_edge
alone (no re-export of a model NNCF rewrote) and gives OpenVINO's CPU plugin the weight layout it
runs with its compressed FullyConnected kernels: u8 / u4 / i4 constants, a zero point and a scale
per output channel or per group, converted to float in the graph. NNCF's own defaults apply: in the
int4 modes the embedding and the last layer keep 8 bits (its "backup" precision, as optimum-intel).
Products with a constant vector (a rotary embedding's frequencies) are left alone.
"""

from __future__ import annotations

from .. import lowering_progress
from ..container.compile_specs import WEIGHT_MODES
from .lowering import Lowering


def compress_weights(lowering: Lowering) -> None:
    options = lowering.options
    if options.weights is None:
        return
    from ..quantization.graphs import nncf_module

    nncf = nncf_module()
    mode = getattr(nncf.CompressWeightsMode, WEIGHT_MODES[options.weights])
    arguments = {"group_size": options.group_size} if options.weights.startswith("int4") else {}
    vectors = _vector_products(lowering.model)
    if vectors:
        arguments["ignored_scope"] = nncf.IgnoredScope(names=vectors, validate=False)
    lowering_progress.started(lowering_progress.WEIGHT_COMPRESSION)
    try:
        lowering.model = nncf.compress_weights(lowering.model, mode=mode, **arguments)
    except Exception as error:  # NNCF says what it cannot do (e.g. a group size that divides no layer)
        raise ValueError(f"NNCF could not compress the weights as weights={options.weights!r}"
                         f"{f', group_size={options.group_size}' if arguments else ''}: {error}") from error
    lowering_progress.started(lowering_progress.IR_PASSES)  # the passes after it


def _vector_products(model) -> list:
    """MatMuls whose constant operand is a vector in disguise ([1, 32, 1]: a rotary embedding's
    frequencies times the positions): no linear layer, and quantizing it would move every rotation.
    NNCF takes any MatMul with a constant operand for a layer to compress."""
    names = []
    for node in model.get_ordered_ops():
        if node.get_type_name() != "MatMul":
            continue
        for port in range(2):
            producer = node.input_value(port).get_node()
            while producer.get_type_name() == "Convert":
                producer = producer.input_value(0).get_node()
            shape = node.get_input_partial_shape(port)
            if producer.get_type_name() == "Constant" and shape.is_static and (
                    len(shape) < 2 or min(shape[-1].get_length(), shape[-2].get_length()) == 1):
                names.append(node.get_friendly_name())
    return names
