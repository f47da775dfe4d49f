"""The report page: the run's identity, its summary table and its figures, in one HTML file."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from sim.metrics.summary import SummaryRow, arm_label
from sim.metrics.summary_table import display_unit, format_value, ordered_arms
from sim.report.plots import Drawn, Skipped

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25em 0.8em; }
td.value { text-align: right; font-variant-numeric: tabular-nums; }
tr.wall { color: #888; }
figure { margin: 2em 0; }
img { max-width: 100%; border: 1px solid #eee; }
.skipped { color: #888; font-style: italic; }
dt { font-weight: bold; float: left; clear: left; width: 11em; }
dd { margin-left: 12em; }
"""


def render_html(
    metadata: dict[str, Any], summary: Sequence[SummaryRow], figures: Sequence[Drawn | Skipped]
) -> str:
    """A self-contained page (figures referenced by relative file name, next to it)."""
    title = f"sim report: {metadata.get('scenario', '?')} (seed {metadata.get('seed', '?')})"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        _identity(metadata),
        "<h2>Summary</h2>",
        "<p>Times are simulated. Percentiles use numpy's <code>higher</code> method (each is a "
        "value some row has). Grey rows are wall-clock measurements of the harness itself.</p>",
        _summary_table(summary),
        "<h2>Figures</h2>",
        *(_figure(figure) for figure in figures),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _identity(metadata: dict[str, Any]) -> str:
    versions = metadata.get("versions") or {}
    items = [
        ("run", metadata.get("run_id")),
        ("scenario", metadata.get("scenario")),
        ("scenario sha256", metadata.get("scenario_sha256")),
        ("seed", metadata.get("seed")),
        ("git commit", metadata.get("git_commit") or "unknown"),
        ("versions", ", ".join(f"{name} {version}" for name, version in versions.items())),
    ]
    rows = "".join(f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>" for k, v in items)
    return f"<dl>{rows}</dl>"


def _summary_table(summary: Sequence[SummaryRow]) -> str:
    arms = ordered_arms(summary)
    metrics = list(dict.fromkeys(row.metric for row in summary))
    cells = {(row.arm, row.metric): row for row in summary}
    first = {row.metric: row for row in reversed(summary)}
    head = "".join(f"<th>{escape(arm_label(*arm))}</th>" for arm in arms)
    lines = [f"<table><thead><tr><th>metric</th><th>unit</th>{head}</tr></thead><tbody>"]
    for metric in metrics:
        unit = first[metric].unit
        shown = "".join(
            f'<td class="value">'
            f"{escape(format_value(cells[p, metric].value, unit)) if (p, metric) in cells else '-'}"
            "</td>"
            for p in arms
        )
        css = ' class="wall"' if first[metric].wall_clock else ""
        lines.append(
            f"<tr{css}><td>{escape(metric)}</td><td>{escape(display_unit(unit))}</td>{shown}</tr>"
        )
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _figure(figure: Drawn | Skipped) -> str:
    if isinstance(figure, Skipped):
        return (
            f"<h3>{escape(figure.title)}</h3>"
            f'<p class="skipped">Not drawn: {escape(figure.reason)}.</p>'
        )
    return (
        f"<figure><h3>{escape(figure.title)}</h3>"
        f'<img src="{escape(figure.file)}" alt="{escape(figure.title)}">'
        f"<figcaption>{escape(figure.caption)}</figcaption></figure>"
    )
