"""Report files and their Markdown: the date-stamped name, the folder (bench/results/, or
bench/results/quick/ for a smoke run), printing and saving, and table lines."""

from __future__ import annotations

import argparse
import datetime
from pathlib import Path
from typing import List, Optional, Sequence

from common.paths import QUICK_RESULTS, RESULTS

_RULES = {"l": "---", "r": "---:", "c": ":---:"}


def say(text: str = "") -> None:
    """Progress, printed at once."""
    print(text, flush=True)


def stamp() -> str:
    """Today's date as reports are named by: <kind>-YYYY-MM-DD.md."""
    return datetime.date.today().isoformat()


def add_results_dir(parser: argparse.ArgumentParser, quick: bool = False) -> None:
    """--results-dir: where the report goes (default bench/results; with --quick, when the script has
    it, bench/results/quick, so that a smoke run never replaces a real report). Resolve it with
    results_dir()."""
    parser.add_argument("--results-dir", type=Path, help="where the report goes (default bench/results"
                        + ("; --quick: bench/results/quick)" if quick else ")"))


def results_dir(given: Optional[Path], quick: bool = False) -> Path:
    """The folder a report goes to: `given`, else bench/results/quick for a quick run, else bench/results."""
    return given or (QUICK_RESULTS if quick else RESULTS)


def print_and_save(text: str, directory: Path, name: str) -> Path:
    """Prints a report after a blank line and writes it to directory/name; returns that path."""
    print("\n" + text, flush=True)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text)
    return path


def row(*cells: object) -> str:
    """A Markdown table row."""
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def table_head(columns: Sequence[str], align: str = "") -> List[str]:
    """A Markdown table's header and rule; `align` has a letter per column, l (the default), r or c."""
    align = align.ljust(len(columns), "l")
    return [row(*columns), row(*(_RULES[letter] for letter in align))]


def pyplot():
    """matplotlib.pyplot drawing to files only (the Agg backend); ImportError without matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(figure, path: Path, dpi: int = 110) -> None:
    """Lays the figure out, writes it to `path` (creating its folder) and frees it."""
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=dpi)
    pyplot().close(figure)
