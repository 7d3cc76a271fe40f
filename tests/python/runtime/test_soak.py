"""The soak (tests/soak/soak.py, `make soak`) in short: 200 cycles of load program -> execute -> destroy
in one process, with its criteria scaled to them; and proof that its checks catch what they look for."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SOAK = REPO / "tests" / "soak" / "soak.py"

_spec = importlib.util.spec_from_file_location("soak", SOAK)
soak = importlib.util.module_from_spec(_spec)
sys.modules["soak"] = soak  # its dataclasses look their module up there
_spec.loader.exec_module(soak)


def run_soak(*arguments: str) -> tuple[dict, list[dict]]:
    """tests/soak/soak.py in a process of its own (nothing else allocating in it); its verdict and samples."""
    done = subprocess.run([sys.executable, str(SOAK), "--json", *arguments], capture_output=True, text=True,
                          timeout=600)
    if not done.stdout.strip():
        pytest.fail(f"soak.py printed no result (exit {done.returncode}):\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout)
    return result["verdict"], result["samples"]


@pytest.fixture(scope="module")
def short_soak():
    return run_soak("--cycles", "200", "--warmup", "50")


def test_200_cycles_keep_memory_descriptors_and_compiled_models_steady(short_soak):
    verdict, samples = short_soak
    assert len(samples) == 200
    assert verdict["max_growth_bytes"] < verdict["limit_bytes"], (
        f"resident memory grew {verdict['max_growth_bytes'] / 1024:.0f} KB after the warm-up "
        f"(limit {verdict['limit_bytes'] / 1024:.0f} KB)")
    assert verdict["fds_seen"] == [verdict["fds_after_warmup"]], f"open descriptors changed: {verdict['fds_seen']}"
    assert verdict["live_models_seen"] == [0], f"compiled models alive after a cycle: {verdict['live_models_seen']}"
    assert verdict["passed"]


# A method keeps its program's native parts alive, not the Python Program (which holds its methods:
# a cycle that only Python's cycle collector would free).
def test_dropping_the_references_frees_the_program_without_the_cycle_collector(short_soak):
    _, samples = short_soak
    assert all(sample["freed_by_del"] for sample in samples)


def test_the_soak_catches_methods_kept_alive():
    verdict, samples = run_soak("--cycles", "40", "--warmup", "10", "--keep-alive")
    assert not verdict["passed"]
    assert len(verdict["fds_seen"]) > 1  # one more open .pte file per cycle
    assert max(verdict["live_models_seen"]) >= 1


def sample(cycle: int, rss_mb: float, fds: int = 10, live_models: int = 0) -> "soak.Sample":
    return soak.Sample(cycle, int(rss_mb * 1024 * 1024), fds, 0.01, True, live_models)


def test_the_verdict_fails_on_growth_on_a_descriptor_and_on_a_model_left_alive():
    limit = soak.scaled_limit(5.0, 1000, 50)
    assert limit == 5 * 1024 * 1024
    assert soak.scaled_limit(5.0, 200, 50) == int(5 * 1024 * 1024 * 150 / 950)

    steady = [sample(c, 100.0 + (c <= 50) * 0.02 * c) for c in range(1, 1001)]
    assert soak.judge(steady, 50, limit).passed

    leaking = [sample(c, 100.0 + 0.006 * c) for c in range(1, 1001)]  # 6 KB a cycle: 5.6 MB over 950
    assert not soak.judge(leaking, 50, limit).passed

    one_fd = steady[:700] + [sample(c, 100.0, fds=11) for c in range(701, 1001)]
    assert not soak.judge(one_fd, 50, limit).passed

    model_kept = steady[:999] + [sample(1000, 100.0, live_models=1)]
    assert not soak.judge(model_kept, 50, limit).passed
