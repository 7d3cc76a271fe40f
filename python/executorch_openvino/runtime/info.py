"""info(): what the package found in this process."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import List, Optional

from . import library
from ..backend_id import BACKEND_ID


@dataclass
class Info:
    backend_id: str
    library_path: Optional[str]          # libexecutorch_openvino that was loaded
    library_error: Optional[str]         # why it could not be loaded
    backend_registered: bool             # our id is in ExecuTorch's backend registry
    executorch_version: Optional[str]
    openvino_runtime_path: Optional[str]  # the OpenVINO C library that was opened
    openvino_version: Optional[str]       # the runtime's own build number
    openvino_error: Optional[str]         # why the runtime could not be opened
    devices: List[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def _distribution_version(name: str) -> Optional[str]:
    import importlib.metadata  # here: it costs start-up time

    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def info() -> Info:
    """Loads the OpenVINO runtime if it is not loaded yet, and reports what was found."""
    from executorch.runtime import Runtime

    loaded = library.load()
    registered = BACKEND_ID in Runtime.get().backend_registry.registered_backend_names
    runtime = loaded.describe_runtime() if loaded is not None else {}
    ok = runtime.get("loaded") == "1"
    return Info(
        backend_id=BACKEND_ID,
        library_path=str(loaded.path) if loaded is not None else None,
        library_error=library.load_error(),
        backend_registered=registered,
        executorch_version=_distribution_version("executorch"),
        openvino_runtime_path=runtime.get("library") if ok else (runtime.get("configured") or None),
        openvino_version=runtime.get("version") if ok else None,
        openvino_error=runtime.get("error"),
        devices=[d for d in runtime.get("devices", "").split(",") if d],
    )


__all__ = ["info", "Info"]
