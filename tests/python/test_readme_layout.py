"""The README's Layout section names folders that exist (a stale layout misleads readers)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_every_folder_the_readme_layout_names_exists():
    readme = (REPO / "README.md").read_text()
    block = readme.split("## Layout", 1)[1].split("```")[1]
    folders = re.findall(r"(?:^|\s)([a-z_./]+/)(?=\s|$|\))", block, re.M)
    assert folders, "no folders found in the Layout section"
    missing = [f for f in folders if not (REPO / f).is_dir()]
    assert missing == []
