"""bench's XNNPACK program, lowered once per model and kept in a folder: lowering takes seconds to
minutes, exporting the model (which the key needs) a fraction of that.

The file's name is a hash of the exported program as torch.export.save writes it (graph, weights,
input shapes and dtypes) and of the torch and ExecuTorch versions, so another model, other
weights or an upgrade lower again. Files are written under a temporary name, then renamed.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import io
import os
from pathlib import Path
from typing import Optional, Tuple

from ..progress import step

_FORMAT = "xnnpack-pte-1"  # change when what goes into the key or the file changes


def default_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "executorch_openvino" / "bench"


def _key(exported) -> str:
    import torch

    buffer = io.BytesIO()
    torch.export.save(exported, buffer)
    digest = hashlib.sha256(buffer.getvalue())
    for name in ("torch", "executorch"):
        digest.update(f"\0{name}={importlib.metadata.version(name)}".encode())
    digest.update(_FORMAT.encode())
    return digest.hexdigest()[:32]


def xnnpack_program(model, inputs, folder: Optional[Path]) -> Tuple[bytes, str]:
    """(the model lowered to XNNPACK as a .pte, where it came from). `folder` None: no cache.
    Raises ImportError when ExecuTorch has no XNNPACK partitioner, or what lowering raises."""
    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    exported = torch.export.export(model, tuple(inputs))
    path = None
    if folder is not None:
        path = folder / f"xnnpack-{_key(exported)}.pte"
        if path.is_file():
            return path.read_bytes(), f"the cache ({path})"
    with step("lowering the model to XNNPACK"):
        program = to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()]).to_executorch().buffer
    if path is None:
        return program, "lowered now (no cache)"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        temporary.write_bytes(program)
        temporary.replace(path)
    except OSError as error:  # an unwritable cache costs the next run a lowering, nothing more
        return program, f"lowered now (not cached: {error})"
    return program, f"lowered now, cached as {path}"
