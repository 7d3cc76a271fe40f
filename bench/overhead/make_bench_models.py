"""Writes the models bench_delegate_overhead times, as cases in the folder format of
tests/fixtures/make_ir_cases.py (model.eovb, spec.txt, input/output .bin files), so the C++ side
reads them with the same loader as the backend tests.

  bench_tiny  add of two [1,16] f32 inputs: almost no work, so the time per call is nearly all
              fixed cost (ours and OpenVINO's), which is what the overhead ratio is about
  bench_mid   a small CNN on a [1,3,64,64] image (four 3x3 convolutions, ~135 M multiply-adds,
              global average pool, linear to 10 classes): a realistic call of a few hundred
              microseconds on two cores, where a fixed overhead shows as the fraction of a real
              workload it would cost

Both are compiled with INFERENCE_PRECISION_HINT f32 and PERFORMANCE_HINT LATENCY; the benchmark
passes the same properties to native OpenVINO and to the delegate.

Usage: python bench/overhead/make_bench_models.py OUT_DIR
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common
from common.paths import REPO  # noqa: E402

# The test-case generator defines the folder format (dtype names, dims text) and puts python/ on
# sys.path for the blob writer; importing it keeps our cases readable by the same C++ loader.
_spec = importlib.util.spec_from_file_location("make_ir_cases", REPO / "tests" / "fixtures" / "make_ir_cases.py")
ir_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ir_cases)

PROPERTIES = {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY"}
RNG = np.random.default_rng(20261201)


def _weights(shape, fan_in):
    # Scaled so activations stay around unit size through the layers (no overflow, no all-zero ReLU).
    return (RNG.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def bench_tiny():
    x, y = RNG.standard_normal((1, 16)).astype(np.float32), RNG.standard_normal((1, 16)).astype(np.float32)
    px, py = ops.parameter([1, 16], np.float32, name="x"), ops.parameter([1, 16], np.float32, name="y")
    return ov.Model([ops.add(px, py)], [px, py], "bench_tiny"), [x, y], [x + y]


# (output channels, stride) of each 3x3 convolution, padding 1, each followed by bias and ReLU.
CNN_LAYERS = [(32, 1), (64, 2), (128, 1), (128, 2)]
CNN_INPUT = (1, 3, 64, 64)
CNN_CLASSES = 10


def _conv_reference(x, w, b, stride):
    # im2col in float64: an independent check of OpenVINO's result, fast enough for one image.
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))[:, :, ::stride, ::stride]
    out = np.einsum("nchwij,kcij->nkhw", windows, w.astype(np.float64))
    return out + b.reshape(1, -1, 1, 1)


def bench_mid():
    image = RNG.standard_normal(CNN_INPUT).astype(np.float32)
    param = ops.parameter(list(CNN_INPUT), np.float32, name="image")
    node, ref, channels = param, image.astype(np.float64), CNN_INPUT[1]
    for out_channels, stride in CNN_LAYERS:
        w = _weights((out_channels, channels, 3, 3), channels * 9)
        b = _weights((out_channels,), 1) * 0.1
        conv = ops.convolution(node, ops.constant(w), [stride, stride], [1, 1], [1, 1], [1, 1])
        node = ops.relu(ops.add(conv, ops.constant(b.reshape(1, -1, 1, 1))))
        ref = np.maximum(_conv_reference(ref, w, b, stride), 0)
        channels = out_channels
    pooled = ops.reduce_mean(node, ops.constant(np.array([2, 3], dtype=np.int64)), keep_dims=False)
    fc_w, fc_b = _weights((channels, CNN_CLASSES), channels), _weights((CNN_CLASSES,), 1) * 0.1
    logits = ops.add(ops.matmul(pooled, ops.constant(fc_w), False, False), ops.constant(fc_b))
    expected = (ref.mean(axis=(2, 3)) @ fc_w.astype(np.float64) + fc_b).astype(np.float32)
    return ov.Model([logits], [param], "bench_mid"), [image], [expected]


MODELS = {"bench_tiny": bench_tiny, "bench_mid": bench_mid}


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    out_dir = Path(sys.argv[1])
    for name, make in MODELS.items():
        ir_cases.write_model_case(out_dir / name, *make(), properties=PROPERTIES)
    print(f"wrote {', '.join(MODELS)} to {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
