"""Quantizing a model ahead of time for the delegate: the recipes of docs/quantization.md.

Both return an ExportedProgram ready for `to_edge_transform_and_lower(..., partitioner=[
OpenvinoPartitioner()])`; the delegate keeps the quantization (FakeQuantize and int8 weights in
the IR) and OpenVINO runs it with integer kernels.

    quantize_pt2e           static int8 post-training quantization (weights and activations),
                            calibrated on sample inputs; for convolutional networks.
    compress_weights_int8   int8 weights for Linear / matmul layers, activations left in float;
                            no calibration data; for linear-heavy models (transformers, MLPs).
    compress_weights_int4   int4 weights in groups (embedding and last layer int8 unless asked),
                            no calibration data; for LLMs (OpenVINO stores them as u4 / i4).
    OverflowSafeQuantizer   wraps a torchao PT2E quantizer of your own so that its int8 weights
                            are accurate on every CPU (the overflow fix, below).

NNCF (`pip install nncf`) does the work, as for ExecuTorch's own OpenVINO backend; with a torchao
quantizer of your own, quantize_pt2e uses torchao's prepare_pt2e / convert_pt2e instead and needs
no NNCF.

The overflow fix: on CPUs without VNNI (AVX2, AVX-512 without VNNI) OpenVINO's int8 kernels sum
u8 x s8 products in pairs into 16 bits, which saturates when weights use the whole int8 range.
Static int8 recipes here therefore quantize the weights of convolutions and linear layers into
half the range (+-64, 7 bits) by default (`overflow_fix="enable"`), which computes exactly on
every CPU; `"disable"` keeps 8 bits, a little more accurate on CPUs with VNNI or AMX and much
less accurate without. NNCF's `OverflowFix` names the same choices (overflow_fix.py).
"""

from .overflow_fix import OVERFLOW_FIX_CHOICES, OverflowSafeQuantizer
from .static_int8 import quantize_pt2e
from .weight_compression import compress_weights_int4, compress_weights_int8

__all__ = ["OVERFLOW_FIX_CHOICES", "OverflowSafeQuantizer", "compress_weights_int4", "compress_weights_int8",
           "quantize_pt2e"]
