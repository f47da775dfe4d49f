"""The report of a run of experiment points: per key, the metrics over its replications with the
arms side by side (mean ± the 95% t interval's half-width) and the policy under test's difference
from each baseline, marked beyond or within its interval (toolturn.metrics.points_table says what
the words mean); figures of the headline metrics' means with their intervals as error bars, one
x position per point key; and the run's other figures drawn from its first point alone (they
show one simulation each, and points are different simulations).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from html import escape

import plotly.graph_objects as go
import pyarrow.compute as pc

from toolturn.metrics.display import metric_label
from toolturn.metrics.points_table import arms_in_order, key_grid, key_tables, over_replications
from toolturn.metrics.reader import RunFolder
from toolturn.metrics.schema import EXPERIMENT_COLUMNS
from toolturn.metrics.summary import has_points
from toolturn.metrics.summary_row import SummaryRow
from toolturn.report.interactive import Interactive, NotDrawn, apply_layout
from toolturn.report.plots import COLOURS
from toolturn.report.series import series_label

# The metrics drawn with their intervals, in page order.
DRAWN_METRICS: tuple[str, ...] = (
    "ttfts_ns.p99",
    "latency_ns.p95",
    "throughput.turns_per_s",
)
NS_PER_MS = 1_000_000


def first_point(run: RunFolder) -> RunFolder:
    """The run as if it were its first point alone: that point's table rows and summary rows
    (without the point columns), for the figures of one simulation."""
    if not has_points(run.tables["turns"]):
        return run
    first = min(run.tables["sessions"]["point"].to_pylist())
    tables = {
        name: table.filter(pc.equal(table["point"], first)).drop_columns(list(EXPERIMENT_COLUMNS))
        for name, table in run.tables.items()
    }
    summary = [
        replace(row, point=None, replication=None, point_key=None)
        for row in run.summary
        if row.point == first
    ]
    return replace(run, tables=tables, summary=summary)


def points_html(summary: Sequence[SummaryRow]) -> str:
    """Every key's table, in run order."""
    return "\n".join(_key_table(title, rows) for title, rows in key_tables(summary))


def _key_table(title: str, rows: Sequence[SummaryRow]) -> str:
    grid = key_grid(rows)
    head = "".join(f"<th>{escape(text)}</th>" for text in grid.heads)
    lines = [
        f"<h3>{escape(title)}</h3>",
        f"<table><thead><tr><th>metric</th><th>unit</th>{head}</tr></thead><tbody>",
    ]
    for label, unit, values in grid.lines:
        cells = "".join(
            f'<td class="value">{escape(text)}</td>'
            if mark is None
            else f'<td class="value {mark}">{escape(text)} ({mark})</td>'
            for text, mark in values
        )
        lines.append(f"<tr><td>{escape(label)}</td><td>{escape(unit)}</td>{cells}</tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)


def interval_figures(summary: Sequence[SummaryRow]) -> list[Interactive | NotDrawn]:
    """Per drawn metric, each arm's mean per point key with its interval as error bars."""
    keys = over_replications(summary)
    return [_interval_figure(metric, keys) for metric in DRAWN_METRICS]


def _interval_figure(metric: str, keys: dict[str, list[SummaryRow]]) -> Interactive | NotDrawn:
    title = f"{metric_label(metric)} per point, 95% t interval over replications"
    rows = [
        row for mine in keys.values() for row in mine if row.metric == metric and row.versus is None
    ]
    if not rows:
        return NotDrawn(title, f"no point has {metric}")
    durations = rows[0].unit == "ns"
    scale = NS_PER_MS if durations else 1.0
    figure = go.Figure()
    # A series per arm and, on a run of several protocols, per protocol (toolturn.report.series).
    protocols = list(dict.fromkeys(row.protocol for row in rows))
    series = [
        (arm, protocol, mine)
        for protocol in protocols
        for arm in arms_in_order(rows)
        if (mine := [row for row in rows if row.arm == arm and row.protocol == protocol])
    ]
    for index, (arm, protocol, mine) in enumerate(series):
        figure.add_trace(
            go.Scatter(
                x=[row.point_key or "(base)" for row in mine],
                y=[row.value / scale for row in mine],
                error_y={
                    "type": "data",
                    "array": [((row.ci_high or row.value) - row.value) / scale for row in mine],
                    "arrayminus": [(row.value - (row.ci_low or row.value)) / scale for row in mine],
                },
                mode="markers+lines",
                name=series_label(*arm, protocol, len(protocols) > 1),
                marker={"color": COLOURS[index % len(COLOURS)]},
            )
        )
    apply_layout(figure)
    unit = "ms" if durations else rows[0].unit
    figure.update_layout(
        xaxis_title="experiment point", yaxis_title=f"{metric_label(metric)} ({unit})"
    )
    return Interactive(
        id=f"points-{metric.replace('.', '-')}",
        title=title,
        caption="Each marker is the mean over the point's replications; its bar the 95% "
        "Student-t interval (none from one replication). Bars that do not overlap are far "
        "apart; the tables' difference column, paired by replication, is the sharper test.",
        figure=figure,
    )
