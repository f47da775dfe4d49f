"""The summary for the terminal, level by level: the paired headline (what the policy under test
buys, turn by turn, within each recovery profile; and what each profile changes against
``default``), then the metrics with the arms (profile x policy) side by side.

Both tables fit 100 columns with the three policies (labels and values wrap, never cut, on a
narrower console). Values go through ``toolturn.metrics.display`` (readable names, a unit per row).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Sequence

from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from toolturn.metrics.display import Fitted, Phrases, RowFormat, measure_name, metric_label
from toolturn.metrics.level_sameness import identical_levels, identical_levels_note
from toolturn.metrics.misfires import misfire_rate
from toolturn.metrics.paired import PAIRED_COLUMNS
from toolturn.metrics.points_table import has_point_rows, points_renderables
from toolturn.metrics.summary import (
    BASE_PROFILE,
    PAIRED_PREFIX,
    PAIRED_PROFILE_PREFIX,
    Arm,
    SummaryRow,
    arm_label,
    summary_groups,
)
from toolturn.runtime.policy import ExecutorPolicy

# Width when the output is not a terminal (a CI log, a file) and COLUMNS is not set.
LOG_WIDTH = 100
# Columns read from the policy under test to its baselines; unknown policies follow, as met.
POLICY_ORDER = {policy.value: rank for rank, policy in enumerate(ExecutorPolicy)}


def ordered_policies(policies: Iterable[str]) -> list[str]:
    """Distinct policies, the policy under test first, then its baselines, then others as met."""
    met = list(dict.fromkeys(policies))
    return sorted(met, key=lambda p: (POLICY_ORDER.get(p, len(POLICY_ORDER)), met.index(p)))


def by_level(rows: Iterable[SummaryRow]) -> list[tuple[int, float | None, list[SummaryRow]]]:
    """The rows grouped by load level, in level order."""
    levels: dict[int, tuple[float | None, list[SummaryRow]]] = {}
    for row in rows:
        levels.setdefault(row.load_level, (row.load, []))[1].append(row)
    return [(level, load, mine) for level, (load, mine) in sorted(levels.items())]


def ordered_arms(rows: Iterable[SummaryRow]) -> list[Arm]:
    """Distinct arms: the `default` profile first, then other profiles as met; within each,
    the policies as `ordered_policies` orders them."""
    rows = list(rows)
    met = list(dict.fromkeys(row.profile for row in rows))
    profiles = sorted(met, key=lambda profile: (profile != BASE_PROFILE, met.index(profile)))
    policies = ordered_policies(row.policy for row in rows)
    present = {row.arm for row in rows}
    return [(pr, po) for pr in profiles for po in policies if (pr, po) in present]


def paired_groups(rows: Iterable[SummaryRow]) -> list[tuple[str, list[SummaryRow]]]:
    """The paired rows as (prefix, rows) groups, each one paired table: the policies within
    each profile (default first), then each arm against its base profile."""
    paired = [row for row in rows if row.versus is not None]
    order = {arm: rank for rank, arm in enumerate(ordered_arms(paired))}
    groups: dict[tuple[str, Arm | str], list[SummaryRow]] = {}
    for row in sorted(paired, key=lambda r: (r.metric.startswith(PAIRED_PROFILE_PREFIX),
                                             order[r.arm])):
        if row.metric.startswith(PAIRED_PROFILE_PREFIX):
            groups.setdefault((PAIRED_PROFILE_PREFIX, row.arm), []).append(row)
        else:
            groups.setdefault((PAIRED_PREFIX, row.profile), []).append(row)
    return [(prefix, mine) for (prefix, _), mine in groups.items()]


def summary_table(rows: Iterable[SummaryRow], title: str = "Summary") -> Table:
    """Metrics as rows (readable names, one unit per row), arms as columns (the default
    profile's streaming, at_message_stop, serial, then any other policy as met, then the other
    profiles' the same way); '-' where absent. Paired rows are left to ``paired_table``.
    Wall-clock metrics are dimmed and labelled, since they vary run to run."""
    rows = [row for row in rows if row.versus is None]
    arms = ordered_arms(rows)
    cells = {(row.arm, row.metric): row for row in rows}
    first = {row.metric: row for row in reversed(rows)}
    table = Table(title=title, title_justify="left")
    table.add_column("metric", overflow="fold", min_width=12)
    table.add_column("unit", no_wrap=True)
    for arm in arms:
        # Escaped: "[claude-code]" would otherwise be read as rich markup.
        table.add_column(escape(arm_label(*arm)), justify="right", overflow="fold")
    for metric in dict.fromkeys(row.metric for row in rows):
        present = [cells[a, metric].value for a in arms if (a, metric) in cells]
        shown = RowFormat(first[metric].unit, present)
        values = [
            shown(cells[a, metric].value) if (a, metric) in cells else "-" for a in arms
        ]
        wall = first[metric].wall_clock
        style = "dim" if wall else None
        table.add_row(metric_label(metric), shown.shown_unit, *values, style=style)
    return table


def paired_table(
    rows: Iterable[SummaryRow], title: str = "Paired per turn", prefix: str = PAIRED_PREFIX
) -> Table | None:
    """The headline: per baseline, for TTFTS and turn latency, the per-turn difference (arm
    under test minus baseline): median with its 95% CI, p90, mean ± its 95% CI half-width, the
    share of turns sooner and the number of pairs. `rows` are one of ``paired_groups`` (`prefix`
    its prefix). None without paired rows."""
    paired = {
        (row.versus, row.metric): row
        for row in rows
        if row.versus is not None and row.metric.startswith(prefix)
    }
    if not paired:
        return None
    treatment = arm_label(*next(iter(paired.values())).arm)
    baselines = list(dict.fromkeys(versus for versus, _ in paired))
    table = Table(
        title=escape(f"{title}: {treatment} minus baseline (negative = sooner)"),
        title_justify="left",
    )
    table.add_column("", overflow="fold")
    columns = [(versus, column) for versus in baselines for column in PAIRED_COLUMNS]
    for versus, column in columns:
        table.add_column(f"{measure_name(column)}\nvs {versus}", justify="right", overflow="fold")
    lines: dict[str, list[str]] = {
        label: []
        for label in ("median", "95% CI of median", "p90", "mean ± 95% CI", "turns sooner", "pairs")
    }
    for versus, column in columns:

        def get(statistic: str, versus: str = str(versus), column: str = column) -> float | None:
            row = paired.get((versus, f"{prefix}{column}.{statistic}"))
            return None if row is None else row.value

        _paired_cells(lines, get)
    for label, cells in lines.items():
        table.add_row(label, *cells)
    return table


def _paired_cells(lines: dict[str, list[str]], get: Callable[[str], float | None]) -> None:
    names = ("median", "p90", "mean", "median_ci_low", "median_ci_high", "mean_ci_low")
    values = {name: get(name) for name in names}
    durations = [v for v in values.values() if v is not None]
    shown = RowFormat("ns", durations)
    unit = f" {shown.shown_unit}"
    low, high = values["median_ci_low"], values["median_ci_high"]
    mean, mean_low = values["mean"], values["mean_ci_low"]
    lines["median"].append(_with(shown(values["median"]), unit))
    lines["95% CI of median"].append(
        "-" if low is None or high is None else f"{shown(low)} … {shown(high)}{unit}"
    )
    lines["p90"].append(_with(shown(values["p90"]), unit))
    lines["mean ± 95% CI"].append(
        _with(shown(mean), unit)
        if mean is None or mean_low is None
        else f"{shown(mean)} ± {shown(mean - mean_low)}{unit}"
    )
    gained, pairs = get("gained"), get("pairs")
    lines["turns sooner"].append("-" if gained is None else f"{gained:.1%}")
    lines["pairs"].append("-" if pairs is None else f"{pairs:,.0f}")


def _with(text: str, unit: str) -> str:
    return text if text == "-" else f"{text}{unit}"


def headline(rows: Sequence[SummaryRow]) -> str | None:
    """One sentence of the finding at one level: the median paired TTFTS and turn-latency
    differences against the first baseline, within the default profile when it ran; None without
    paired rows."""
    phrases = headline_phrases(rows)
    return None if phrases is None else phrases.plain


def headline_phrases(rows: Sequence[SummaryRow], lead: str = "") -> Phrases | None:
    """`headline` as phrases (`lead` before it), for a console to wrap between them."""
    groups = [mine for prefix, mine in paired_groups(rows) if prefix == PAIRED_PREFIX]
    if not groups:
        return None
    paired = groups[0]
    treatment, versus = arm_label(*paired[0].arm), paired[0].versus
    values = {row.metric: row.value for row in paired if row.versus == versus}
    parts = []
    for column in PAIRED_COLUMNS:
        median = values.get(f"{PAIRED_PREFIX}{column}.median")
        gained = values.get(f"{PAIRED_PREFIX}{column}.gained")
        if median is None or gained is None:
            continue
        shown = RowFormat("ns", [median])
        parts.append(
            f"{measure_name(column)} {shown(median)} {shown.shown_unit} "
            f"({gained:.0%} of turns sooner)"
        )
    if not parts:
        return None
    rate = misfire_rate(rows, paired[0].policy)
    if rate is not None:  # Chat Completions: how often the speculative starts were wrong
        parts.append(f"misfires {rate:.1f} per 1k calls")
    return Phrases(f"{lead}{treatment} vs {versus}, median per turn: ", parts, style="bold")


def summary_renderables(rows: Iterable[SummaryRow], title: str = "Summary") -> Group:
    """Every level's headline sentence, paired table and summary table, in level order; for a
    run of experiment points, each key's table over its replications
    (toolturn.metrics.points_table)."""
    rows = list(rows)
    if has_point_rows(rows):
        return points_renderables(rows)
    protocols = list(dict.fromkeys(row.protocol for row in rows))
    if len(protocols) < 2:
        return Group(*_level_parts(rows, title, ""))  # type: ignore[arg-type]
    # A protocol sweep: each protocol's answer in turn (its arms never pool with another's).
    return Group(*(  # type: ignore[arg-type]
        part for protocol in protocols
        for part in _level_parts([row for row in rows if row.protocol == protocol],
                                 f"{title} · {protocol}", f"on {protocol}: ")
    ))


def _level_parts(rows: list[SummaryRow], title: str, lead: str) -> list[object]:
    """Every level's headline (after `lead`), paired tables and summary table."""
    levels = by_level(rows)
    parts: list[object] = []
    same = identical_levels(rows)
    if same is not None:
        parts.append(Text(identical_levels_note(same), style="yellow"))
    for _, load, mine in levels:
        sweep = load is not None and len(levels) > 1
        named = f"{title} · load {load:g}" if sweep else title
        sentence = headline_phrases(mine, lead=lead + (f"load {load:g}: " if sweep else ""))
        if sentence is not None:
            parts.append(sentence)
        for prefix, group in paired_groups(mine):
            paired = paired_table(group, title="paired per turn", prefix=prefix)
            if paired is not None:
                parts.append(Fitted(paired))
        # Fitted: too wide for the console (six arms in a 100-column log), one record per row.
        parts.append(Fitted(summary_table(mine, title=named)))
    return parts


def output_console() -> Console:
    """A console for standard output; 100 columns when it is not a terminal (a CI log, a
    file) and COLUMNS is not set, so log tables stay legible."""
    console = Console()
    if not console.is_terminal and "COLUMNS" not in os.environ:
        return Console(width=LOG_WIDTH)
    return console


def print_summary(
    rows: Iterable[SummaryRow], console: Console | None = None, title: str = "Summary"
) -> None:
    """Prints ``summary_renderables(rows)`` to ``console`` (``output_console()`` by default)."""
    (console or output_console()).print(summary_renderables(rows, title=title))


def print_summary_json(rows: Iterable[SummaryRow]) -> None:
    """The summary as JSON on stdout: ``summary.summary_groups`` (one object per load level,
    profile, policy and versus, with its metrics by name), as in run.json."""
    sys.stdout.write(json.dumps(summary_groups(list(rows)), indent=2, allow_nan=False) + "\n")
