"""The one result format: a run as a JSON document that report.py turns into Markdown.

    {"format": "executorch_openvino.benchmark/1", "kind": "zoo", "title": "...", "date": "2026-12-06 18:00",
     "machine": {...machine.describe()...}, "versions": {"torch": "2.13.0", ...}, "commit": "854f3f6",
     "settings": {"rounds": 6, ...}, "notes": ["...", ...],
     "rows": [{"group": "resnet18", "variant": "ours-cpp", "latency_ms": [[...], [...]], ...}, ...],
     "report": {"description": [...], "tables": [...], "targets": [...], "plot": {...}}}

A row holds what was measured for one variant (of one group: a model, a size and weight format): a
field is a number, a text, a list with one number per round, or a list of each round's samples. The
report says how to lay the rows out (report.py), so a run can be rendered again, and the targets it is
held to are data beside the figures.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Dict, Iterable, List, Optional

from . import machine

FORMAT = "executorch_openvino.benchmark/1"


def new_run(kind: str, title: str, *, versions: Iterable[str] = (), checkout: Optional[Path] = None,
            settings: Optional[Dict[str, object]] = None, report: Optional[Dict[str, object]] = None) -> dict:
    """A run starting now: its kind (the file name's start), title, the load average before it, the
    versions of `versions` and the commit of `checkout`."""
    return {"format": FORMAT, "kind": kind, "title": title, "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "machine": {"load_average": {"before": machine.load_average()}},
            "versions": machine.versions(*versions), "commit": machine.commit(checkout) if checkout else None,
            "settings": dict(settings or {}), "notes": [], "rows": [], "report": dict(report or {})}


def finish(run: dict) -> dict:
    """Describes the machine as the run ends (the load average now is its "after")."""
    run["machine"] = machine.describe(load_before=(run.get("machine") or {}).get("load_average", {}).get("before"))
    return run


def add_row(run: dict, group: str, variant: str, **fields) -> dict:
    row = {"group": group, "variant": variant, **fields}
    run["rows"].append(row)
    return row


def rows(run: dict, **where) -> List[dict]:
    return [row for row in run["rows"] if all(row.get(key) == value for key, value in where.items())]


def stamp(run: dict) -> str:
    """The date part of a report's name: YYYY-MM-DD."""
    return run["date"][:10]


def save(run: dict, folder: Path, name: Optional[str] = None) -> Path:
    """Writes NAME.json and NAME.md (rendered) into `folder` (NAME: <kind>-<date>); returns the .md."""
    from .report import plot, render

    name = name or f"{run['kind']}-{stamp(run)}"
    folder.mkdir(parents=True, exist_ok=True)
    if run.get("report", {}).get("plot") and plot(run, folder / f"{name}.png"):
        run["report"]["plot"]["file"] = f"{name}.png"
    write(run, folder / f"{name}.json")
    markdown = folder / f"{name}.md"
    markdown.write_text(render(run))
    return markdown


def write(run: dict, path: Path) -> None:
    """The run as JSON at `path` (its folder made if need be)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(run, indent=1, default=str) + "\n")


def load(path: Path) -> dict:
    run = json.loads(Path(path).read_text())
    if run.get("format") != FORMAT:
        raise ValueError(f"{path} is not a {FORMAT} result (format {run.get('format')!r})")
    return run
