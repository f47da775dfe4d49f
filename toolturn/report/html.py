"""The report page: one self-contained HTML file (plotly's script and every figure inline, the
summary downloadable from the page as CSV and JSON), answering first what the policy under test
buys at each load, then showing the summary level by level and the figures.

The answer fits the first screen of a laptop (1366x768; tests/browser/check_report.py measures
it in Chromium): the title, the run's identity folded into one line, the headline (for a sweep,
the lowest and the highest level's sentence; the others are in the figure and below it) and the
figure of the paired difference against load. A sweep whose levels could not differ says so
above the headline (toolturn.metrics.level_sameness).

The static PNG/SVG exports (``toolturn.report.plots``) sit beside it for papers; the page links them
but does not need them.
"""

from __future__ import annotations

import base64
import csv
import io
import json
from collections.abc import Sequence
from html import escape
from typing import Any

from plotly.offline import get_plotlyjs

from toolturn.metrics.display import RowFormat, measure_name, metric_label
from toolturn.metrics.level_sameness import identical_levels, identical_levels_note
from toolturn.metrics.paired import PAIRED_COLUMNS
from toolturn.metrics.percentiles import PERCENTILE_METHOD_TEXT
from toolturn.metrics.points_table import has_point_rows
from toolturn.metrics.provenance import shown_label
from toolturn.metrics.summary import PAIRED_PREFIX, SummaryRow, arm_label, summary_groups
from toolturn.metrics.summary_table import by_level, headline, ordered_arms, paired_groups
from toolturn.report.interactive import Interactive, NotDrawn
from toolturn.report.plots import Drawn, Skipped
from toolturn.report.points import interval_figures, points_html

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1150px; color: #222;
       padding: 0 1em; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25em 0.8em; }
th { text-align: left; }
td.value { text-align: right; font-variant-numeric: tabular-nums; }
td.beyond { font-weight: 600; }
tr.wall { color: #888; }
figure { margin: 2em 0; }
.skipped { color: #888; font-style: italic; }
.headline { font-size: 1.15em; font-weight: 600; }
.answer { font-weight: 600; margin: 0.4em 0; }
.answer li { margin: 0.15em 0; }
.answer li.more { font-weight: normal; color: #666; }
details.identity summary { color: #555; }
figure.first { margin-top: 0.5em; }
.note { color: #a05a00; }
dt { font-weight: bold; float: left; clear: left; width: 11em; }
dd { margin-left: 12em; }
details { margin: 1em 0; }
"""


def page_head(title: str, plotly: bool = True) -> str:
    """The opening lines every report page shares, up to and including its <h1>: the house
    style, and plotly's script inline (so the page needs no network) unless `plotly` is False."""
    title_line = f"<title>{escape(title)}</title><style>{STYLE}</style>"
    head = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">']
    if plotly:
        head += [title_line, f"<script>{get_plotlyjs()}</script></head><body>"]
    else:
        head.append(title_line + "</head><body>")
    head.append(f"<h1>{escape(title)}</h1>")
    return "\n".join(head)


def render_html(
    metadata: dict[str, Any],
    summary: Sequence[SummaryRow],
    figures: Sequence[Interactive | NotDrawn],
    exports: Sequence[Drawn | Skipped] = (),
) -> str:
    """The page: identity, headline per level, per-level table of a sweep, summaries, figures;
    for a run of experiment points, `_render_points`."""
    title = f"toolturn report: {metadata.get('scenario', '?')} (seed {metadata.get('seed', '?')})"
    if has_point_rows(summary):
        return _render_points(title, metadata, summary, figures, exports)
    levels = by_level(summary)
    protocols = by_protocol(summary)
    parts = [
        page_head(title),
        _identity(metadata, folded=True),
        _sameness_html(summary),
        *(_answer_html(by_level(rows), lead) for lead, rows in protocols),
        _figure_html(figures[0], first=True) if figures else "",
        "<h2>What early tool start buys</h2>",
        "<p>Every policy ran on the same random draws, so each turn exists under each policy: the "
        "numbers below are per-turn differences, paired turn by turn (negative: sooner). The "
        "median's 95% interval is distribution-free (order statistics), the mean's "
        "mean ± 1.96 s/√n.</p>",
        *(heading + "\n".join(_level_headline(load, rows, len(levels))
                               for _, load, rows in by_level(mine))
          for heading, mine in _protocol_sections(protocols)),
        *(_sweep_table(rows, len(protocols) > 1) for _, rows in protocols if len(levels) > 1),
        "<h2>Summary</h2>",
        f"<p>Times are simulated. Percentiles: {escape(PERCENTILE_METHOD_TEXT)}. Grey rows are "
        "wall-clock measurements of the harness itself. " + _downloads(summary) + "</p>",
        *(heading + "\n".join(_level_summary(load, rows, len(levels))
                               for _, load, rows in by_level(mine))
          for heading, mine in _protocol_sections(protocols)),
        "<h2>Figures</h2>",
        "<p>Hover for values, drag to zoom (double-click to reset), click a legend entry to hide "
        "or show its series.</p>",
        *(_figure_html(figure) for figure in figures[1:]),
        _exports(exports),
        "</body></html>",
    ]
    return "\n".join(part for part in parts if part) + "\n"


def _render_points(
    title: str,
    metadata: dict[str, Any],
    summary: Sequence[SummaryRow],
    figures: Sequence[Interactive | NotDrawn],
    exports: Sequence[Drawn | Skipped],
) -> str:
    """The page of a run of experiment points: identity, each key's table over its
    replications, the interval figures, then the figures of the first point
    (toolturn.report.points; `figures` and `exports` must be drawn from that point alone)."""
    parts = [
        page_head(title),
        _identity(metadata),
        "<h2>Experiment points</h2>",
        "<p>Each value is the mean over the point's replications (seeds) ± the half-width of its "
        "95% Student-t interval, mean ± t(0.975, n−1)·s/√n. The difference columns subtract the "
        "baseline policy's value from the policy under test's replication by replication (the "
        "same seed: common random numbers), then take the same interval: <em>beyond</em> when "
        "it excludes zero, <em>within</em> when the replications cannot tell the two apart. "
        f"Times are simulated. Percentiles: {escape(PERCENTILE_METHOD_TEXT)}. "
        + _downloads(summary) + "</p>",
        points_html(summary),
        *(_figure_html(figure) for figure in interval_figures(summary)),
        "<h2>Figures of the first point</h2>",
        "<p>Points are different simulations: the figures below draw the run's first point "
        "alone (its first replication).</p>",
        *(_figure_html(figure) for figure in figures),
        _exports(exports),
        "</body></html>",
    ]
    return "\n".join(part for part in parts if part) + "\n"


def _identity(metadata: dict[str, Any], *, folded: bool = False) -> str:
    """The run's identity as a list; `folded`, inside a one-line `<details>` naming the run,
    seed and commit (the answer must fit the first screen)."""
    versions = metadata.get("versions") or {}
    items = [
        ("run", metadata.get("run_id")),
        ("scenario", metadata.get("scenario")),
        ("scenario sha256", metadata.get("scenario_sha256")),
        ("seed", metadata.get("seed")),
        ("git commit", metadata.get("git_commit") or "unknown"),
        ("versions", ", ".join(f"{shown_label(name)} {v}" for name, v in versions.items())),
    ]
    rows = "".join(f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>" for k, v in items)
    if not folded:
        return f"<dl>{rows}</dl>"
    commit = str(metadata.get("git_commit") or "unknown")[:12]
    line = (
        f"run {metadata.get('run_id')} · scenario {metadata.get('scenario')} · seed "
        f"{metadata.get('seed')} · commit {commit}"
    )
    return f'<details class="identity"><summary>{escape(line)}</summary><dl>{rows}</dl></details>'


def _sameness_html(summary: Sequence[SummaryRow]) -> str:
    same = identical_levels(summary)
    return "" if same is None else f'<p class="note">{escape(identical_levels_note(same))}</p>'


def by_protocol(summary: Sequence[SummaryRow]) -> list[tuple[str, list[SummaryRow]]]:
    """The rows of each wire protocol, in summary order, each with how its sentences begin
    ("on openai-chat: "; nothing for a run of one protocol): arms of two protocols never pool."""
    protocols = list(dict.fromkeys(row.protocol for row in summary))
    return [
        (f"on {protocol}: " if len(protocols) > 1 else "",
         [row for row in summary if row.protocol == protocol])
        for protocol in protocols
    ]


def _protocol_sections(
    protocols: list[tuple[str, list[SummaryRow]]],
) -> list[tuple[str, list[SummaryRow]]]:
    """Each protocol's rows under its own heading (none for a run of one protocol)."""
    return [
        (f"<h3>{escape(lead.removeprefix('on ').rstrip(': '))}</h3>\n" if lead else "", rows)
        for lead, rows in protocols
    ]


def _answer_html(levels: list[tuple[int, float | None, list[SummaryRow]]], lead: str = "") -> str:
    """The headline above the first figure (after `lead`): each level's sentence for up to two
    levels, else the lowest and the highest level's with the number of levels between."""
    sentences = [
        lead + _level_name(load, len(levels)) + sentence
        for _, load, rows in levels
        if (sentence := headline(rows)) is not None
    ]
    if not sentences:
        return ""
    if len(sentences) == 1:
        return f'<p class="headline">{escape(sentences[0])}</p>'
    items = [f"<li>{escape(sentences[0])}</li>"]
    if len(sentences) > 2:
        between = len(sentences) - 2
        items.append(
            f'<li class="more">… {between} level{"s" if between != 1 else ""} between: in the '
            "figure below and in the tables under it</li>"
        )
    items.append(f"<li>{escape(sentences[-1])}</li>")
    return f'<ul class="answer">{"".join(items)}</ul>'


def _level_name(load: float | None, levels: int) -> str:
    return "" if load is None or levels < 2 else f"load {load:g}: "


def _level_headline(load: float | None, rows: list[SummaryRow], levels: int) -> str:
    sentence = headline(rows)
    groups = paired_groups(rows)
    several = len(groups) > 1
    paired = "\n".join(
        (f"<h4>{escape(_pair_heading(group))}</h4>" if several else "")
        + paired_table_html(group, prefix)
        for prefix, group in groups
    )
    if sentence is None:
        return "<p>One policy ran: nothing to pair.</p>" if levels < 2 or load is None else ""
    if levels < 2 or load is None:
        return paired  # its sentence is the page's headline, above the first figure
    return (
        f'<p class="headline">{escape(_level_name(load, levels) + sentence)}</p>' + paired
    )


def _pair_heading(group: Sequence[SummaryRow]) -> str:
    """What a paired table compares: its arm minus each baseline (policies or a profile)."""
    versus = ", ".join(dict.fromkeys(str(row.versus) for row in group))
    return f"{arm_label(*group[0].arm)} minus {versus}"


def paired_table_html(rows: Sequence[SummaryRow], prefix: str = PAIRED_PREFIX) -> str:
    """The paired statistics of one of a level's ``paired_groups`` (its rows' metrics start
    with `prefix`): a row per (baseline, measure)."""
    paired: dict[tuple[str | None, str], float] = {
        (r.versus, r.metric): r.value
        for r in rows
        if r.versus is not None and r.metric.startswith(prefix)
    }
    if not paired:
        return ""
    head = (
        "<tr><th>versus</th><th>measure</th><th>median</th><th>95% CI of median</th>"
        "<th>p90</th><th>mean ± 95% CI</th><th>turns sooner</th><th>pairs</th></tr>"
    )
    lines = [f"<table><thead>{head}</thead><tbody>"]
    for versus in dict.fromkeys(v for v, _ in paired):
        for column in PAIRED_COLUMNS:

            def get(name: str, versus: str | None = versus, column: str = column) -> float | None:
                return paired.get((versus, f"{prefix}{column}.{name}"))

            durations = [get(n) for n in ("median", "p90", "mean", "median_ci_low")]
            shown = RowFormat("ns", [v for v in durations if v is not None])
            unit = f" {shown.shown_unit}"
            median, low, high = get("median"), get("median_ci_low"), get("median_ci_high")
            mean, mean_low = get("mean"), get("mean_ci_low")
            ci = "-" if low is None or high is None else f"{shown(low)} … {shown(high)}{unit}"
            mean_text = (
                "-" if mean is None else shown(mean) + (
                    f" ± {shown(mean - mean_low)}" if mean_low is not None else ""
                ) + unit
            )
            gained, pairs = get("gained"), get("pairs")
            cells = [
                str(versus), measure_name(column),
                "-" if median is None else shown(median) + unit, ci,
                "-" if get("p90") is None else shown(get("p90")) + unit, mean_text,
                "-" if gained is None else f"{gained:.1%}",
                "-" if pairs is None else f"{pairs:,.0f}",
            ]
            lines.append(
                "<tr>" + "".join(
                    f'<td{"" if i < 2 else " class=value"}>{escape(c)}</td>'
                    for i, c in enumerate(cells)
                ) + "</tr>"
            )
    lines.append("</tbody></table>")
    return "\n".join(lines)


# The per-level table of a sweep: (metric, heading).
SWEEP_COLUMNS = (
    ("throughput.turns_per_s", "completed turns/s"),
    ("ttfts_ns.p50", "TTFTS p50"),
    ("latency_ns.p50", "turn latency p50"),
    ("latency_ns.p99", "turn latency p99"),
    ("errors", "turns not completed"),
    ("status_per_1k_requests.429", "HTTP 429 /1k req"),
    ("status_per_1k_requests.529", "HTTP 529 /1k req"),
)


def _sweep_table(summary: Sequence[SummaryRow], split: bool = False) -> str:
    """Per load level and policy: throughput, latency, the share of turns that did not
    complete, and the 429/529 rates; on a run of several protocols (`split`), one table per
    protocol, named in its title."""
    plain = [row for row in summary if row.versus is None]
    title = f"Per load level · {plain[0].protocol}" if split and plain else "Per load level"
    values = {(r.load_level, r.arm, r.metric): r for r in plain}
    policies = ordered_arms(plain)
    head = "".join(f"<th>{escape(h)}</th>" for _, h in SWEEP_COLUMNS)
    lines = [
        f"<h3>{escape(title)}</h3>",
        f"<table><thead><tr><th>load</th><th>policy</th>{head}</tr></thead><tbody>",
    ]
    formats = {
        metric: RowFormat(
            next((r.unit for r in plain if r.metric == metric), "share" if metric == "errors"
                 else "ns"),
            [r.value for r in plain if r.metric == metric],
        )
        for metric, _ in SWEEP_COLUMNS
        if metric != "errors"
    }
    for level, load, rows in by_level(plain):
        turns = {
            p: sum(r.value for r in rows if r.arm == p and r.metric.startswith("turns.outcome."))
            for p in policies
        }
        for policy in policies:
            cells = []
            for metric, _ in SWEEP_COLUMNS:
                if metric == "errors":
                    done = values.get((level, policy, "turns.outcome.completed"))
                    total = turns[policy]
                    cells.append(
                        "-" if done is None or not total else f"{1 - done.value / total:.1%}"
                    )
                    continue
                row = values.get((level, policy, metric))
                shown = formats[metric]
                cells.append("-" if row is None else f"{shown(row.value)} {shown.shown_unit}")
            arm = escape(arm_label(*policy))
            lines.append(
                f"<tr><td>{'' if load is None else f'{load:g}'}</td><td>{arm}</td>"
                + "".join(f'<td class="value">{escape(c)}</td>' for c in cells)
                + "</tr>"
            )
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _level_summary(load: float | None, rows: list[SummaryRow], levels: int) -> str:
    body = _summary_table(rows)
    if levels < 2:
        return body
    return f"<details><summary>{escape(_level_name(load, levels).rstrip(': '))}</summary>{body}" \
        "</details>"


def _summary_table(summary: Sequence[SummaryRow]) -> str:
    summary = [row for row in summary if row.versus is None]
    arms = ordered_arms(summary)
    metrics = list(dict.fromkeys(row.metric for row in summary))
    cells = {(row.arm, row.metric): row for row in summary}
    first = {row.metric: row for row in reversed(summary)}
    head = "".join(f"<th>{escape(arm_label(*arm))}</th>" for arm in arms)
    lines = [f"<table><thead><tr><th>metric</th><th>unit</th>{head}</tr></thead><tbody>"]
    for metric in metrics:
        shown = RowFormat(
            first[metric].unit, [cells[p, metric].value for p in arms if (p, metric) in cells]
        )
        values = "".join(
            f'<td class="value">'
            f"{escape(shown(cells[p, metric].value)) if (p, metric) in cells else '-'}"
            "</td>"
            for p in arms
        )
        css = ' class="wall"' if first[metric].wall_clock else ""
        lines.append(
            f"<tr{css}><td>{escape(metric_label(metric))}</td>"
            f"<td>{escape(shown.shown_unit)}</td>{values}</tr>"
        )
    lines.append("</tbody></table>")
    return "\n".join(lines)


def summary_csv(summary: Sequence[SummaryRow]) -> str:
    """The summary as CSV, the columns of summary.parquet (a run of experiment points: with
    its point columns and interval)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    points = has_point_rows(summary)
    extra = ["point", "replication", "point_key", "ci_low", "ci_high"] if points else []
    writer.writerow(["policy", "versus", "load_level", "load", "metric", "value", "unit",
                     "wall_clock", *extra])
    for r in summary:
        more = [_blank(getattr(r, name)) for name in extra]
        writer.writerow([r.policy, r.versus or "", r.load_level, "" if r.load is None else r.load,
                         r.metric, repr(r.value), r.unit, r.wall_clock, *more])
    return out.getvalue()


def _blank(value: object) -> str:
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def _downloads(summary: Sequence[SummaryRow]) -> str:
    csv_data = base64.b64encode(summary_csv(summary).encode()).decode()
    json_text = json.dumps(summary_groups(list(summary)), indent=1, allow_nan=False)
    json_data = base64.b64encode(json_text.encode()).decode()
    return (
        f'Download the summary: <a id="download-csv" download="summary.csv" '
        f'href="data:text/csv;base64,{csv_data}">CSV</a>, '
        f'<a id="download-json" download="summary.json" '
        f'href="data:application/json;base64,{json_data}">JSON</a>.'
    )


def _figure_html(figure: Interactive | NotDrawn, *, first: bool = False) -> str:
    if isinstance(figure, NotDrawn):
        return (
            f"<h3>{escape(figure.title)}</h3>"
            f'<p class="skipped">Not drawn: {escape(figure.reason)}.</p>'
        )
    div = figure.figure.to_html(
        full_html=False, include_plotlyjs=False, div_id=figure.id,
        config={"displaylogo": False, "responsive": True},
    )
    note = f'<p class="note">{escape(figure.note)}</p>' if figure.note else ""
    css = ' class="first"' if first else ""
    return (
        f'<figure{css}><h3>{escape(figure.title)}</h3>{note}{div}'
        f"<figcaption>{escape(figure.caption)}</figcaption></figure>"
    )


def _exports(exports: Sequence[Drawn | Skipped]) -> str:
    drawn = [e for e in exports if isinstance(e, Drawn)]
    if not drawn:
        return ""
    links = ", ".join(
        f'{escape(e.title)} (<a href="{escape(e.file)}">PNG</a>, '
        f'<a href="{escape(e.file.removesuffix(".png") + ".svg")}">SVG</a>)'
        for e in drawn
    )
    return f"<h2>Static figures</h2><p>Beside this page, for papers: {links}.</p>"
