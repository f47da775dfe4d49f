"""The page comparing two runs (`toolturn report BASE NEW`): one self-contained HTML file in
``DIR/compare.html`` (`--out DIR`, by default ``compare-BASE-NEW`` beside NEW), written atomically.

It shows what `toolturn compare` decides (every moved metric, per load level, with its verdict), and
for runs of the same seed the per-turn differences new minus base of TTFTS and turn latency: a
table per policy and level and their CDFs. Runs `toolturn compare` refuses (another scenario, other
sessions, policies or load levels) are refused here too, before anything is written.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

import plotly.graph_objects as go
import pyarrow.compute as pc
from plotly.subplots import make_subplots

from toolturn.errors import UserError
from toolturn.metrics.atomic import atomic_directory, check_destination
from toolturn.metrics.display import RowFormat, measure_name, metric_label
from toolturn.metrics.paired import PAIRED_COLUMNS, TURN_KEY, pair
from toolturn.metrics.reader import RunFolder
from toolturn.metrics.schema import ARM_COLUMNS
from toolturn.metrics.summary import has_points, rows_at_level, rows_of
from toolturn.report.compare import (
    MetricChange,
    RunPairing,
    compare_runs,
    paired_between,
)
from toolturn.report.html import page_head
from toolturn.report.interactive import apply_layout, cdf_points
from toolturn.report.plots import COLOURS
from toolturn.report.series import series_label

COMPARE_PAGE = "compare.html"
NS_PER_MS = 1_000_000


def write_compare_page(base: RunFolder, new: RunFolder, destination: Path) -> Path:
    """Writes ``destination/compare.html`` (replacing an older compare folder there, nothing
    else) and returns its path. A failed write (a full disk, a read-only folder) is a
    `UserError` naming the folder and the reason, as for a run's report; the atomic write
    leaves neither a half page nor a staging folder behind."""
    changes = compare_runs(base, new)
    pairings = paired_between(base, new)
    check_destination(destination, replace=True, kind="compare folder", marker=COMPARE_PAGE)
    page = render_compare(base, new, changes, pairings)
    try:
        with atomic_directory(destination, replace=True) as staging:
            (staging / COMPARE_PAGE).write_text(page, encoding="utf-8")
    except OSError as error:
        reason = error.strerror or str(error)
        raise UserError(f"{destination}: cannot write the compare page ({reason})") from None
    return destination / COMPARE_PAGE


def render_compare(
    base: RunFolder, new: RunFolder, changes: list[MetricChange], pairings: list[RunPairing]
) -> str:
    moved = [change for change in changes if change.moved]
    failed = [change for change in moved if change.beyond_tolerance]
    # On runs of several protocols every row and series names its protocol (report.series).
    split = len({change.protocol for change in changes}) > 1
    title = f"toolturn compare: {new.metadata.get('scenario', '?')}"
    verdict = (
        f"{len(failed)} of {len(changes)} metrics beyond tolerance (exact)"
        if failed
        else f"all {len(changes)} simulated metrics within tolerance (exact)"
    )
    parts = [
        page_head(title),
        f"<dl><dt>base</dt><dd>{escape(str(base.path))} (seed {base.metadata.get('seed')}, "
        f"commit {escape(str(base.metadata.get('git_commit') or 'unknown'))})</dd>"
        f"<dt>new</dt><dd>{escape(str(new.path))} (seed {new.metadata.get('seed')}, "
        f"commit {escape(str(new.metadata.get('git_commit') or 'unknown'))})</dd></dl>",
        f'<p class="headline">{escape(verdict)}; {len(moved)} moved.</p>',
        "<h2>Moved metrics, per load level</h2>",
        _changes_html(moved, split) if moved else "<p>No metric moved.</p>",
        "<h2>Per turn: new minus base</h2>",
        _pairings_html(pairings, split)
        if pairings
        else "<p>The seeds differ: turns do not pair.</p>",
        _cdf_html(base, new) if pairings else "",
        "</body></html>",
    ]
    return "\n".join(part for part in parts if part) + "\n"


def _changes_html(changes: list[MetricChange], split: bool) -> str:
    head = "".join(
        f"<th>{h}</th>" for h in ("policy @ load", "metric", "base", "new", "change", "verdict")
    )
    lines = [f"<table><thead><tr>{head}</tr></thead><tbody>"]
    for change in changes:
        shown = RowFormat(change.unit, [v for v in (change.base, change.new) if v is not None])
        unit = f" {shown.shown_unit}"
        cells = [
            change.where(split),
            metric_label(change.metric),
            "absent" if change.base is None else shown(change.base) + unit,
            "absent" if change.new is None else shown(change.new) + unit,
            "-" if change.relative is None else f"{change.relative:+.2%}",
            "not gated (wall clock)" if change.wall_clock
            else "FAIL" if change.beyond_tolerance else "within tolerance",
        ]
        lines.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _pairings_html(pairings: list[RunPairing], split: bool) -> str:
    head = "".join(
        f"<th>{h}</th>"
        for h in ("policy @ load", "measure", "median", "p90", "mean", "turns sooner", "pairs")
    )
    lines = [f"<table><thead><tr>{head}</tr></thead><tbody>"]
    for pairing in pairings:
        cells = [pairing.where(split), *pairing.cells()]
        lines.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _cdf_html(base: RunFolder, new: RunFolder) -> str:
    figure = make_subplots(
        rows=1, cols=2, subplot_titles=[measure_name(column) for column in PAIRED_COLUMNS]
    )
    # Turns of a run of experiment points pair within their point (the same seed and settings).
    points = has_points(base.tables["turns"]) and has_points(new.tables["turns"])
    key = [*ARM_COLUMNS, *(["point"] if points else []), *TURN_KEY]
    for col, column in enumerate(PAIRED_COLUMNS, start=1):
        pairs = pair(new.tables["turns"], base.tables["turns"], column, key)
        # A series per arm and, on runs of several protocols, per protocol (report.series).
        arms = sorted(set(zip(pairs["protocol"].to_pylist(), pairs["profile"].to_pylist(),
                              pairs["policy"].to_pylist(), strict=True)))
        split = len({protocol for protocol, _, _ in arms}) > 1
        levels = sorted(set(pairs["load_level"].to_pylist()))
        for index, (protocol, profile, policy) in enumerate(arms):
            on = pairs.filter(pc.equal(pairs["protocol"], protocol))
            for level in levels:
                mine = rows_at_level(rows_of(on, policy, profile), level)
                if not mine.num_rows:
                    continue
                xs, ys = cdf_points(mine["difference"].to_numpy() / NS_PER_MS)
                arm = series_label(profile, policy, protocol, split)
                name = arm if len(levels) < 2 else f"{arm} @ level {level}"
                figure.add_trace(
                    go.Scatter(
                        x=xs, y=ys, mode="lines", name=name, legendgroup=name,
                        showlegend=col == 1,
                        line={"color": COLOURS[index % len(COLOURS)], "shape": "hv"},
                    ),
                    row=1, col=col,
                )
        figure.update_xaxes(title_text="new minus base, per turn (ms, simulated)", col=col)
        figure.update_yaxes(title_text="fraction of paired turns ≤ x", col=col)
    apply_layout(figure)
    div: str = figure.to_html(
        full_html=False, include_plotlyjs=False, div_id="compare-cdf",
        config={"displaylogo": False},
    )
    return (
        "<figure><h3>Per-turn differences</h3>" + div + "<figcaption>CDF over turns both runs "
        "have (same profile, policy, level, session and turn): a vertical line at zero means no "
        "turn moved.</figcaption></figure>"
    )
