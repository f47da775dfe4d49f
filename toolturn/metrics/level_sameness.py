"""Whether the load levels of a sweep could differ at all: a sweep whose levels gave the same
per-turn numbers, to the last bit (the default scenario's endpoint serves 64 streams at once,
so a `[8, 32]` concurrency sweep never queues and every level replays the same draws), answers
nothing about load, and its terminal summary and report say so instead of showing identical
tables as if they were findings.

Left out of the comparison: wall-clock rows (the harness's own speed, different run to run
whatever the simulation did), and the simulated span and the throughputs, which follow from how
many sessions run at once even when every session is the same. A run of experiment points is
never flagged here: its tables already show intervals, point by point.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from toolturn.metrics.summary_row import SummaryRow

# A level's numbers: (profile, policy, versus, metric) -> value.
Numbers = dict[tuple[str, str, str | None, str], float]
# Metrics that change with the load even when every session is the same.
BY_LOAD = ("simulated_span_ns", "throughput.")


def identical_levels(rows: Iterable[SummaryRow]) -> list[float] | None:
    """The loads of the levels when there are two or more and every simulated number is the same
    at each of them; None otherwise."""
    by_level: dict[int, tuple[float | None, Numbers]] = {}
    for row in rows:
        if row.point_key is not None:
            return None
        if row.wall_clock or row.metric.startswith(BY_LOAD):
            continue
        numbers = by_level.setdefault(row.load_level, (row.load, {}))[1]
        numbers[(row.profile, row.policy, row.versus, row.metric)] = row.value
    if len(by_level) < 2:
        return None
    levels = [by_level[level] for level in sorted(by_level)]
    first = levels[0][1]
    if not all(_same(first, numbers) for _, numbers in levels[1:]):
        return None
    return [math.nan if load is None else load for load, _ in levels]


def identical_levels_note(loads: list[float]) -> str:
    """The sentence that says so."""
    shown = ", ".join(f"{load:g}" for load in loads)
    return (
        f"note: the {len(loads)} load levels ({shown}) gave identical per-turn results (only the "
        "span and the throughputs, which follow from the sessions at once, differ): nothing in "
        "the scenario responds to load at these levels (for example an endpoint capacity above "
        "every level, with no latency growth), so this sweep cannot show a difference"
    )


def _same(one: Numbers, other: Numbers) -> bool:
    if one.keys() != other.keys():
        return False
    # NaN (a percentile of no rows) equals NaN here: the same nothing at each level.
    return all(
        one[key] == other[key] or (math.isnan(one[key]) and math.isnan(other[key])) for key in one
    )
