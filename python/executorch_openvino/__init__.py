"""executorch_openvino: the OpenVINO delegate for ExecuTorch.

Importing the package takes milliseconds and imports neither torch nor ExecuTorch. The delegate
library is loaded into the process as soon as ExecuTorch's Python runtime is imported (before or
after this package), so programs lowered with OpenvinoPartitioner run through `executorch.runtime`;
it is handed the pip-installed OpenVINO runtime for when OPENVINO_LIB_PATH is unset. The
environment is left as it is.

    from executorch.exir import to_edge_transform_and_lower
    from executorch_openvino import OpenvinoPartitioner

    program = to_edge_transform_and_lower(torch.export.export(model, inputs),
                                          partitioner=[OpenvinoPartitioner()]).to_executorch()
"""

from __future__ import annotations

from .backend_id import BACKEND_ID
from .runtime import errors as _errors
from .runtime import library as _library
from .runtime.errors import DelegateError
from .runtime.info import info
from .runtime.options import OptionError, compiled_models, get_options, reset_options, set_options, using_options
from .runtime.saved_states import StateError, forget_state, restore_state, save_state

_library.load_after_executorch()
_errors.install_after_executorch_runtime()


def __getattr__(name):
    # The export-time classes pull in ExecuTorch's exir and OpenVINO's frontend: imported on use.
    if name == "OpenvinoPartitioner":
        from .partitioner import OpenvinoPartitioner

        return OpenvinoPartitioner
    if name == "ExecutorchOpenvinoBackend":
        from .preprocess import ExecutorchOpenvinoBackend

        return ExecutorchOpenvinoBackend
    raise AttributeError(f"module 'executorch_openvino' has no attribute {name!r}")


__all__ = [
    "BACKEND_ID",
    "OpenvinoPartitioner",
    "ExecutorchOpenvinoBackend",
    "info",
    "set_options",
    "using_options",
    "get_options",
    "reset_options",
    "compiled_models",
    "OptionError",
    "DelegateError",
    "save_state",
    "restore_state",
    "forget_state",
    "StateError",
]
