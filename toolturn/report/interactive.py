"""The report's interactive figures (plotly), drawn from a run folder.

Why plotly: its figures are plain JSON drawn by one JavaScript file that can be inlined, so the
page is one self-contained file that opens offline and can be mailed (bokeh needs its own JS and
CSS pair per version, Vega-Lite three scripts and a converter for static images); hover, zoom
into tails and toggling a series from the legend come with every figure, no code of ours. The
static PNG/SVG exports for papers stay matplotlib's (``toolturn.report.plots``): plotly's own image
export needs a browser (kaleido).

Rules:

1. Every series is one simulation or one paired comparison at one load level; nothing pools
   levels, nor protocols (``toolturn.report.series``). Series of a sweep are labelled with their
   load.
2. Durations are in milliseconds on log axes with ticks at 1, 2 and 5 per decade (1, 1.5, 2, 3,
   5, 7 over less than two decades), so p50 and p99 can be read off; values of zero (a start
   lag at the physical limit) are drawn at 0.001 ms and the caption says so. Every axis names
   its quantity and unit.
3. CDFs carry markers at p50, p90 and p99 (the summary's percentile method), with the values on
   hover.
4. Series that coincide exactly (``at_message_stop`` and ``serial`` have the same TTFTS in turns
   of one call) are drawn once, labelled with every name, and the figure's note says so.
5. Figures have fixed element ids and no random state, so the same run gives the same page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import plotly.graph_objects as go
import pyarrow.compute as pc
from plotly.subplots import make_subplots

from toolturn.metrics.paired import PAIRED_COLUMNS, paired_differences
from toolturn.metrics.percentiles import percentiles
from toolturn.metrics.reader import RunFolder
from toolturn.metrics.summary import (
    NS_PER_S,
    PAIRED_PREFIX,
    categories,
    load_levels,
    load_sweep,
    rows_at_level,
    rows_of,
    treatment_of,
    values,
)
from toolturn.metrics.summary_table import ordered_arms, ordered_policies
from toolturn.report.plots import COLOURS, NS_PER_MS, concurrency_steps
from toolturn.report.series import (
    by_arm,
    difference_name,
    label_parts,
    panel_rows,
    protocol_groups,
)

ZERO_MS = 0.001
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
MARKED = (("p50", 50.0), ("p90", 90.0), ("p99", 99.0))
# CDFs of more points than this are drawn through this many quantiles (the markers stay exact).
CDF_POINTS = 2000


@dataclass(frozen=True)
class Interactive:
    """A drawn figure: its element id, title, caption and an optional note (rule 4)."""

    id: str
    title: str
    caption: str
    figure: go.Figure
    note: str = ""


@dataclass(frozen=True)
class NotDrawn:
    title: str
    reason: str


Drawing = Callable[[RunFolder, "Context"], "Interactive | NotDrawn"]


@dataclass(frozen=True)
class Context:
    """What every figure needs to know about the run."""

    policies: list[str]
    levels: list[tuple[int, float | None]]
    load_axis: str
    # The policies by protocol (`protocol_groups`): one group unless the run swept protocols.
    groups: list[list[str]]

    def label(self, name: str, load: float | None) -> str:
        return name if len(self.levels) < 2 or load is None else f"{name} @ {load:g}"

    def colour(self, policy: str) -> str:
        index = self.policies.index(policy) if policy in self.policies else len(self.policies)
        return COLOURS[index % len(COLOURS)]

    def dash(self, level: int) -> str:
        return DASHES[[lv for lv, _ in self.levels].index(level) % len(DASHES)]


def context_of(run: RunFolder) -> Context:
    extra = run.metadata.get("extra") if isinstance(run.metadata.get("extra"), dict) else {}
    mode = (extra or {}).get("load_mode")
    axis = {
        "closed": "offered load (sessions at once)",
        "open": "offered load (sessions arriving per s)",
    }.get(str(mode), "offered load")
    policies = ordered_policies(row.policy for row in run.summary if row.versus is None)
    return Context(policies, load_levels(run.tables), axis, protocol_groups(policies, run.summary))


def draw_interactive(run: RunFolder) -> list[Interactive | NotDrawn]:
    """Every interactive figure of the report, in page order: each arm (profile x policy), and
    on a run of several protocols each arm on each protocol, as a policy of its own (`by_arm`);
    the paired figures those of the first profile's policies, on each protocol."""
    run = by_arm(_first_profile_pairs(run))
    context = context_of(run)
    return [drawing(run, context) for drawing in DRAWINGS]


def _first_profile_pairs(run: RunFolder) -> RunFolder:
    """The run with only the paired rows between the policies of its first profile (in the
    summary table's order): one treatment, as the paired figures draw."""
    arms = ordered_arms(run.summary)
    first = arms[0][0] if arms else None
    summary = [
        row for row in run.summary
        if row.versus is None or (row.metric.startswith(PAIRED_PREFIX) and row.profile == first)
    ]
    return replace(run, summary=summary)


def log_ticks(low: float, high: float) -> list[float]:
    """Rule 2's ticks of a log axis over [low, high] (both positive): 1, 2 and 5 per decade, or
    1, 1.5, 2, 3, 5 and 7 over less than two decades, from half `low` to twice `high`. Plotly's
    own labels a log axis's minor ticks with their first digit alone ("2 3 … 9 1 2")."""
    decades = range(int(np.floor(np.log10(low))), int(np.ceil(np.log10(high))) + 1)
    # Over a decade or two, finer steps: p50 and p99 then each have a labelled tick nearby.
    steps = (1, 1.5, 2, 3, 5, 7) if np.log10(high / low) < 2 else (1, 2, 5)
    ticks = [m * 10.0**d for d in decades for m in steps]
    return [t for t in ticks if low / 2 <= t <= high * 2]


def _log_ms_axis(figure: go.Figure, title: str, low: float, high: float, **where: int) -> None:
    """Rule 2: a log axis in ms with ticks at 1, 2, 5 per decade over [low, high]."""
    shown = log_ticks(max(low, ZERO_MS), max(high, ZERO_MS * 10))
    figure.update_xaxes(
        type="log",
        title_text=title,
        tickvals=shown,
        ticktext=[f"{t:g}" for t in shown],
        **where,
    )


def _load_axis(figure: go.Figure, context: Context, **where: int) -> None:
    """The load axis: log with rule 2's ticks over more than two positive levels, else linear."""
    loads = [load for _, load in context.levels if load is not None and load > 0]
    if len(context.levels) <= 2 or len(loads) < len(context.levels):
        figure.update_xaxes(title_text=context.load_axis, type="linear", **where)
        return
    shown = log_ticks(min(loads), max(loads))
    figure.update_xaxes(
        title_text=context.load_axis, type="log", tickvals=shown,
        ticktext=[f"{t:g}" for t in shown], **where,
    )


def cdf_points(data_ms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ordered = np.sort(data_ms)
    fraction = np.arange(1, ordered.size + 1) / ordered.size
    if ordered.size > CDF_POINTS:
        pick = np.unique(np.linspace(0, ordered.size - 1, CDF_POINTS).astype(np.int64))
        ordered, fraction = ordered[pick], fraction[pick]
    return ordered, fraction


def _coinciding(series: dict[str, np.ndarray]) -> list[list[str]]:
    """Rule 4: the names of series grouped by identical values, in the given order."""
    groups: list[list[str]] = []
    seen: list[np.ndarray] = []
    for name, data in series.items():
        for index, other in enumerate(seen):
            if other.shape == data.shape and np.array_equal(np.sort(other), np.sort(data)):
                groups[index].append(name)
                break
        else:
            groups.append([name])
            seen.append(data)
    return groups


def _cdf_figure(
    run: RunFolder, context: Context, table: str, column: str, axis: str, id_: str, title: str,
    caption: str,
) -> Interactive | NotDrawn:
    figure = go.Figure()
    notes: list[str] = []
    low, high, drawn = np.inf, 0.0, False
    for level, load in context.levels:
        at_level = rows_at_level(run.tables[table], level)
        series = {p: values(rows_of(at_level, p), column) for p in context.policies}
        series = {p: data for p, data in series.items() if data.size}
        for group in _coinciding(series):
            data = series[group[0]]
            data_ms = np.maximum(data / NS_PER_MS, ZERO_MS)
            low, high = min(low, float(data_ms.min())), max(high, float(data_ms.max()))
            name = context.label(" = ".join(group), load)
            if len(group) > 1:
                notes.append(f"{' and '.join(group)} coincide exactly" + (
                    f" at load {load:g}" if len(context.levels) > 1 and load is not None else ""
                ))
            _cdf_trace(figure, data, data_ms, name, context.colour(group[0]), context.dash(level))
            drawn = True
    if not drawn:
        return NotDrawn(title, f"no {axis.split(' (')[0]} recorded")
    _log_ms_axis(figure, axis, low, high)
    figure.update_yaxes(title_text="fraction of rows ≤ x", range=[0, 1.02])
    apply_layout(figure)
    note = "; ".join(notes) + (" (drawn once, named together)." if notes else "")
    return Interactive(id_, title, caption, figure, note)


def _cdf_trace(
    figure: go.Figure, data: np.ndarray, data_ms: np.ndarray, name: str, colour: str, dash: str
) -> None:
    xs, ys = cdf_points(data_ms)
    figure.add_trace(
        go.Scatter(
            x=xs, y=ys, mode="lines", name=f"{name} (n={data.size:,})", legendgroup=name,
            line={"color": colour, "dash": dash, "shape": "hv"},
            hovertemplate="%{x:.4g} ms: %{y:.1%}<extra>" + name + "</extra>",
        )
    )
    marks = percentiles(data, [q for _, q in MARKED])
    figure.add_trace(
        go.Scatter(
            x=[max(m / NS_PER_MS, ZERO_MS) for m in marks], y=[q / 100 for _, q in MARKED],
            mode="markers+text", text=[label for label, _ in MARKED], textposition="top left",
            marker={"color": colour, "size": 8, "symbol": "diamond"}, legendgroup=name,
            showlegend=False, name=name,
            hovertemplate="%{text} = %{x:.4g} ms<extra>" + name + "</extra>",
        )
    )


# The top margin: plotly's toolbar (the modebar, about 30 px tall at the figure's top right)
# stays above the subplots' titles, which sit just above the plots, instead of covering the
# rightmost one.
TOP_MARGIN = 60


def apply_layout(figure: go.Figure, height: int = 420) -> None:
    figure.update_layout(
        height=height, margin={"l": 60, "r": 20, "t": TOP_MARGIN, "b": 60},
        template="plotly_white",
        legend={"orientation": "h", "y": -0.25}, hovermode="closest",
    )


def _ttfts(run: RunFolder, context: Context) -> Interactive | NotDrawn:
    return _cdf_figure(
        run, context, "turns", "ttfts_ns", "time to first tool start (ms, simulated, log)",
        "ttfts-cdf", "Time to first tool start",
        "CDF over turns that started a tool: request sent to first tool start.",
    )


def _latency(run: RunFolder, context: Context) -> Interactive | NotDrawn:
    return _cdf_figure(
        run, context, "turns", "latency_ns", "turn latency (ms, simulated, log)",
        "latency-cdf", "Turn latency",
        "CDF over all turns: request sent to turn end (tool results ready or final answer).",
    )


def _start_lag(run: RunFolder, context: Context) -> Interactive | NotDrawn:
    return _cdf_figure(
        run, context, "tools", "start_lag_ns", "tool start lag (ms, simulated, log)",
        "start-lag-cdf", "Tool start lag",
        "CDF over started tools: tool start minus its tool_use block's content_block_stop. "
        f"A lag of zero (the physical limit) is drawn at {ZERO_MS} ms.",
    )


def _paired_by_load(run: RunFolder, context: Context) -> Interactive | NotDrawn:
    """The headline figure: median paired difference (with its 95% CI) against load, per
    baseline, for TTFTS and turn latency."""
    rows = [row for row in run.summary if row.versus is not None]
    if not rows:
        return NotDrawn("What early tool start buys", "the run has a single policy")
    figure = make_subplots(
        rows=1, cols=2, subplot_titles=[f"{m} difference" for m in ("TTFTS", "turn latency")]
    )
    # One treatment per protocol: its baselines' versus labels name the protocol too (by_arm).
    treatment = {str(r.versus): r.policy for r in rows}
    value = {(r.versus, r.load_level, r.metric): r.value for r in rows}
    loads = {level: load for level, load in context.levels}
    for col, column in enumerate(PAIRED_COLUMNS, start=1):
        for versus in treatment:
            xs, ys, lows, highs = [], [], [], []
            for level, _ in context.levels:
                median = value.get((versus, level, f"{PAIRED_PREFIX}{column}.median"))
                if median is None:
                    continue
                low = value.get((versus, level, f"{PAIRED_PREFIX}{column}.median_ci_low"), median)
                high = value.get((versus, level, f"{PAIRED_PREFIX}{column}.median_ci_high"), median)
                xs.append(loads[level] if loads[level] is not None else level)
                ys.append(median / NS_PER_MS)
                lows.append((median - low) / NS_PER_MS)
                highs.append((high - median) / NS_PER_MS)
            figure.add_trace(
                go.Scatter(
                    x=xs, y=ys, mode="lines+markers",
                    name=difference_name(treatment[versus], versus),
                    legendgroup=versus, showlegend=col == 1,
                    line={"color": context.colour(versus)},
                    error_y={"type": "data", "symmetric": False, "array": highs,
                             "arrayminus": lows},
                    hovertemplate="load %{x:g}: median %{y:.4g} ms<extra>" + versus + "</extra>",
                ),
                row=1, col=col,
            )
        figure.update_yaxes(title_text="median per-turn difference (ms)", row=1, col=col)
        _load_axis(figure, context, row=1, col=col)
    figure.add_hline(y=0, line={"color": "#888", "width": 1})
    apply_layout(figure)
    return Interactive(
        "paired-by-load", "What early tool start buys, at each load",
        f"Per load level, the median over paired turns of {label_parts(rows[0].policy)[0]}'s "
        "time minus the baseline's (negative: sooner), with the median's 95% confidence interval "
        "(distribution-free, by order statistics)." + _protocols_note(context),
        figure,
    )


def _protocols_note(context: Context) -> str:
    """What a paired figure's caption adds on a run of several protocols."""
    if len(context.groups) < 2:
        return ""
    return " Each protocol's series pair that protocol's turns only, under its own policies."


def _paired_cdf(run: RunFolder, context: Context) -> Interactive | NotDrawn:
    turns = run.tables["turns"]
    # Per protocol, its policy under test against its other policies: (treatment, versus).
    compared = [
        (treatment, versus)
        for group in context.groups if len(group) > 1 and (treatment := treatment_of(group))
        for versus in group if versus != treatment
    ]
    if not compared:
        return NotDrawn("Per-turn differences", "the run has a single policy")
    figure = make_subplots(rows=1, cols=2, subplot_titles=["TTFTS", "turn latency"])
    for col, column in enumerate(PAIRED_COLUMNS, start=1):
        for level, load in context.levels:
            at_level = rows_at_level(turns, level)
            for treatment, versus in compared:
                pairs = paired_differences(
                    at_level, column, dimension="policy", treatment=treatment, baseline=versus
                )
                data = pairs["difference"].to_numpy()
                if not data.size:
                    continue
                xs, ys = cdf_points(data / NS_PER_MS)
                name = context.label(difference_name(treatment, versus), load)
                figure.add_trace(
                    go.Scatter(
                        x=xs, y=ys, mode="lines", name=name, legendgroup=name,
                        showlegend=col == 1,
                        line={"color": context.colour(versus), "dash": context.dash(level),
                              "shape": "hv"},
                        hovertemplate="%{x:.4g} ms: %{y:.1%}<extra>" + name + "</extra>",
                    ),
                    row=1, col=col,
                )
        figure.update_xaxes(title_text="per-turn difference (ms, simulated)", row=1, col=col)
        figure.update_yaxes(title_text="fraction of paired turns ≤ x", row=1, col=col)
    figure.add_vline(x=0, line={"color": "#888", "width": 1})
    apply_layout(figure)
    return Interactive(
        "paired-cdf", "Per-turn differences",
        "CDF over paired turns (same session and turn under both policies) of "
        f"{label_parts(compared[0][0])[0]}'s time minus the baseline's; left of zero the turn "
        "was sooner. Zoom into the tails." + _protocols_note(context),
        figure,
    )


def _load(run: RunFolder, context: Context) -> Interactive | NotDrawn:
    points = load_sweep(run.tables["turns"])
    if not points:
        return NotDrawn(
            "Throughput, p99 latency and refusals against load",
            "the run did not sweep load (fewer than two load levels)",
        )
    rates = {
        (row.policy, row.load_level, row.metric): row.value
        for row in run.summary
        if row.metric.startswith("status_per_1k_requests.")
    }
    figure = make_subplots(
        rows=1, cols=3,
        subplot_titles=["completed turns per simulated s", "p99 turn latency (ms)",
                        "HTTP 429 + 529 per 1k requests"],
    )
    for policy in context.policies:
        mine = [p for p in points if p.policy == policy]
        loads = [p.load for p in mine]
        refused = [
            rates.get((policy, p.load_level, "status_per_1k_requests.429"), 0.0)
            + rates.get((policy, p.load_level, "status_per_1k_requests.529"), 0.0)
            for p in mine
        ]
        for col, ys in enumerate(
            ([p.turns_per_s for p in mine], [p.latency_p99_ns / NS_PER_MS for p in mine], refused),
            start=1,
        ):
            figure.add_trace(
                go.Scatter(
                    x=loads, y=ys, mode="lines+markers", name=policy, legendgroup=policy,
                    showlegend=col == 1, line={"color": context.colour(policy)},
                ),
                row=1, col=col,
            )
            figure.update_xaxes(title_text=context.load_axis, row=1, col=col)
    figure.update_yaxes(title_text="completed turns (per simulated s)", row=1, col=1)
    figure.update_yaxes(title_text="p99 turn latency (ms, simulated)", row=1, col=2)
    figure.update_yaxes(title_text="429 + 529 (per 1,000 requests)", row=1, col=3)
    apply_layout(figure)
    return Interactive(
        "load-sweep", "Throughput, p99 latency and refusals against load",
        "Per load level: completed turns per simulated second, p99 turn latency, and requests "
        "refused with 429 or 529 per 1,000.",
        figure,
    )


def _concurrency(run: RunFolder, context: Context) -> Interactive | NotDrawn:
    tools = run.tables["tools"]
    ran = tools.filter(pc.and_(pc.is_valid(tools["start_ns"]), pc.is_valid(tools["end_ns"])))
    if ran.num_rows == 0:
        return NotDrawn("Tool concurrency over time", "no tool both started and ended")
    panels = panel_rows(context.levels, context.groups, set(categories(ran, "policy")))
    columns = max(len(present) for _, _, present in panels)
    figure = make_subplots(
        rows=len(panels), cols=columns, shared_yaxes=True,
        subplot_titles=[
            context.label(present[col], load) if col < len(present) else ""
            for _, load, present in panels for col in range(columns)
        ],
    )
    for row, (level, _, present) in enumerate(panels, start=1):
        for col, policy in enumerate(present, start=1):
            mine = rows_of(rows_at_level(ran, level), policy)
            times, running = concurrency_steps(values(mine, "start_ns"), values(mine, "end_ns"))
            figure.add_trace(
                go.Scatter(
                    x=times / NS_PER_S, y=running, mode="lines", name=policy, showlegend=False,
                    line={"color": context.colour(policy), "shape": "hv", "width": 1},
                    hovertemplate="%{x:.1f} s: %{y} running<extra></extra>",
                ),
                row=row, col=col,
            )
            figure.update_xaxes(title_text="simulated time (s)", row=row, col=col)
        figure.update_yaxes(title_text="tools running (count)", row=row, col=1)
    apply_layout(figure, height=max(320, 260 * len(panels)))
    rows = " (a row of panels per protocol)" if len(context.groups) > 1 else ""
    return Interactive(
        "tool-concurrency", "Tool concurrency over time",
        "Number of tools executing at each simulated instant: one panel per policy and per load "
        f"level{rows} (simulations that never coexisted are never added up).",
        figure,
    )


REPAIR_CAUSES = "repairs_by_cause_per_1k_requests"


def _rates(run: RunFolder, context: Context) -> Interactive | NotDrawn:
    panels = {
        "repairs_per_1k_requests": "repairs by kind",
        "synthetic_per_1k_requests": "synthetic results by cause",
    }
    # Repairs by cause: only for a run with session faults, whose summary has those rows.
    if any(r.metric.startswith(f"{REPAIR_CAUSES}.") for r in run.summary):
        panels[REPAIR_CAUSES] = "repairs by cause"
    figure = make_subplots(rows=1, cols=len(panels), subplot_titles=list(panels.values()))
    drawn = False
    for col, metric in enumerate(panels, 1):
        prefix = f"{metric}."
        rows = [
            r for r in run.summary
            if r.metric.startswith(prefix) and r.metric != f"{metric}.all" and r.versus is None
        ]
        kinds = sorted({r.metric.removeprefix(prefix) for r in rows})
        for policy in context.policies:
            for level, load in context.levels:
                mine = {
                    r.metric.removeprefix(prefix): r.value
                    for r in rows if r.policy == policy and r.load_level == level
                }
                if not mine:
                    continue
                drawn = True
                name = context.label(policy, load)
                figure.add_trace(
                    go.Bar(
                        x=kinds, y=[mine.get(k, 0.0) for k in kinds], name=name,
                        legendgroup=name, showlegend=col == 1,
                        marker={"color": context.colour(policy)},
                    ),
                    row=1, col=col,
                )
        figure.update_yaxes(title_text="rate (per 1,000 requests)", row=1, col=col)
    if not drawn:
        return NotDrawn(
            "Repairs and synthetic results", "the run has no repair and no synthetic result"
        )
    apply_layout(figure)
    return Interactive(
        "rates", "Repairs and synthetic results",
        "Per 1,000 model requests, by repair kind and by synthetic-result cause (and, with "
        "session faults, repairs by what broke the transcript: crash, rewind, compaction).",
        figure,
    )


DRAWINGS: tuple[Drawing, ...] = (
    _paired_by_load,
    _paired_cdf,
    _ttfts,
    _latency,
    _start_lag,
    _load,
    _concurrency,
    _rates,
)
