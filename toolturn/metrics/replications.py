"""Summary rows over the replications of each experiment point: every metric's mean with its
confidence interval, and the policy under test's difference from each baseline with its own.

The rows of one replication are the summary of one simulation (``point`` and ``replication``
set). Over the replications of one key (``point_key``), rules:

1. Every simulated metric of every arm (paired rows included) gets one row: its mean over the
   replications that have it, with the t interval of toolturn.metrics.intervals (none from a single
   replication). Wall-clock metrics vary run to run and get none.
2. ``difference.<metric>`` rows (``policy`` the policy under test, ``versus`` a baseline policy,
   within one profile): per replication, the arm's value minus the baseline's, both from the
   same seed (common random numbers), then their mean and t interval. The difference is beyond
   the interval's noise when the interval excludes zero (`beyond_interval`).
3. Keys come in the order of their first replication; within a key, rule 1's rows in the order
   of the first replication's rows, then rule 2's by profile, baseline and metric.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from toolturn.metrics.intervals import t_interval
from toolturn.metrics.summary_row import POLICY_ORDER, SummaryRow, treatment_of

DIFFERENCE_PREFIX = "difference."
# (protocol, profile, policy, versus, load_level, metric): one metric of one arm on one wire
# protocol within a key (a protocol's arms never pool with another's).
_Metric = tuple[str, str, str, str | None, int, str]


def replication_rows(rows: Iterable[SummaryRow]) -> list[SummaryRow]:
    """Rule 1 and 2's rows for the per-replication rows ``rows`` (rule 3's order)."""
    by_key: dict[str, list[SummaryRow]] = {}
    for row in rows:
        if row.point_key is not None and row.replication is not None:
            by_key.setdefault(row.point_key, []).append(row)
    result: list[SummaryRow] = []
    for key, mine in by_key.items():
        result += _interval_rows(key, mine)
        result += _difference_rows(key, mine)
    return result


def beyond_interval(row: SummaryRow) -> bool | None:
    """Whether a ``difference.`` row's interval excludes zero; None without an interval."""
    if row.ci_low is None or row.ci_high is None:
        return None
    return not (row.ci_low <= 0.0 <= row.ci_high)


def _grouped(rows: list[SummaryRow]) -> dict[_Metric, list[SummaryRow]]:
    groups: dict[_Metric, list[SummaryRow]] = {}
    for row in _replication_order(rows):
        if not row.wall_clock:
            metric = (
                row.protocol, row.profile, row.policy, row.versus, row.load_level, row.metric
            )
            groups.setdefault(metric, []).append(row)
    return groups


def _interval_rows(key: str, rows: list[SummaryRow]) -> list[SummaryRow]:
    # Grouped in replication order: the first replication's metrics come first, in its order.
    return [_over(key, group[0], [r.value for r in group]) for group in _grouped(rows).values()]


def _difference_rows(key: str, rows: list[SummaryRow]) -> list[SummaryRow]:
    plain = [row for row in _replication_order(rows) if row.versus is None and not row.wall_clock]
    values = {
        (r.replication, r.protocol, r.profile, r.policy, r.load_level, r.metric): r.value
        for r in plain
    }
    result: list[SummaryRow] = []
    for protocol, profile in dict.fromkeys((row.protocol, row.profile) for row in plain):
        ours = [row for row in plain if (row.protocol, row.profile) == (protocol, profile)]
        policies = list(dict.fromkeys(row.policy for row in ours))
        treatment = treatment_of(policies)
        baselines = [p for p in POLICY_ORDER if p in policies] + [
            p for p in policies if p not in POLICY_ORDER
        ]
        # The treatment's rows of each (level, metric), in replication order.
        mine: dict[tuple[int, str], list[SummaryRow]] = {}
        for row in ours:
            if row.policy == treatment:
                mine.setdefault((row.load_level, row.metric), []).append(row)
        for baseline in (p for p in baselines if p != treatment):
            for (level, metric), treated in mine.items():
                pairs = [
                    (row, values.get((row.replication, protocol, profile, baseline, level, metric)))
                    for row in treated
                ]
                differences = [row.value - other for row, other in pairs if other is not None]
                if differences:
                    template = replace(
                        treated[0], metric=DIFFERENCE_PREFIX + metric, versus=baseline
                    )
                    result.append(_over(key, template, differences))
    return result


def _replication_order(rows: list[SummaryRow]) -> list[SummaryRow]:
    return sorted(rows, key=lambda r: r.replication or 0)


def _over(key: str, template: SummaryRow, values: list[float]) -> SummaryRow:
    interval = t_interval(values)
    return replace(
        template,
        value=interval.mean,
        point=None,
        replication=None,
        point_key=key,
        ci_low=interval.low,
        ci_high=interval.high,
    )
