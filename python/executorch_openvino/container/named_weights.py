"""Weights kept outside the program, in ExecuTorch's named data: a .ptd file beside the .pte.

ExecuTorch's convention marks the constants that go to a data file with a tag
(`node.meta["custom"]["delegate_constant_tag"]`, as executorch.exir.passes.external_constants_pass
sets it; OpenvinoPartitioner(external_weights=...) sets it on what it delegates, in
partition/external_weights.py). A partition whose weights carry a tag stores its IR's weights (the
.bin, one piece) in the named data store under a key made from their content, with that tag as the
file: `program.write_tensor_data_to_file(folder)` writes
`<tag>.ptd`, the .pte keeps only the key, size and CRC-32 (blob section 7), and the runtime library
fetches the weights through the method's NamedDataMap, checking both.

The key is the weights' SHA-256: identical weights (two methods, two partitions) are stored once, and a
data file from another export is refused by key or checksum instead of computed with.
"""

from __future__ import annotations

import hashlib
from typing import Optional, Tuple

from torch.export import ExportedProgram

from .blob import NamedWeights

TAG_FIELD = "delegate_constant_tag"  # ExecuTorch's: node.meta["custom"][TAG_FIELD]
KEY_PREFIX = "executorch_openvino.weights."
ALIGNMENT = 64  # as the blob's own sections: the runtime may hand the bytes to OpenVINO's kernels


def tag_of(node) -> Optional[str]:
    custom = node.meta.get("custom")
    return custom.get(TAG_FIELD) if isinstance(custom, dict) else None


def file_tag(edge_program: ExportedProgram) -> Optional[str]:
    """The data file this partition's weights go to (None: the blob keeps them). The IR's weights are
    one piece, so one partition names one file."""
    signature = edge_program.graph_signature
    mutated = set(signature.buffers_to_mutate.values())
    stored = set(signature.inputs_to_parameters) | set(signature.inputs_to_lifted_tensor_constants) | {
        name for name, buffer in signature.inputs_to_buffers.items() if buffer not in mutated}
    tags = {tag_of(node) for node in edge_program.graph.nodes if node.op == "placeholder" and node.name in stored}
    tags.discard(None)
    if len(tags) > 1:
        raise ValueError(f"one OpenVINO partition's weights go to one data file, but its constants are tagged for "
                         f"{sorted(tags)}: tag them alike")
    return next(iter(tags), None)


def store(weights: bytes, tag: str) -> Tuple[NamedWeights, object]:
    """Puts `weights` in a named data store for the file `tag`; returns what the blob records and the
    store's output for ExecuTorch (PreprocessResult.data_store_output)."""
    from executorch.exir._serialize._named_data_store import NamedDataStore

    key = KEY_PREFIX + hashlib.sha256(weights).hexdigest()
    data_store = NamedDataStore()
    data_store.add_named_data(key, weights, alignment=ALIGNMENT, external_tag=tag)
    return NamedWeights.of(key, weights), data_store.get_named_data_store_output()


def read_from_file(path, weights: NamedWeights) -> bytes:
    """The weights a blob names, read from a .ptd file and checked as the runtime checks them (for
    tools that compile the IR themselves, e.g. the bench command's native OpenVINO)."""
    from pathlib import Path

    from executorch.exir._serialize._cord import Cord
    from executorch.extension.flat_tensor.serialize.serialize import FlatTensorSerializer

    payload = FlatTensorSerializer().deserialize(Cord(Path(path).read_bytes()))
    entry = payload.named_data.get(weights.key)
    if entry is None:
        raise ValueError(f"{path} does not hold the weights '{weights.key}': it is from another export")
    data = bytes(payload.buffers[entry.buffer_index])
    if NamedWeights.of(weights.key, data) != weights:
        raise ValueError(f"{path}: the weights under '{weights.key}' fail their size or checksum: the file is corrupt")
    return data
