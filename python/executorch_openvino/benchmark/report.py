"""A run (results.py) as Markdown: its header (date, machine, versions, commit, settings), then the
tables and targets its report lays out, all of them data:

    "tables": [{"title": "...", "each": "group", "where": {"side": "cpp"}, "per": "row" | "group",
                "columns": [{"title": "p50 ms", "field": "latency_ms", "stat": "median", "format": ".3f"},
                            {"title": "/ native", "field": "latency_ms", "vs": "native-cpp", "whole": true,
                             "format": ".3f", "unit": "×"}, ...],
                "text": ["a paragraph after the table"]}],
    "targets": [{"title": "decode ≥ 1.0× GenAI", "where": {"variant": "ours"}, "field": "decode_tok_s",
                 "vs": "genai", "at_least": 1.0}],
    "plot": {"title": "...", "field": "latency_ms", "vs": "native-cpp", "whole": true, "series": ["ours-cpp"]}
            or {"kind": "line", "x": "cycle", "y": ["rss_mb"], "where": {"group": "cycles"}},
    "csv": {"where": {...}, "columns": [{"title": "median_ms", "field": "latency_ms", "stat": "median"}, ...]}

A column reads `field` of the table's row (with "per": "group", of the group's row whose variant is
`of`). A list of samples (or of rounds' samples) is summarised by `stat`: median, p90, p99 (stats.percentile),
mean, min, max, count, or spread (each round's figure: "median [lowest–highest]"). With `vs` it is
compared with the same field of another variant of the group (or of the variant the row's field `vs_field`
names), round by round ("median [lowest–highest]" of the per-round ratios, `op` "difference" for
differences), or over the whole run with `whole`.
`part` takes one figure of a "median [lowest–highest]": "median", "lowest" or "highest".
`scale` multiplies, `format` and `unit` print. A missing figure prints as "–". `marks` print a row's
cell otherwise: the first of [{"where": {"outputs_agree": false}, "text": "{} DIFFERS"}, ...] whose
`where` the row matches gives the cell's text, "{}" standing for the figure as it would print.
A run's CSV (csv_text) has one line per row and a column per column of its "csv" spec, the figures
unformatted.
"""

from __future__ import annotations

import csv
import io
import statistics
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

from . import machine, stats

Figure = Union[None, str, float, Tuple[float, float, float]]
MISSING = "–"
_STATS = {"median": stats.median, "p50": stats.median, "p90": lambda v: stats.percentile(v, 0.9),
          "p99": lambda v: stats.percentile(v, 0.99), "mean": statistics.fmean, "min": min, "max": max,
          "count": len}


def ratio(title: str, field: str, vs: str, **more) -> dict:
    """A column (or a target) of `field` over variant `vs`'s, per round: "median [lowest–highest]×"."""
    return {"title": title, "field": field, "vs": vs, "format": ".2f", "unit": "×", **more}


def _matches(row: dict, where: Optional[dict]) -> bool:
    """Whether the row has each field of `where` at its value (or at one of a list of values)."""
    return all(row.get(key) in (wanted if isinstance(wanted, list) else [wanted]) for key, wanted in (where or {}).items())


def _peer(rows: Sequence[dict], row: dict, variant: str) -> Optional[dict]:
    return next((r for r in rows if r.get("group") == row.get("group") and r.get("variant") == variant), None)


_PARTS = ("median", "lowest", "highest")


def figure(rows: Sequence[dict], row: Optional[dict], column: dict) -> Figure:
    """One cell's figure before printing: a number, a (median, low, high), a text, or None."""
    value = _figure(rows, row, column)
    if "part" in column and isinstance(value, tuple):
        return value[_PARTS.index(column["part"])]
    return value


def _figure(rows: Sequence[dict], row: Optional[dict], column: dict) -> Figure:
    if row is None:
        return None
    value = row.get(column["field"])
    if value is None or isinstance(value, (str, bool)):
        return value
    scale = column.get("scale", 1.0)
    if "vs" in column or "vs_field" in column:
        other = _peer(rows, row, column.get("vs") or row.get(column.get("vs_field")))
        reference = other.get(column["field"]) if other else None
        if reference is None or not isinstance(value, list):
            return _compare_scalars(value, reference, column)
        difference = column.get("op") == "difference"
        if column.get("whole"):
            if not stats.flat(value) or not stats.flat(reference):
                return None
            mine, theirs = stats.median(stats.flat(value)), stats.median(stats.flat(reference))
            return (mine - theirs) * scale if difference else (mine / theirs if theirs else None)
        per_round = stats.round_differences(value, reference) if difference else stats.round_ratios(value, reference)
        return tuple(x * (scale if difference else 1.0) for x in stats.summary(per_round)) if per_round else None
    if not isinstance(value, list):
        return value * scale if "scale" in column else value
    if column.get("stat") == "spread":
        known = [x for x in stats.per_round(value) if x is not None]
        return tuple(x * scale for x in stats.summary(known)) if known else None
    numbers = stats.flat(value)
    return _STATS[column.get("stat", "median")](numbers) * scale if numbers else None


def _compare_scalars(value, reference, column: dict) -> Optional[float]:
    if not isinstance(value, (int, float)) or not isinstance(reference, (int, float)):
        return None
    if column.get("op") == "difference":
        return (value - reference) * column.get("scale", 1.0)
    return value / reference if reference else None


def cell(value: Figure, column: dict) -> str:
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value.replace("|", "\\|").replace("\n", " ")
    spec, unit = column.get("format", ".3g"), column.get("unit", "")
    if isinstance(value, tuple):
        return f"{value[0]:{spec}} [{value[1]:{spec}}–{value[2]:{spec}}]{unit}"
    return f"{value:{spec}}{unit}"


def marked(row: dict, column: dict, text: str) -> str:
    """The cell's text as the first of the column's marks the row matches says (the text itself without)."""
    mark = next((m for m in column.get("marks") or [] if _matches(row, m.get("where"))), None)
    return mark["text"].replace("{}", text) if mark else text


def _cell(rows: Sequence[dict], row: Optional[dict], column: dict) -> str:
    text = cell(figure(rows, row, column), column)
    return marked(row, column, text) if row is not None else text


def _line(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def table(rows: Sequence[dict], spec: dict) -> List[str]:
    """The Markdown lines of one table spec over `rows` (already filtered)."""
    columns = spec["columns"]
    lines = [_line([c["title"] for c in columns]),
             _line(["---:" if c.get("format") or "vs" in c or "stat" in c else "---" for c in columns])]
    if spec.get("per") == "group":
        groups = list(dict.fromkeys(r.get("group") for r in rows))
        for group in groups:
            members = [r for r in rows if r.get("group") == group]
            lines.append(_line([group if c["field"] == "group" else
                                _cell(rows, next((r for r in members if r.get("variant") == c.get("of")), None), c)
                                for c in columns]))
    else:
        lines += [_line([_cell(rows, row, c) for c in columns]) for row in rows]
    return lines


def targets(run: dict) -> List[str]:
    """Each target met or not, per row it applies to (the median of per-round ratios where it compares)."""
    specs = run.get("report", {}).get("targets") or []
    if not specs:
        return []
    lines = ["## Targets", "", _line(["target", "group", "variant", "measured", "met"]), _line(["---"] * 3 + ["---:", "---"])]
    for target in specs:
        for row in (r for r in run["rows"] if _matches(r, target.get("where"))):
            value = figure(run["rows"], row, target)
            middle = value[0] if isinstance(value, tuple) else value
            if not isinstance(middle, (int, float)):
                met = MISSING
            elif "at_least" in target:
                met = "yes" if middle >= target["at_least"] else "no"
            else:
                met = "yes" if middle <= target["at_most"] else "no"
            lines.append(_line([target["title"], str(row.get("group")), str(row.get("variant")),
                                cell(value, target), met]))
    return lines + [""]


def header(run: dict) -> List[str]:
    lines = [f"# {run.get('title', run.get('kind'))}, {run.get('date')}", ""]
    if run.get("machine"):
        lines.append(f"- {machine.text(run['machine'])}")
    known = {name: v for name, v in (run.get("versions") or {}).items() if v}
    if known:
        lines.append("- " + ", ".join(f"{name} {v}" for name, v in known.items()))
    if run.get("commit"):
        lines.append(f"- executorch_openvino at {run['commit']}")
    if run.get("settings"):
        lines.append("- " + "; ".join(f"{key}: {value}" for key, value in run["settings"].items()))
    return lines + [""]


def render(run: dict) -> str:
    """The whole report of a run: its header, then its body."""
    return "\n".join(header(run) + body(run)).rstrip() + "\n"


def body(run: dict) -> List[str]:
    """The report's lines after its header: description, plot, tables, targets and notes (what
    `executorch-openvino bench` prints)."""
    report = run.get("report") or {}
    lines: List[str] = []
    for paragraph in report.get("description") or []:
        lines += [paragraph, ""]
    if report.get("plot", {}).get("file"):
        lines += [f"![{report['plot'].get('title', 'plot')}]({report['plot']['file']})", ""]
    for spec in report.get("tables") or []:
        rows = [r for r in run["rows"] if _matches(r, spec.get("where"))]
        if not rows:
            continue
        if spec.get("title"):
            lines += [f"## {spec['title']}", ""]
        parts = list(dict.fromkeys(r.get(spec["each"]) for r in rows)) if spec.get("each") else [None]
        for part in parts:
            chosen = [r for r in rows if part is None or r.get(spec["each"]) == part]
            if part is not None:
                lines += [f"### {part}", ""]
            lines += table(chosen, spec) + [""]
        for paragraph in spec.get("text") or []:
            lines += [paragraph, ""]
    lines += targets(run)
    if run.get("notes"):
        lines += ["## Notes", ""] + [f"- {note}" for note in run["notes"]] + [""]
    return lines


def csv_text(run: dict) -> str:
    """The run's rows (those its "csv" spec's `where` matches) as CSV, a column per column of the spec."""
    spec = (run.get("report") or {}).get("csv") or {}
    columns = spec.get("columns") or []
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([column["title"] for column in columns])
    for row in (r for r in run["rows"] if _matches(r, spec.get("where"))):
        figures = [figure(run["rows"], row, column) for column in columns]
        writer.writerow(["" if value is None else value for value in figures])
    return out.getvalue()


def plot(run: dict, path: Path) -> bool:
    """The report's plot, False when matplotlib is not installed or nothing is to be drawn: bars per
    group, one per variant of `series` (its `field`, or against `vs`); or, with "kind": "line", the
    rows matching `where` as lines of the `y` fields over the `x` field."""
    spec = run.get("report", {}).get("plot")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    groups = list(dict.fromkeys(r.get("group") for r in run["rows"]))
    line = spec.get("kind") == "line"
    figure_, axes = plt.subplots(figsize=(8, 4.5 if line else 0.22 * len(groups) * len(spec["series"]) + 1.5))
    if line:
        chosen = [r for r in run["rows"] if _matches(r, spec.get("where"))]
        for field in spec["y"]:
            axes.plot([r[spec["x"]] for r in chosen], [r.get(field) for r in chosen], linewidth=1, label=field)
        axes.set_xlabel(spec["x"])
    else:
        height, drawn = 0.8 / len(spec["series"]), False
        for k, variant in enumerate(spec["series"]):
            found = [figure(run["rows"], _peer(run["rows"], {"group": g}, variant), spec) for g in groups]
            values = [v[0] if isinstance(v, tuple) else (v if isinstance(v, (int, float)) else 0.0) for v in found]
            drawn = drawn or any(values)
            axes.barh([g + k * height for g in range(len(groups))], values, height, label=variant)
        axes.set_yticks([g + 0.4 - height / 2 for g in range(len(groups))], groups)
        axes.invert_yaxis()
        if "vs" in spec and spec.get("op") != "difference":
            axes.axvline(1.0, color="black", linewidth=0.8)
        if not drawn:  # no variant of the series was measured: no plot
            plt.close(figure_)
            return False
    axes.set_title(spec.get("title", ""), fontsize=10)
    axes.legend(fontsize=8)
    figure_.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure_.savefig(path, dpi=110)
    plt.close(figure_)
    return True
