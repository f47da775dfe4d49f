"""The summary of a run of experiment points for the terminal: per point key, the metrics over
its replications with the arms side by side, each cell the mean and its 95% t interval's
half-width, then for the policy under test against each baseline the difference (paired by
replication) and whether it is beyond its interval.

    Experiment · load.concurrency=4 (3 replications)
    metric          unit  streaming    serial          streaming − serial
    TTFTS p50       s     1.20 ± 0.05  2.31 ± 0.10     -1.11 ± 0.08  beyond
    turn latency p99 s    30.1 ± 4.2   30.3 ± 4.0      -0.20 ± 0.31  within

"beyond" means the interval of the difference excludes zero; "within" that it does not (the
replications cannot tell the policies apart on that metric); "-" that there is no interval (one
replication). Only the rows over the replications are shown: each replication's own rows are in
summary.parquet and run.json.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.console import Group
from rich.markup import escape
from rich.table import Table

from toolturn.metrics.display import Fitted, RowFormat, metric_label
from toolturn.metrics.replications import DIFFERENCE_PREFIX, beyond_interval
from toolturn.metrics.summary import BASE_PROFILE, arm_label
from toolturn.metrics.summary_row import POLICY_ORDER, Arm, SummaryRow


def has_point_rows(rows: Iterable[SummaryRow]) -> bool:
    """Whether the summary is of a run of experiment points."""
    return any(row.point_key is not None for row in rows)


def over_replications(rows: Iterable[SummaryRow]) -> dict[str, list[SummaryRow]]:
    """The rows over each key's replications, by key in run order."""
    keys: dict[str, list[SummaryRow]] = {}
    for row in rows:
        if row.point_key is not None and row.replication is None:
            keys.setdefault(row.point_key, []).append(row)
    return keys


def replications_of(rows: Iterable[SummaryRow], key: str) -> int:
    """How many replications of `key` the summary holds."""
    return len(
        {row.replication for row in rows if row.point_key == key and row.replication is not None}
    )


def arms_in_order(rows: Iterable[SummaryRow]) -> list[Arm]:
    """The arms: the default profile first, then others as met; within each, the policy under
    test, its baselines, then other policies as met."""
    met = list(dict.fromkeys(row.arm for row in rows))
    seen = list(dict.fromkeys(profile for profile, _ in met))
    profiles = sorted(seen, key=lambda profile: (profile != BASE_PROFILE, seen.index(profile)))
    rank = {policy: index for index, policy in enumerate(POLICY_ORDER)}
    return sorted(
        met,
        key=lambda arm: (profiles.index(arm[0]), rank.get(arm[1], len(rank)), met.index(arm)),
    )


def half_width(row: SummaryRow) -> float | None:
    """Half the interval's width; None without an interval."""
    if row.ci_low is None or row.ci_high is None:
        return None
    return (row.ci_high - row.ci_low) / 2


def verdict(row: SummaryRow) -> str:
    """``beyond``, ``within`` or ``-`` for a ``difference.`` row (see the module's text)."""
    beyond = beyond_interval(row)
    return "-" if beyond is None else "beyond" if beyond else "within"


@dataclass(frozen=True)
class KeyGrid:
    """One key's side-by-side table as text, for the terminal and the page alike: the column
    heads after metric and unit, and per metric its label, shown unit and cells, each a value
    (``mean ± half-width``) and, in the difference columns, its verdict."""

    heads: list[str]
    lines: list[tuple[str, str, list[tuple[str, str | None]]]]


def key_grid(rows: Sequence[SummaryRow]) -> KeyGrid:
    """The grid of one key's rows over its replications."""
    plain = [row for row in rows if row.versus is None]
    differences = [row for row in rows if row.metric.startswith(DIFFERENCE_PREFIX)]
    arms = arms_in_order(plain)
    versus = list(dict.fromkeys((row.arm, str(row.versus)) for row in differences))
    cells = {(row.arm, row.load_level, row.metric): row for row in plain}
    diff_cells = {
        (row.arm, row.versus, row.load_level, row.metric.removeprefix(DIFFERENCE_PREFIX)): row
        for row in differences
    }
    heads = [arm_label(*arm) for arm in arms] + [f"{arm_label(*a)} − {b}" for a, b in versus]
    levels = list(dict.fromkeys((row.load_level, row.load) for row in plain))
    lines = []
    for level, load in levels:
        for metric in dict.fromkeys(row.metric for row in plain if row.load_level == level):
            mine = [cells.get((arm, level, metric)) for arm in arms]
            theirs = [diff_cells.get((arm, b, level, metric)) for arm, b in versus]
            present = [row for row in mine + theirs if row is not None]
            shown = RowFormat(present[0].unit, [abs(r.value) for r in present])
            label = metric_label(metric) + (f" @ {load:g}" if len(levels) > 1 and load else "")
            values: list[tuple[str, str | None]] = [(_cell(shown, row), None) for row in mine]
            values += [
                ("-", None) if row is None else (_cell(shown, row), verdict(row)) for row in theirs
            ]
            lines.append((label, shown.shown_unit, values))
    return KeyGrid(heads, lines)


def key_title(key: str, replications: int) -> str:
    return f"{key or '(base)'} ({replications} replication{'s' if replications != 1 else ''})"


def key_tables(rows: Sequence[SummaryRow]) -> list[tuple[str, list[SummaryRow]]]:
    """Each key's rows over its replications with the title of their table, in run order; on a
    run of several wire protocols, one table per key and protocol (``key (N replications) ·
    openai-chat``), as a protocol's arms never pool with another's."""
    split = len({row.protocol for row in rows}) > 1
    tables: list[tuple[str, list[SummaryRow]]] = []
    for key, mine in over_replications(rows).items():
        title = key_title(key, replications_of(rows, key))
        if not split:
            tables.append((title, mine))
            continue
        for protocol in dict.fromkeys(row.protocol for row in mine):
            tables.append((f"{title} · {protocol}", [r for r in mine if r.protocol == protocol]))
    return tables


def key_table(title: str, rows: Sequence[SummaryRow]) -> Table:
    """One key's side-by-side table (the module's example), under `key_tables`' title."""
    grid = key_grid(rows)
    table = Table(title=escape(f"Experiment · {title}"), title_justify="left")
    table.add_column("metric", overflow="fold", min_width=12)
    table.add_column("unit", no_wrap=True)
    for head in grid.heads:
        table.add_column(escape(head), justify="right", overflow="fold")
    for label, unit, values in grid.lines:
        shown = [text if mark is None else f"{text}  {mark}" for text, mark in values]
        table.add_row(escape(label), unit, *shown)
    return table


def _cell(shown: RowFormat, row: SummaryRow | None) -> str:
    if row is None:
        return "-"
    half = half_width(row)
    return shown(row.value) if half is None else f"{shown(row.value)} ± {shown(half)}"


def points_renderables(rows: Sequence[SummaryRow]) -> Group:
    """Every key's table, in run order; each `Fitted`: two profiles by two policies with their
    differences are wider than a 100-column log, where rich would crop the last column and
    fold words ("withi/n")."""
    return Group(*(Fitted(key_table(title, mine)) for title, mine in key_tables(rows)))
