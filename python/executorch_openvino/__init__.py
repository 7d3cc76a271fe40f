"""executorch_openvino: the OpenVINO delegate for ExecuTorch.

Importing the package loads the delegate library into the process, after ExecuTorch's runtime
module, so programs lowered with OpenvinoPartitioner run through `executorch.runtime`; it also
hands the library the pip-installed OpenVINO runtime unless OPENVINO_LIB_PATH is set.

    from executorch.exir import to_edge_transform_and_lower
    from executorch_openvino import OpenvinoPartitioner

    program = to_edge_transform_and_lower(torch.export.export(model, inputs),
                                          partitioner=[OpenvinoPartitioner()]).to_executorch()
"""

from __future__ import annotations

from . import errors, library
from .backend_id import BACKEND_ID
from .info import info
from .options import OptionError, compiled_models, get_options, reset_options, set_options

library.load()
errors.install()


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
    "get_options",
    "reset_options",
    "compiled_models",
    "OptionError",
]
