"""The git facts and files a benchmark needs: a checkout's commit and local changes, and the files of
an earlier revision (git archive; the repository itself is not touched)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Sequence

from common.paths import REPO


def short_commit(checkout: Path = REPO, revision: str = "HEAD") -> str:
    """The abbreviated commit of `revision` in `checkout`, "" when git cannot tell."""
    try:
        done = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", revision], capture_output=True,
                              text=True)
    except OSError:
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def has_local_changes(checkout: Path, *paths: str) -> bool:
    """Whether git status shows changes under `paths` of `checkout`."""
    try:
        done = subprocess.run(["git", "-C", str(checkout), "status", "--porcelain", "--", *paths],
                              capture_output=True, text=True)
    except OSError:
        return False
    return bool(done.stdout.strip())


def extract(revision: str, folder: Path, paths: Sequence[str] = ()) -> Path:
    """The files of `revision` (only `paths`, when given) written into `folder`; returns `folder`."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", revision, *paths], check=True,
                             capture_output=True).stdout
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder
