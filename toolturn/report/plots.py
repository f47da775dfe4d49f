"""The report's figures, drawn from a run folder with matplotlib's Agg renderer.

Figures are built as ``matplotlib.figure.Figure`` objects, never through ``pyplot``, so drawing
them touches no global state and needs no display. Each drawing function returns the figure, or
the reason it cannot be drawn for this run (shown in the report in its place).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from toolturn.metrics.reader import RunFolder
from toolturn.metrics.summary import (
    NS_PER_S,
    SummaryRow,
    categories,
    load_levels,
    load_sweep,
    rows_at_level,
    rows_of,
    values,
)
from toolturn.report.series import by_arm, panel_rows, policies_of, protocol_groups

NS_PER_MS = 1_000_000
DPI = 110
# Fixed colour per policy position, so a policy keeps its colour across the figures: matplotlib's
# first six tab10 colours, written out so the page's plotly figures draw the same ones.
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")


@dataclass(frozen=True)
class Drawn:
    """A figure written to ``file`` (a name inside the report folder)."""

    file: str
    title: str
    caption: str


@dataclass(frozen=True)
class Skipped:
    """A figure this run has no data for, and why."""

    title: str
    reason: str


@dataclass(frozen=True)
class _Plot:
    file: str
    title: str
    caption: str
    draw: Callable[[RunFolder, list[str]], Figure | str]


def draw_figures(run: RunFolder, folder: Path) -> list[Drawn | Skipped]:
    """Draws every figure of the report into ``folder``, in report order."""
    run = by_arm(run)
    policies = policies_of(run)
    results: list[Drawn | Skipped] = []
    for plot in PLOTS:
        figure = plot.draw(run, policies)
        if isinstance(figure, str):
            results.append(Skipped(plot.title, figure))
            continue
        figure.suptitle(plot.title)
        # No "Software" or date stamp, a fixed id salt: the same run gives the same bytes.
        figure.savefig(folder / plot.file, dpi=DPI, metadata={"Software": None})
        with rc_context({"svg.hashsalt": "sim-report"}):
            figure.savefig(
                folder / plot.file.replace(".png", ".svg"), metadata={"Date": None, "Creator": None}
            )
        results.append(Drawn(plot.file, plot.title, plot.caption))
    return results


def _colour(policies: list[str], policy: str) -> str:
    return COLOURS[policies.index(policy) % len(COLOURS)]


def _cdf_figure(
    table: pa.Table, column: str, policies: list[str], xlabel: str, empty: str
) -> Figure | str:
    series = {policy: values(rows_of(table, policy), column) for policy in policies}
    if not any(data.size for data in series.values()):
        return empty
    figure = Figure(figsize=(7, 4.2), layout="constrained")
    axes = figure.subplots()
    for policy, data in series.items():
        if data.size:
            ordered = np.sort(data) / NS_PER_MS
            fraction = np.arange(1, ordered.size + 1) / ordered.size
            axes.step(
                ordered,
                fraction,
                where="post",
                label=f"{policy} (n={data.size:,})",
                color=_colour(policies, policy),
            )
    # Times span milliseconds to minutes and start lags are often exactly zero: a log scale
    # that turns linear below 1 ms shows both the bulk and the tail.
    axes.set_xscale("symlog", linthresh=1.0)
    axes.set_xlabel(xlabel)
    axes.set_ylabel("fraction of rows ≤ x")
    axes.set_ylim(0, 1.02)
    axes.grid(alpha=0.3)
    axes.legend(loc="lower right")
    return figure


def _cdf_of(
    table: str, column: str, xlabel: str, empty: str
) -> Callable[[RunFolder, list[str]], Figure | str]:
    """The drawing of `column`'s CDF per policy, over the rows of `table`; `empty` says why
    there is none."""

    def draw(run: RunFolder, policies: list[str]) -> Figure | str:
        return _cdf_figure(run.tables[table], column, policies, xlabel, empty)

    return draw


def _rates(run: RunFolder, policies: list[str]) -> Figure | str:
    # Repairs by cause: only for a run with session faults, whose summary has those rows.
    by_cause = any(row.metric.startswith(f"{REPAIR_CAUSES}.") for row in run.summary)
    figure = Figure(figsize=(15 if by_cause else 10, 4.2), layout="constrained")
    panels = figure.subplots(1, 3 if by_cause else 2)
    left, right = panels[0], panels[1]
    _rate_bars(left, run.summary, "repairs_per_1k_requests", policies, "repairs by kind")
    _rate_bars(
        right, run.summary, "synthetic_per_1k_requests", policies, "synthetic results by cause"
    )
    if by_cause:
        _rate_bars(panels[2], run.summary, REPAIR_CAUSES, policies, "repairs by cause")
    handles = [Patch(color=_colour(policies, policy), label=policy) for policy in policies]
    # The series side by side; with several protocols, a column of the legend per protocol
    # (matplotlib fills it column by column).
    groups = protocol_groups(policies, run.summary)
    columns = len(groups) if len(groups) > 1 else len(policies)
    figure.legend(handles=handles, loc="outside lower center", ncols=columns)
    return figure


REPAIR_CAUSES = "repairs_by_cause_per_1k_requests"


def _rate_bars(
    axes: Axes, summary: Sequence[SummaryRow], metric: str, policies: list[str], title: str
) -> None:
    prefix = f"{metric}."
    rates = {
        (row.policy, row.metric.removeprefix(prefix)): row.value
        for row in summary
        if row.metric.startswith(prefix) and row.metric != f"{metric}.all"
    }
    categories = sorted({category for _, category in rates})
    axes.set_title(title)
    axes.set_ylabel("per 1,000 requests")
    if not categories:
        axes.text(0.5, 0.5, "none recorded", ha="center", va="center", transform=axes.transAxes)
        axes.set_xticks([])
        return
    width = 0.8 / len(policies)
    positions = np.arange(len(categories))
    for offset, policy in enumerate(policies):
        heights = [rates.get((policy, category), 0.0) for category in categories]
        axes.bar(
            positions + offset * width,
            heights,
            width,
            label=policy,
            color=_colour(policies, policy),
        )
    axes.set_xticks(
        positions + width * (len(policies) - 1) / 2, categories, rotation=20, ha="right"
    )
    axes.grid(axis="y", alpha=0.3)


def _load(run: RunFolder, policies: list[str]) -> Figure | str:
    points = load_sweep(run.tables["turns"])
    if not points:
        return "the run did not sweep load (turns.load has fewer than two distinct values)"
    figure = Figure(figsize=(10, 4.2), layout="constrained")
    throughput, latency = figure.subplots(1, 2)
    for policy in policies:
        mine = [point for point in points if point.policy == policy]
        loads = [point.load for point in mine]
        colour = _colour(policies, policy)
        throughput.plot(loads, [p.turns_per_s for p in mine], "o-", label=policy, color=colour)
        latency.plot(
            loads, [p.latency_p99_ns / NS_PER_MS for p in mine], "o-", label=policy, color=colour
        )
    throughput.set_ylabel("completed turns per simulated second")
    latency.set_ylabel("p99 turn latency (ms)")
    for axes in (throughput, latency):
        axes.set_xlabel("offered load (sessions at once, or arriving per s)")
        axes.grid(alpha=0.3)
        axes.legend()
    return figure


def _concurrency(run: RunFolder, policies: list[str]) -> Figure | str:
    tools = run.tables["tools"]
    ran = tools.filter(pc.and_(pc.is_valid(tools["start_ns"]), pc.is_valid(tools["end_ns"])))
    if ran.num_rows == 0:
        return "no tool both started and ended"
    levels = load_levels({"tools": ran})
    groups = protocol_groups(policies, run.summary)
    panels = panel_rows(levels, groups, set(categories(ran, "policy")))
    # One panel per series and per load level: simulations that never coexisted are not added.
    figure = Figure(figsize=(10, 2.6 * len(panels) + 1.2), layout="constrained")
    grid = figure.subplots(
        len(panels), max(len(mine) for _, _, mine in panels), squeeze=False, sharey=True
    )
    for row, (level, load, present) in enumerate(panels):
        for col, policy in enumerate(present):
            axes = grid[row][col]
            mine = rows_of(rows_at_level(ran, level), policy)
            times, running = concurrency_steps(values(mine, "start_ns"), values(mine, "end_ns"))
            axes.step(
                times / NS_PER_S, running, where="post", color=_colour(policies, policy),
                linewidth=0.9,
            )
            axes.set_title(policy if load is None or len(levels) < 2 else f"{policy} @ {load:g}")
            axes.set_xlabel("simulated time (s)")
            axes.grid(alpha=0.3)
        for unused in grid[row][len(present):]:  # a protocol with fewer series than another
            unused.set_visible(False)
        grid[row][0].set_ylabel("tools running")
    return figure


def concurrency_steps(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Times at which the number of running tools changes, and the number from then on.

    A tool runs over ``[start, end)``: at a shared instant the ends count before the starts, so
    a tool handing over to the next never shows as two running at once.
    """
    if starts.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    times = np.concatenate([ends, starts])
    steps = np.concatenate([np.full(ends.size, -1), np.full(starts.size, 1)])
    order = np.lexsort((steps, times))
    running = np.cumsum(steps[order])
    # Keep the last count at each instant.
    last = np.append(times[order][1:] != times[order][:-1], True)
    return times[order][last], running[last]


PLOTS: tuple[_Plot, ...] = (
    _Plot(
        "ttfts_cdf.png",
        "Time to first tool start",
        "CDF over turns that started a tool: request sent to first tool start.",
        _cdf_of("turns", "ttfts_ns", "time to first tool start (ms, simulated)",
                "no turn started a tool"),
    ),
    _Plot(
        "latency_cdf.png",
        "Turn latency",
        "CDF over all turns: request sent to turn end (tool results ready or final answer).",
        _cdf_of("turns", "latency_ns", "turn latency (ms, simulated)", "the run has no turns"),
    ),
    _Plot(
        "start_lag.png",
        "Tool start lag",
        "CDF over started tools: tool start minus its tool_use block's content_block_stop.",
        _cdf_of("tools", "start_lag_ns",
                "tool start lag after its block stopped (ms, simulated)", "no tool started"),
    ),
    _Plot(
        "repairs_synthetic.png",
        "Repairs and synthetic results",
        "Per 1,000 model requests, by repair kind and by synthetic-result cause (and, with "
        "session faults, repairs by what broke the transcript: crash, rewind, compaction).",
        _rates,
    ),
    _Plot(
        "load_sweep.png",
        "Throughput and p99 latency against load",
        "Per offered load of the sweep: completed turns per simulated second and p99 latency.",
        _load,
    ),
    _Plot(
        "tool_concurrency.png",
        "Tool concurrency over time",
        "Number of tools executing at each simulated instant, per policy and load level.",
        _concurrency,
    ),
)
