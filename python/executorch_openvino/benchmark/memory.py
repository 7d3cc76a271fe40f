"""This process's resident memory, from /proc/self/status: RSS, its high-water mark (VmHWM) and
resetting that mark, so that a peak read after a step is the step's own (Linux; None elsewhere)."""

from __future__ import annotations

import resource
from pathlib import Path
from typing import Optional


def status_kb(field: str) -> Optional[int]:
    """A kB field of /proc/self/status (VmRSS, VmHWM, ...); None when there is none."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def rss_kb() -> Optional[int]:
    return status_kb("VmRSS")


def peak_kb() -> int:
    """The high-water mark of resident memory (since the last reset_peak())."""
    return status_kb("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def reset_peak() -> bool:
    """Sets VmHWM back to the current RSS (Linux 4.0 and later); False where that is refused."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False
