"""The summary as a rich table: one row per metric, one column per policy, side by side."""

from __future__ import annotations

import os
from collections.abc import Iterable

from rich.console import Console
from rich.table import Table

from sim.metrics.summary import PER_1K, SummaryRow
from sim.runtime.policy import ExecutorPolicy

NS_PER_MS = 1_000_000
WHOLE_UNITS = frozenset({"turns", "tools", "requests", "rows", "events/s"})
# Width when the output is not a terminal (a CI log, a file) and COLUMNS is not set.
LOG_WIDTH = 160
# Columns read from the policy under test to its baselines; unknown policies follow, as met.
POLICY_ORDER = {policy.value: rank for rank, policy in enumerate(ExecutorPolicy)}


def ordered_policies(policies: Iterable[str]) -> list[str]:
    """Distinct policies, the policy under test first, then its baselines, then others as met."""
    met = list(dict.fromkeys(policies))
    return sorted(met, key=lambda p: (POLICY_ORDER.get(p, len(POLICY_ORDER)), met.index(p)))


def display_unit(unit: str) -> str:
    """The unit a value is shown in: milliseconds for nanoseconds, short forms elsewhere."""
    return {"ns": "ms", PER_1K: "/1k req"}.get(unit, unit)


def format_value(value: float, unit: str) -> str:
    """A summary value for people, in ``display_unit(unit)``: counts whole, the rest to 3 places."""
    if unit == "ns":
        return f"{value / NS_PER_MS:,.3f}"
    if unit in WHOLE_UNITS:
        return f"{value:,.0f}"
    return f"{value:,.3f}"


def summary_table(rows: Iterable[SummaryRow], title: str = "Summary") -> Table:
    """Policies as columns (streaming, at_message_stop, serial, then any other as met), metrics
    as rows; '-' where absent.

    Wall-clock metrics are dimmed and labelled, since they vary from run to run.
    """
    rows = list(rows)
    policies = ordered_policies(row.policy for row in rows)
    cells = {(row.policy, row.metric): row for row in rows}
    first = {row.metric: row for row in reversed(rows)}
    metrics = list(dict.fromkeys(row.metric for row in rows))
    table = Table(title=title)
    table.add_column("metric", no_wrap=True)
    table.add_column("unit", no_wrap=True)
    for policy in policies:
        table.add_column(policy, justify="right", no_wrap=True)
    for metric in metrics:
        unit = first[metric].unit
        shown = [
            format_value(cells[policy, metric].value, unit) if (policy, metric) in cells else "-"
            for policy in policies
        ]
        wall = first[metric].wall_clock
        label = f"{metric} (wall clock)" if wall else metric
        table.add_row(label, display_unit(unit), *shown, style="dim" if wall else None)
    return table


def output_console() -> Console:
    """A console for standard output; wide when it is not a terminal, so log tables stay legible."""
    console = Console()
    if not console.is_terminal and "COLUMNS" not in os.environ:
        return Console(width=LOG_WIDTH)
    return console


def print_summary(
    rows: Iterable[SummaryRow], console: Console | None = None, title: str = "Summary"
) -> None:
    """Prints ``summary_table(rows)`` to ``console`` (``output_console()`` by default)."""
    (console or output_console()).print(summary_table(rows, title=title))
