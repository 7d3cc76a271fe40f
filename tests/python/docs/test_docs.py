"""The user documentation holds together: README.md and docs/*.md link only to files and headings
that exist, the README stays a short page with the two make commands near the top, and the README's
Python example runs as printed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest


REPO = Path(__file__).resolve().parents[3]
README = REPO / "README.md"
PAGES = [README, *sorted((REPO / "docs").glob("*.md"))]

README_MAX_BYTES = 12 * 1024
TOP_LINES = 40

_FENCE = re.compile(r"^ {0,3}(```|~~~)")
# [text](target) and ![alt](target); the text may hold one level of brackets (a badge, `code[0]`).
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
_EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)  # http:, https:, mailto:, ...


def _prose_lines(text: str) -> Iterator[Tuple[int, str]]:
    """(line number, line) outside fenced code blocks, with inline code spans blanked."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        match = _FENCE.match(line)
        if match:
            if fence is None:
                fence = match.group(1)
            elif match.group(1) == fence:
                fence = None
            continue
        if fence is None:
            yield number, re.sub(r"(`+)(?:(?!\1).)+?\1", lambda m: " " * len(m.group(0)), line)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup removed, lowercase, punctuation dropped, spaces to '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").replace("*", "")
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)  # keeps letters, digits, '_', '-' and spaces
    return text.replace(" ", "-")


def anchors(page: Path) -> set:
    """Every anchor GitHub gives the headings of `page` (repeats get -1, -2, ...)."""
    seen: Dict[str, int] = {}
    result = set()
    text = page.read_text(encoding="utf-8")
    raw_lines = text.splitlines()
    for number, _ in _prose_lines(text):  # headings outside code blocks, with their code spans
        match = _HEADING.match(raw_lines[number - 1])
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def links(page: Path) -> List[Tuple[int, str]]:
    """(line number, target) of every markdown link and image in `page`'s prose."""
    text = page.read_text(encoding="utf-8")
    raw_lines = text.splitlines()
    found = []
    for number, line in _prose_lines(text):
        # Matched on the raw line (a link's text may be inline code), skipping what lies wholly inside
        # a code span, which _prose_lines blanked.
        for match in _LINK.finditer(raw_lines[number - 1]):
            if line[match.start():match.end()].strip():
                found.append((number, match.group(1)))
    return found


def broken_links(pages: List[Path], root: Path = REPO) -> List[str]:
    """One line per link of `pages` whose file is missing, or whose #anchor names no heading there."""
    problems = []
    for page in pages:
        for number, target in links(page):
            if _EXTERNAL.match(target):
                continue  # external links are not fetched
            where = f"{page.relative_to(root)}:{number}: {target}"
            path_part, _, anchor = target.partition("#")
            resolved = (page.parent / path_part).resolve() if path_part else page
            if not resolved.exists():
                problems.append(f"{where}: no such file")
                continue
            if anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                problems.append(f"{where}: no heading with anchor #{anchor} in {resolved.name}")
    return problems


def test_slugs_follow_githubs_rules():
    assert slug("Weights in a separate file (`.ptd`)") == "weights-in-a-separate-file-ptd"
    assert slug("`make demo` and `make test`") == "make-demo-and-make-test"
    assert slug("C++") == "c"
    assert slug("Accuracy on every CPU: the overflow fix") == "accuracy-on-every-cpu-the-overflow-fix"
    assert slug("Threads, sharing and profiling") == "threads-sharing-and-profiling"


def test_the_link_check_sees_a_broken_link(tmp_path):
    (tmp_path / "there.md").write_text("# A heading\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md) [ok](there.md#a-heading) [ok](#local) ![gone](missing.png)\n"
        "[bad anchor](there.md#elsewhere) [ext](https://example.com/x) `[in code](nothing.md)`\n"
        "```\n[in a block](nothing.md)\n```\n## Local\n"
    )
    problems = broken_links([page], root=tmp_path)
    assert len(problems) == 2, problems
    assert "missing.png: no such file" in problems[0]
    assert "#elsewhere" in problems[1]


def test_every_relative_link_and_anchor_resolves():
    assert len(PAGES) > 5, "docs/ holds the user pages"
    problems = broken_links(PAGES)
    assert not problems, "\n".join(problems)


# A file of the checkout named in code (`tests/python/runtime/test_x.py::test_y`, `bench/peer_suite/run.py`).
_NAMED_PATH = re.compile(r"`((?:tests|python|bench|src|scripts|cmake|examples|docs)/[A-Za-z0-9_./-]+?)(?:::[^`]*)?`")
_OUTPUTS = ("bench/results/quick",)  # made by a run, not kept


def named_paths_missing(pages: List[Path], root: Path = REPO) -> List[str]:
    """Every repository path a page names in code that the checkout does not have (a moved test, a
    renamed script); names with placeholders (<date>, *) are patterns, not files."""
    missing = []
    for page in pages:
        for number, line in enumerate(page.read_text().splitlines(), 1):
            for match in _NAMED_PATH.finditer(line):
                path = match.group(1).rstrip("/.")
                if any(mark in path for mark in "<*{") or path.startswith(_OUTPUTS):
                    continue
                if not (root / path).exists():
                    missing.append(f"{page.relative_to(root)}:{number}: {path}: no such file")
    return missing


def test_the_path_check_sees_a_moved_file(tmp_path):
    (tmp_path / "tests" / "python" / "runtime").mkdir(parents=True)
    (tmp_path / "tests" / "python" / "runtime" / "test_a.py").write_text("")
    page = tmp_path / "page.md"
    page.write_text("`tests/python/runtime/test_a.py::test_b` `tests/python/test_a.py` `bench/results/<date>.md`\n")
    assert named_paths_missing([page], root=tmp_path) == ["page.md:1: tests/python/test_a.py: no such file"]


def test_every_path_the_docs_name_exists():
    pages = [*PAGES, REPO / "bench" / "README.md"]
    problems = named_paths_missing(pages)
    assert not problems, "\n".join(problems)


def test_readme_is_short_and_starts_with_the_two_commands():
    size = README.stat().st_size
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes; move detail into docs/"
    top = README.read_text(encoding="utf-8").splitlines()[:TOP_LINES]
    for command in ("make demo", "make test"):
        assert any(command in line for line in top), f"`{command}` is not in README.md's first {TOP_LINES} lines"


def _first_python_block(text: str) -> str:
    match = re.search(r"^```python\n(.*?)^```", text, re.M | re.S)
    assert match, "README.md has no ```python block"
    return match.group(1)


VENV = REPO / ".venv"


def _as_a_user() -> dict:
    """The environment of a user who ran `make demo` (or `make test`), then `. .venv/bin/activate`: the
    venv's commands first on PATH, and nothing of ours set (no PYTHONPATH, no EXECUTORCH_OPENVINO_*)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("EXECUTORCH_OPENVINO_")}
    env["PATH"] = os.pathsep.join([str(VENV / "bin"), env.get("PATH", "")])
    env["VIRTUAL_ENV"] = str(VENV)
    return env


@pytest.fixture
def users_venv() -> Path:
    if not (VENV / "bin" / "python").is_file():
        pytest.skip(f"{VENV} does not exist: the two make commands make it")
    return VENV


def test_the_readme_python_example_runs(tmp_path, users_venv):
    """The README's Python example, as written, with the .venv's interpreter and nothing else: guards
    make build's development install (without it, `import executorch_openvino` finds nothing there)."""
    example = tmp_path / "readme_example.py"
    example.write_text(_first_python_block(README.read_text(encoding="utf-8")))
    result = subprocess.run([str(users_venv / "bin" / "python"), str(example)], cwd=tmp_path, env=_as_a_user(),
                            capture_output=True, text=True, timeout=600)
    report = f"exit status {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr[-4000:]}"
    assert result.returncode == 0, report
    assert "compiled by OpenVINO for: ['" in result.stdout, report
    match = re.search(r"max difference from eager PyTorch: (\S+)", result.stdout)
    assert match, report
    assert float(match.group(1)) < 1e-4, report
    assert (tmp_path / "model.pte").is_file()


def test_the_commands_are_on_the_venvs_path(tmp_path, users_venv):
    """`executorch-openvino` and `executorch-openvino-run`, as the README's command-line examples call
    them, found on the activated .venv's PATH and run from another folder."""
    env = _as_a_user()
    for command in ("executorch-openvino", "executorch-openvino-run"):
        found = shutil.which(command, path=env["PATH"])
        assert found and Path(found).parent == users_venv / "bin", f"{command} is not in {users_venv / 'bin'}"
        result = subprocess.run([command, "--help"], cwd=tmp_path, env=env, capture_output=True, text=True,
                                timeout=300)
        assert result.returncode == 0, f"{command} --help: {result.returncode}\n{result.stdout}\n{result.stderr}"
        assert "usage" in (result.stdout + result.stderr).lower()
