#!/usr/bin/env python3
"""Draws the source tree for docs/source-layout.md from the files themselves: every folder and file of
the library and the package, with the first sentence of its own opening comment or docstring, so the
page cannot drift from the code.

    python scripts/layout.py            prints the block
    python scripts/layout.py --write    puts it between the markers in docs/source-layout.md
    python scripts/layout.py --check    exits 1 when the page's block is not the tree's
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import textwrap
from pathlib import Path
from typing import Iterable, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "source-layout.md"
BEGIN, END = "<!-- layout:begin -->", "<!-- layout:end -->"
WIDTH = 110
NAME_COLUMN = 38
LONGEST, MINIMUM = 150, 20  # characters of a description

# Folders drawn file by file; the others are drawn as one line each (their first-level contents).
DETAILED = ("src", "include", "python/executorch_openvino")
OUTLINED = ("tests", "bench", "workloads", "cmake", "examples", "scripts", "docs")
_SKIPPED = {"__pycache__", "results", "corpus", "regressions"}
_C_SUFFIXES = (".h", ".cpp", ".c")


def first_sentence(text: str) -> str:
    """The first sentence of a comment or docstring, on one line."""
    paragraph = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    flat = " ".join(paragraph.split())
    # A sentence ends at a full stop before a space (not that of "e.g." or "i.e.").
    match = re.search(r"^(.+?(?<!e\.g)(?<!i\.e)[.!?])(\s|$)", flat)
    sentence = match.group(1) if match else flat
    sentence = sentence[:-1] if sentence.endswith(":") else sentence
    if len(sentence) <= LONGEST:
        return sentence
    # A long sentence is drawn up to where its first clause ends (outside parentheses).
    depth, ends = 0, []
    for i, char in enumerate(sentence[:LONGEST]):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and i >= MINIMUM and sentence[i:i + 2] in (": ", "; ", ", "):
            ends.append((sentence[i] == ",", i))
    if ends:
        return sentence[:min(ends)[1]]  # a colon or semicolon before any comma
    return sentence[:sentence.rfind(" ", 0, LONGEST)] + " ..."


def _leading_comment(path: Path, marker: str) -> str:
    lines = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        stripped = line.strip()
        if not lines and (stripped.startswith("#!") or not stripped):
            continue
        if not stripped.startswith(marker):
            break
        lines.append(stripped[len(marker):].strip())
    return "\n".join(lines)


def description(path: Path) -> str:
    """What a file says of itself first; '' when it says nothing."""
    if path.suffix == ".py":
        try:
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        except SyntaxError:
            doc = None
        return first_sentence(doc) if doc else first_sentence(_leading_comment(path, "#"))
    if path.suffix in _C_SUFFIXES:
        return first_sentence(_leading_comment(path, "//"))
    if path.suffix == ".md":
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("# "):
                return line[2:].strip()
        return ""
    if path.suffix in (".cmake", ".sh", ".txt") or path.name in ("CMakeLists.txt", "run"):
        return first_sentence(_leading_comment(path, "#"))
    return ""


def _row(depth: int, name: str, text: str) -> List[str]:
    label = "  " * depth + name
    if not text:
        return [label]
    indent = max(NAME_COLUMN, len(label) + 2)
    wrapped = textwrap.wrap(text, WIDTH - indent) or [""]
    first = label.ljust(indent) + wrapped[0]
    return [first] + [" " * indent + line for line in wrapped[1:]]


def _rooms(folder: Path) -> Iterable[Tuple[str, Path]]:
    """(name as drawn, the file that describes it) for the files of a folder: a C++ header and its
    source are one room."""
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    names = {p.name for p in files}
    for path in files:
        if path.suffix == ".cpp" and path.with_suffix(".h").name in names:
            continue  # drawn with its header
        if path.suffix == ".h" and path.with_suffix(".cpp").name in names:
            yield f"{path.stem}.h/.cpp", path
        elif path.suffix in _C_SUFFIXES + (".py", ".cmake") or path.name == "CMakeLists.txt":
            yield path.name, path


def _folder_text(folder: Path) -> str:
    init = folder / "__init__.py"
    if init.is_file():
        return description(init)
    readme = folder / "README.md"
    return description(readme) if readme.is_file() else ""


def _detailed(folder: Path, depth: int) -> List[str]:
    rows = []
    for name, path in _rooms(folder):
        if name == "__init__.py" and depth > 0 and folder.name != "executorch_openvino":
            continue  # said on the folder's own line
        rows += _row(depth, name, description(path))
    for child in sorted(p for p in folder.iterdir() if p.is_dir() and p.name not in _SKIPPED):
        rows += _row(depth, child.name + "/", _folder_text(child))
        rows += _detailed(child, depth + 1)
    return rows


def _outlined(folder: Path) -> List[str]:
    children = sorted(p for p in folder.iterdir() if not p.name.startswith(".") and p.name not in _SKIPPED
                      and p.name != "__pycache__")
    folders = [p.name + "/" for p in children if p.is_dir()]
    return _row(0, folder.relative_to(REPO).as_posix() + "/",
                (_folder_text(folder) + " " if _folder_text(folder) else "")
                + (f"[{', '.join(folders)}]" if folders else f"{len(children)} files"))


def block() -> str:
    rows: List[str] = []
    for top in DETAILED:
        folder = REPO / top
        rows += _row(0, top + "/", _folder_text(folder))
        rows += _detailed(folder, 1)
    for top in OUTLINED:
        if (REPO / top).is_dir():
            rows += _outlined(REPO / top)
    return "```\n" + "\n".join(line.rstrip() for line in rows) + "\n```"


def _page_block(page: str) -> Optional[str]:
    if BEGIN not in page or END not in page:
        return None
    return page.split(BEGIN, 1)[1].split(END, 1)[0].strip()


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help=f"update {PAGE.relative_to(REPO)}")
    mode.add_argument("--check", action="store_true", help="exit 1 when the page is out of date")
    args = parser.parse_args(argv)
    drawn = block()
    if not (args.write or args.check):
        print(drawn)
        return 0
    page = PAGE.read_text(encoding="utf-8")
    if _page_block(page) is None:
        print(f"{PAGE}: no {BEGIN} ... {END} markers", file=sys.stderr)
        return 1
    if args.check:
        if _page_block(page) != drawn:
            print(f"{PAGE.relative_to(REPO)} does not show the tree as it is: run python scripts/layout.py --write",
                  file=sys.stderr)
            return 1
        return 0
    before, rest = page.split(BEGIN, 1)
    PAGE.write_text(before + BEGIN + "\n" + drawn + "\n" + END + rest.split(END, 1)[1], encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
