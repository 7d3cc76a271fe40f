"""Stage 3 of lowering: an FX graph, already rewritten by fx_passes, to an OpenVINO model through
OpenVINO's PyTorch frontend, its inputs typed and shaped as the graph's placeholders (dynamic sizes
with the bounds torch.export proved)."""

from .dtypes import SUPPORTED_DTYPES
from .frontend import ConversionError, to_openvino

__all__ = ["ConversionError", "SUPPORTED_DTYPES", "to_openvino"]
