"""One percentile for every command: the engine's (which `executorch-openvino bench` prints) and the
C++ runner's (`executorch-openvino-run`) give the same p50 / p90 / p99 for the same samples."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from executorch_openvino.benchmark import percentile
from executorch_openvino.runtime import openvino_discovery
from lowering import lower

REPO = Path(__file__).resolve().parents[3]
RUNNER = Path(os.environ.get("EXECUTORCH_OPENVINO_RUNNER",
                             REPO / "build" / "site" / "executorch_openvino" / "bin" / "executorch-openvino-run"))


def test_the_percentile_interpolates_between_closest_ranks_as_numpy_does():
    """Guards against the nearest-rank definition the command used to print (p90 of 1..4 would be 4)."""
    assert percentile([4.0, 1.0, 3.0, 2.0], 0.9) == pytest.approx(3.7)
    assert percentile([5.0], 0.99) == 5.0
    samples = np.random.default_rng(0).exponential(size=37)
    for fraction in (0.0, 0.5, 0.9, 0.99, 1.0):
        assert percentile(list(samples), fraction) == pytest.approx(np.percentile(samples, 100 * fraction))
    with pytest.raises(ValueError):
        percentile([], 0.5)


def _printed(stdout: str, name: str) -> float:
    found = re.search(rf"^\s*{name}:\s+([\d.]+) ms", stdout, re.MULTILINE)
    assert found, stdout
    return float(found.group(1))


def test_the_runner_prints_the_engine_s_percentiles_of_its_samples(tmp_path):
    """Three timed runs: the runner prints their min, mean and max, which give back all three samples
    (to its printed precision), so the engine's p50 / p90 / p99 of them must be what it printed.
    Guards against the runner and the package each keeping a definition of their own (with nearest
    rank, p90 of three samples is the largest, 0.2 x (largest - middle) away from linear's)."""
    if not RUNNER.is_file():
        pytest.fail(f"{RUNNER} does not exist: build it first (make build)")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(384, 384), torch.nn.ReLU(), torch.nn.Linear(384, 384)).eval()
    (tmp_path / "model.pte").write_bytes(lower(model, (torch.randn(256, 384),)))
    env = dict(os.environ)
    env.setdefault("OPENVINO_LIB_PATH", str(openvino_discovery.find_pip_runtime().parent))
    resolution = 0.0025  # ms: the middle sample rebuilt from values printed to 0.001 ms
    for _ in range(10):  # until the two largest samples are far enough apart to tell definitions apart
        done = subprocess.run([str(RUNNER), "model.pte", "--iterations", "3", "--warmup", "1"], cwd=tmp_path,
                              capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        low = float(re.search(r"min:\s+([\d.]+) ms", done.stdout).group(1))
        mean = float(re.search(r"mean:\s+([\d.]+) ms", done.stdout).group(1))
        high = float(re.search(r"max:\s+([\d.]+) ms", done.stdout).group(1))
        samples = [low, 3 * mean - low - high, high]
        if samples[2] - samples[1] > 50 * resolution:
            break
    else:
        pytest.skip("ten runs of three samples never spread enough to tell the definitions apart")
    for name, fraction in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
        assert _printed(done.stdout, name) == pytest.approx(percentile(samples, fraction), abs=resolution), name
