"""What a report says about the machine and the software measured: the CPU, its cores and the load
average, and versions."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
from typing import Optional

from common import git
from common.paths import REPO


def cpu_model() -> str:
    """The CPU's model name, from /proc/cpuinfo."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


# The vector features OpenVINO's CPU kernels are chosen by, as /proc/cpuinfo names them -> as reported.
_FEATURES = (("avx2", "AVX2"), ("avx512f", "AVX-512"), ("avx512_vnni", "VNNI"), ("avx_vnni", "VNNI"),
             ("avx512_bf16", "bf16"), ("amx_tile", "AMX"))


def cpu_features() -> str:
    """"AVX2, AVX-512, VNNI, bf16, AMX" as far as the CPU has them ("" where /proc/cpuinfo is missing):
    the same model name can hide CPUs whose kernels differ (an AMD EPYC with or without AVX-512). Read
    here rather than through executorch_openvino.runtime.cpu_capabilities.cpu_flags: some benches
    (fc_kernels, hf_recipe) run without the package importable in their own process."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            flags = next((line.split(":", 1)[1].split() for line in cpuinfo if line.startswith("flags")), [])
    except OSError:
        return ""
    named = [name for flag, name in _FEATURES if flag in flags]
    return ", ".join(dict.fromkeys(named))


def load_average() -> float:
    """The 1-minute load average now."""
    return os.getloadavg()[0]


def machine(load_before: Optional[float] = None, load_after: Optional[float] = None) -> str:
    """The header line of every report: "CPU: <model> (<features>), N logical cores; load average (1 min)
    X before, Y after" (after: now when not given; with no `load_before`, "Y at the end")."""
    after = load_average() if load_after is None else load_after
    load = (f"{after:.2f} at the end" if load_before is None else f"{load_before:.2f} before, {after:.2f} after")
    features = cpu_features()
    model = f"{cpu_model()} ({features})" if features else cpu_model()
    return f"CPU: {model}, {os.cpu_count()} logical cores; load average (1 min) {load}"


def version(distribution: str) -> str:
    """An installed distribution's version, or "not installed"."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def versions(*distributions: str) -> str:
    """"torch 2.x, executorch 1.y, ..." for the distributions named."""
    return ", ".join(f"{name} {version(name)}" for name in distributions)


def our_version() -> str:
    """executorch_openvino's version in pyproject.toml and the checkout's commit, noting local changes
    to src/ or python/ (the code measured)."""
    found = re.search(r'^version\s*=\s*"([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M)
    text = found.group(1) if found else "?"
    commit = git.short_commit(REPO)
    if commit:
        changed = git.has_local_changes(REPO, "src", "python")
        text += f" (checkout {commit}{', with local changes' if changed else ''})"
    return text
