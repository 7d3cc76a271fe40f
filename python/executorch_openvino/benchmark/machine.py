"""What a result says about where it was measured: the CPU (model name and the vector features its
kernels are chosen by: the same model name can hide CPUs with and without AVX-512), its cores, the
load average before and after, the versions of what ran, and the checkout's commit."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
from pathlib import Path
from typing import Dict, List, Optional

# The vector features OpenVINO's CPU kernels (and llama.cpp's, XNNPACK's) are chosen by, as
# /proc/cpuinfo names them -> as reported.
_FEATURES = (("avx2", "AVX2"), ("avx512f", "AVX-512"), ("avx512_vnni", "VNNI"), ("avx_vnni", "VNNI"),
             ("avx512_bf16", "bf16"), ("amx_tile", "AMX"))


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def cpu_features() -> List[str]:
    """["AVX2", "AVX-512", "VNNI", "bf16", "AMX"] as far as the CPU has them ([] where unknown)."""
    from ..runtime.cpu_capabilities import cpu_flags

    flags = cpu_flags() or frozenset()
    return list(dict.fromkeys(name for flag, name in _FEATURES if flag in flags))


def load_average() -> Optional[float]:
    """The 1-minute load average now (None where the system has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def describe(load_before: Optional[float] = None) -> Dict[str, object]:
    """The machine as a result records it; the load average now is the run's "after"."""
    return {"cpu": cpu_model(), "features": cpu_features(), "logical_cores": os.cpu_count(),
            "system": platform.platform(), "load_average": {"before": load_before, "after": load_average()}}


def text(machine: Dict[str, object]) -> str:
    """"CPU: AMD EPYC (AVX2), 2 logical cores; load average (1 min) 1.20 before, 1.50 after"."""
    features = ", ".join(machine.get("features") or [])
    cpu = f"{machine.get('cpu')} ({features})" if features else str(machine.get("cpu"))
    load = machine.get("load_average") or {}
    known = [f"{load[key]:.2f} {key}" for key in ("before", "after") if load.get(key) is not None]
    return (f"CPU: {cpu}, {machine.get('logical_cores')} logical cores"
            + (f"; load average (1 min) {', '.join(known)}" if known else ""))


def version(distribution: str) -> Optional[str]:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def versions(*distributions: str) -> Dict[str, Optional[str]]:
    return {name: version(name) for name in distributions}


def commit(checkout: Path) -> Optional[str]:
    """The checkout's short commit, with "+changes" when git shows local changes; None outside git."""
    def git(*args: str) -> Optional[str]:
        try:
            done = subprocess.run(["git", "-C", str(checkout), *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    head = git("rev-parse", "--short", "HEAD")
    if not head:
        return None
    return head + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")
