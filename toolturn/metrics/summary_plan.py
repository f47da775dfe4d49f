"""The plan of a run summary, one for every source of its rows: level by level, the paired rows
of the level's arms, then each arm's metrics in their fixed order from its rows folded
(`toolturn.metrics.arm_fold`), and its harness speed. The rows come from an *arm source*
(`ArmSource`): a run's whole tables in memory (`toolturn.metrics.summary.TableSource`) or a run
folder's table files read arm by arm (`toolturn.metrics.summary_files.FolderSource`). The
definitions of the metrics: `toolturn.metrics.summary`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from toolturn.metrics.arm_fold import ArmFold
from toolturn.metrics.paired import PAIRED_COLUMNS, comparisons, paired_stats
from toolturn.metrics.percentiles import percentiles
from toolturn.metrics.schema import COMPLETED
from toolturn.metrics.summary_row import POLICY_ORDER, Arm, SummaryRow, treatment_of

__all__ = [
    "BASE_PROFILE",
    "DISTRIBUTIONS",
    "EVENTS_PER_WALL_S",
    "NS_PER_S",
    "PAIRED_PREFIX",
    "PAIRED_PROFILE_PREFIX",
    "PERCENTILES",
    "PER_1K",
    "ArmSource",
    "Categories",
    "UnitKey",
    "metric_rows",
    "paired_stat_rows",
    "per_second",
    "speeds_on",
    "summary_rows",
]

PERCENTILES: tuple[tuple[str, float], ...] = (
    ("p50", 50.0),
    ("p90", 90.0),
    ("p95", 95.0),
    ("p99", 99.0),
    ("p99.9", 99.9),
)
# (table, column, unit of its count)
DISTRIBUTIONS: tuple[tuple[str, str, str], ...] = (
    ("turns", "ttfts_ns", "turns"),
    ("turns", "latency_ns", "turns"),
    ("tools", "start_lag_ns", "tools"),
)
PER_1K = "per 1k requests"
NS_PER_S = 1_000_000_000
EVENTS_PER_WALL_S = "harness.events_per_wall_s"
PAIRED_PREFIX = "paired."
PAIRED_PROFILE_PREFIX = "paired_profile."
# The profile the others are compared to, when it ran.
BASE_PROFILE = "default"
# A simulation of the run, as its harness speed is measured: (profile, policy, load_level,
# protocol).
UnitKey = tuple[str, str, int, str]
# An arm at a load level, as one protocol's summary reads the speeds: (profile, policy, load_level).
ArmKey = tuple[str, str, int]


def speeds_on(speeds: Mapping[UnitKey, float], protocol: str | None) -> dict[ArmKey, float]:
    """The harness speeds of the simulations on `protocol`, by arm (None: of every simulation,
    for a run without rows to tell the protocols by)."""
    return {(profile, policy, level): speed
            for (profile, policy, level, on), speed in speeds.items()
            if protocol is None or on == protocol}


@dataclass(frozen=True)
class Categories:
    """The categories of the count and rate metrics, and whether session faults ran: the whole
    run's."""

    outcomes: list[str]
    kinds: list[str]
    causes: list[str]
    statuses: list[str]
    faults_ran: bool


class ArmSource(Protocol):
    """Where a summary's rows come from, one load level and one arm at a time."""

    def levels(self) -> list[tuple[int, float | None]]:
        """The (load_level, load) pairs of the rows, by level."""
        ...

    def arms_at(self, level: int) -> set[Arm]:
        """The (profile, policy) pairs with rows at `level`."""
        ...

    def fold(self, level: int, arm: Arm, faults: bool) -> ArmFold:
        """The arm's rows at `level` of every table, folded (with the session-fault numbers
        when `faults`)."""
        ...

    def differences(
        self, level: int, treatment: Arm, baseline: Arm
    ) -> Callable[[str], np.ndarray]:
        """The paired differences, treatment minus baseline, of each paired column at `level`,
        in key order (`toolturn.metrics.paired.paired_differences`)."""
        ...


def summary_rows(
    source: ArmSource, found: Categories, speeds: Mapping[ArmKey, float]
) -> list[SummaryRow]:
    """The summary of `source`'s rows, level by level (see the module docstring); `speeds` maps
    a simulation to the harness speed measured while it ran."""
    rows: list[SummaryRow] = []
    for level, load in source.levels():
        rows += _level_rows(source, level, load, found, speeds)
    return rows


def _level_rows(
    source: ArmSource,
    level: int,
    load: float | None,
    found: Categories,
    speeds: Mapping[ArmKey, float],
) -> list[SummaryRow]:
    """One load level's rows. The arms are those with rows and those with a measured speed, in
    sorted order."""
    arms = sorted(
        source.arms_at(level)
        | {(profile, policy) for profile, policy, key_level in speeds if key_level == level}
    )
    rows = _paired_rows(source, level, arms)
    for profile, policy in arms:
        fold = source.fold(level, (profile, policy), found.faults_ran)
        arm_rows = metric_rows(policy, fold, found)
        if (profile, policy, level) in speeds:
            speed = float(speeds[profile, policy, level])
            arm_rows.append(
                SummaryRow(policy, EVENTS_PER_WALL_S, speed, "events/s", wall_clock=True)
            )
        rows += [replace(row, profile=profile) for row in arm_rows]
    return [replace(row, load_level=level, load=load) for row in rows]


def _paired_rows(source: ArmSource, level: int, arms: list[Arm]) -> list[SummaryRow]:
    """Policies compared within each profile (``paired.``), then each profile compared with the
    base profile within each policy (``paired_profile.``)."""
    rows: list[SummaryRow] = []
    profiles = list(dict.fromkeys(profile for profile, _ in arms))
    for profile in profiles:
        policies = [policy for pr, policy in arms if pr == profile]
        treatment = treatment_of(policies)
        if treatment is None:
            continue
        baselines = [p for p in POLICY_ORDER if p in policies] + [
            p for p in policies if p not in POLICY_ORDER
        ]
        for _, baseline in comparisons(baselines, treatment):
            pairs = source.differences(level, (profile, treatment), (profile, baseline))
            rows += paired_stat_rows(pairs, baseline, PAIRED_PREFIX, (profile, treatment))
    base = BASE_PROFILE if BASE_PROFILE in profiles else (profiles[0] if profiles else None)
    for policy in dict.fromkeys(policy for _, policy in arms):
        for profile in profiles:
            if profile != base and base is not None and (profile, policy) in arms:
                pairs = source.differences(level, (profile, policy), (base, policy))
                rows += paired_stat_rows(pairs, base, PAIRED_PROFILE_PREFIX, (profile, policy))
    return rows


def metric_rows(policy: str, fold: ArmFold, found: Categories) -> list[SummaryRow]:
    """One arm's metrics at one level, in their fixed order, from its rows folded
    (`toolturn.metrics.arm_fold`), whatever its source."""
    rows = _distribution_rows(policy, fold)
    rows += _count_rows(policy, fold, found.outcomes)
    rows += _rate_rows(policy, fold, found.kinds, found.causes, found.statuses)
    rows += _throughput_rows(policy, fold)
    if fold.faults is not None:
        rows += [
            SummaryRow(policy, metric, value, unit)
            for metric, value, unit in fold.faults.metrics(fold.rows["requests"])
        ]
    return rows


def paired_stat_rows(
    differences: Callable[[str], np.ndarray], baseline: str, prefix: str, arm: Arm
) -> list[SummaryRow]:
    """The paired statistics of an arm minus `baseline`, as rows of `arm` (profile, policy)
    versus `baseline`: `differences(column)` gives each paired column's differences in key
    order (`toolturn.metrics.paired.paired_differences`)."""
    rows: list[SummaryRow] = []
    for column in PAIRED_COLUMNS:
        stats = paired_stats(differences(column))
        for name, value in stats.as_dict().items():
            unit = "share" if name == "gained" else "pairs" if name == "pairs" else "ns"
            rows.append(
                SummaryRow(
                    arm[1], f"{prefix}{column}.{name}", value, unit, versus=baseline,
                    profile=arm[0],
                )
            )
    return rows


def _distribution_rows(policy: str, fold: ArmFold) -> list[SummaryRow]:
    rows = []
    for table_name, column, count_unit in DISTRIBUTIONS:
        data = fold.values(table_name, column)
        if data.size:
            quantiles = percentiles(data, [q for _, q in PERCENTILES])
            for (label, _), quantile in zip(PERCENTILES, quantiles, strict=True):
                rows.append(SummaryRow(policy, f"{column}.{label}", float(quantile), "ns"))
        rows.append(SummaryRow(policy, f"{column}.count", float(data.size), count_unit))
    return rows


def _count_rows(policy: str, fold: ArmFold, outcomes: list[str]) -> list[SummaryRow]:
    rows = [SummaryRow(policy, "requests.count", float(fold.rows["requests"]), "requests")]
    for outcome in outcomes:
        count = fold.count("turns", "outcome", outcome)
        rows.append(SummaryRow(policy, f"turns.outcome.{outcome}", float(count), "turns"))
    return rows


def _rate_rows(
    policy: str, fold: ArmFold, kinds: list[str], causes: list[str], statuses: list[str]
) -> list[SummaryRow]:
    requests = fold.rows["requests"]
    if requests == 0:
        return []
    rows = []
    for metric, table, column, categories in (
        ("repairs_per_1k_requests", "repairs", "kind", kinds),
        ("synthetic_per_1k_requests", "tools", "synthetic_cause", causes),
    ):
        counts = {c: fold.count(table, column, c) for c in categories}
        total = sum(counts.values())
        rows.append(SummaryRow(policy, f"{metric}.all", total * 1000 / requests, PER_1K))
        for category in categories:
            rate = counts[category] * 1000 / requests
            rows.append(SummaryRow(policy, f"{metric}.{category}", rate, PER_1K))
    for value in statuses:
        count = fold.count("requests", "status", value)
        rows.append(
            SummaryRow(policy, f"status_per_1k_requests.{value}", count * 1000 / requests, PER_1K)
        )
    return rows


def _throughput_rows(policy: str, fold: ArmFold) -> list[SummaryRow]:
    if fold.rows["turns"] == 0:
        return []
    assert fold.first_sent_ns is not None and fold.last_end_ns is not None
    span = fold.last_end_ns - fold.first_sent_ns
    rows = [SummaryRow(policy, "simulated_span_ns", float(span), "ns")]
    if span > 0:
        completed = fold.count("turns", "outcome", COMPLETED)
        rows.append(
            SummaryRow(policy, "throughput.turns_per_s", per_second(completed, span), "turns/s")
        )
        for column in ("output_tokens", "input_tokens"):
            tokens = fold.sums["requests", column]
            rows.append(
                SummaryRow(
                    policy, f"throughput.{column}_per_s", per_second(tokens, span), "tokens/s"
                )
            )
    return rows


def per_second(count: int, span_ns: int) -> float:
    return count * NS_PER_S / span_ns if span_ns > 0 else 0.0
