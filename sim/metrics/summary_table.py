"""The summary as a rich table: one row per metric, one column per arm (recovery profile x
executor policy), side by side."""

from __future__ import annotations

import os
from collections.abc import Iterable

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sim.metrics.summary import PER_1K, Arm, SummaryRow, arm_label
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


def ordered_arms(rows: Iterable[SummaryRow]) -> list[Arm]:
    """Distinct arms: the `default` profile first, then other profiles as met; within each,
    the policies as `ordered_policies` orders them."""
    rows = list(rows)
    met = list(dict.fromkeys(row.profile for row in rows))
    profiles = sorted(met, key=lambda profile: (profile != "default", met.index(profile)))
    policies = ordered_policies(row.policy for row in rows)
    present = {row.arm for row in rows}
    return [(pr, po) for pr in profiles for po in policies if (pr, po) in present]


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
    """Arms as columns (the default profile's streaming, at_message_stop, serial, then any other
    policy as met, then the other profiles' the same way), metrics as rows; '-' where absent.

    Wall-clock metrics are dimmed and labelled, since they vary from run to run.
    """
    rows = list(rows)
    arms = ordered_arms(rows)
    cells = {(row.arm, row.metric): row for row in rows}
    first = {row.metric: row for row in reversed(rows)}
    metrics = list(dict.fromkeys(row.metric for row in rows))
    table = Table(title=title)
    table.add_column("metric", no_wrap=True)
    table.add_column("unit", no_wrap=True)
    for arm in arms:
        # Escaped: "[claude-code]" would otherwise be read as rich markup.
        table.add_column(escape(arm_label(*arm)), justify="right", no_wrap=True)
    for metric in metrics:
        unit = first[metric].unit
        shown = [
            format_value(cells[arm, metric].value, unit) if (arm, metric) in cells else "-"
            for arm in arms
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
