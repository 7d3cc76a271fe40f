"""Modules that moved when the package was laid out as its pipeline (0.2.0): their old names still
import, as the module at its new place, with a DeprecationWarning naming it."""

from __future__ import annotations

import sys
import warnings
from importlib import import_module
from importlib.machinery import ModuleSpec

MOVED = {
    "executorch_openvino.after_import": "executorch_openvino.runtime.after_import",
    "executorch_openvino.blob": "executorch_openvino.container.blob",
    "executorch_openvino.compile_specs": "executorch_openvino.container.compile_specs",
    "executorch_openvino.cpu_capabilities": "executorch_openvino.runtime.cpu_capabilities",
    "executorch_openvino.errors": "executorch_openvino.runtime.errors",
    "executorch_openvino.library": "executorch_openvino.runtime.library",
    "executorch_openvino.named_weights": "executorch_openvino.container.named_weights",
    "executorch_openvino.op_support": "executorch_openvino.partition.op_support",
    "executorch_openvino.openvino_runtime": "executorch_openvino.runtime.openvino_discovery",
    "executorch_openvino.options": "executorch_openvino.runtime.options",
}


def moved_module(old: str):
    """The module `old` moved to, imported (with the warning)."""
    new = MOVED[old]
    warnings.warn(f"{old} moved to {new}; the old name will go in a later release", DeprecationWarning, stacklevel=3)
    return import_module(new)


class _OldNames:  # a meta path finder (importlib.abc is not imported: it costs start-up time)
    def find_spec(self, name, path=None, target=None):
        return ModuleSpec(name, self) if name in MOVED else None

    def create_module(self, spec):
        return None  # a placeholder, replaced in sys.modules by the moved module below

    def exec_module(self, module) -> None:
        # The import system returns whatever sys.modules holds under the name once this returns.
        sys.modules[module.__name__] = moved_module(module.__name__)


def install() -> None:
    if not any(isinstance(finder, _OldNames) for finder in sys.meta_path):
        sys.meta_path.append(_OldNames())
