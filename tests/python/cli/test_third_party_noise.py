"""What the command line hides of NNCF (cli/_third_party_noise.py), which weight compression
imports late, in the middle of a command: its INFO tables and its progress bars go, its warnings
stay."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

SCRIPT = textwrap.dedent(
    """
    import contextlib, sys
    from executorch_openvino.cli._third_party_noise import known_messages_hidden

    with known_messages_hidden() if sys.argv[1] == "hidden" else contextlib.nullcontext():
        assert "rich" not in sys.modules  # imported inside the block, as NNCF is in a command
        from nncf.common.logging import nncf_logger
        from nncf.common.logging.track_progress import track

        nncf_logger.info("the bit widths table")
        nncf_logger.warning("a warning of NNCF")
        for _ in track(range(3), description="Applying Weight Compression"):
            pass
    """
)


def _run(mode: str) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "python")] + [p for p in [env.get("PYTHONPATH")] if p])
    result = subprocess.run([sys.executable, "-c", SCRIPT, mode], env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout + result.stderr


def test_nncf_s_tables_and_progress_bars_are_hidden_and_its_warnings_shown():
    """Guards rich's console quieted only when rich was imported before the block (NNCF imports it
    during the command), and NNCF's logger silenced whole (its warnings are the user's business)."""
    pytest.importorskip("nncf")
    shown = _run("shown")
    assert "the bit widths table" in shown and "Applying Weight Compression" in shown  # what there is to hide
    hidden = _run("hidden")
    assert "the bit widths table" not in hidden and "Applying Weight Compression" not in hidden, hidden
    assert "a warning of NNCF" in hidden
