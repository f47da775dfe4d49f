"""Comparing two run folders metric by metric: what moved, and whether it moved too far.

Simulated metrics are exact functions of code, scenario and seed, so by default any change is a
regression (tolerance zero). A tolerance ``rel`` lets a metric move by ``rel * |base|``.
Wall-clock metrics are compared and shown but never gate. Besides the summary, the number of
rows of each table per policy is compared as metric ``rows.<table>``.

A value that is not a finite number (NaN, infinity) has no relative change: it has not moved if
the other run has the same (NaN on both sides counts as the same), and otherwise it has moved
beyond any tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase

from sim.errors import UserError
from sim.metrics.reader import RunFolder
from sim.metrics.summary import SummaryRow, arms_of, rows_of

ROWS_UNIT = "rows"


@dataclass(frozen=True)
class MetricChange:
    """One (profile, policy, metric) of two runs; ``None`` where a run lacks it."""

    policy: str
    metric: str
    unit: str
    base: float | None
    new: float | None
    tolerance: float
    wall_clock: bool
    profile: str = "default"

    @property
    def moved(self) -> bool:
        both_nan = _is_nan(self.base) and _is_nan(self.new)
        return self.base != self.new and not both_nan

    @property
    def not_finite(self) -> bool:
        """Whether either value is NaN or infinite (then there is no relative change)."""
        values = (self.base, self.new)
        return any(value is not None and not math.isfinite(value) for value in values)

    @property
    def relative(self) -> float | None:
        """(new - base) / |base|; None when either is missing or not finite, or base is zero."""
        if self.base is None or self.new is None or self.base == 0 or self.not_finite:
            return None
        return (self.new - self.base) / abs(self.base)

    @property
    def beyond_tolerance(self) -> bool:
        """Whether this change fails the gate (never for wall-clock metrics)."""
        if self.wall_clock or not self.moved:
            return False
        if self.base is None or self.new is None or self.not_finite:
            return True
        return abs(self.new - self.base) > self.tolerance * abs(self.base)


def _is_nan(value: float | None) -> bool:
    return value is not None and math.isnan(value)


def parse_tolerances(texts: list[str]) -> dict[str, float]:
    """``["METRIC=REL", ...]`` as a mapping; METRIC may be a glob (``latency_ns.*``)."""
    tolerances: dict[str, float] = {}
    for text in texts:
        metric, separator, number = text.partition("=")
        try:
            relative = float(number)
        except ValueError:
            relative = -1.0
        if not separator or not metric or not relative >= 0 or relative == float("inf"):
            raise UserError(
                f"--tolerance {text!r}: expected METRIC=REL with REL a number >= 0 (0.01 = 1%)"
            )
        tolerances[metric] = relative
    return tolerances


def tolerance_for(metric: str, tolerances: Mapping[str, float]) -> float:
    """The metric's tolerance: its exact entry, else the longest matching glob, else zero."""
    if metric in tolerances:
        return tolerances[metric]
    matching = [pattern for pattern in tolerances if fnmatchcase(metric, pattern)]
    return tolerances[max(matching, key=len)] if matching else 0.0


def compare_runs(
    base: RunFolder, new: RunFolder, tolerances: Mapping[str, float] | None = None
) -> list[MetricChange]:
    """Every (policy, metric) of either run, in base order then new-only ones.

    Raises ``UserError`` when the runs are of different scenarios (name or file hash) or when a
    tolerance names no metric of either run (a typo would silently gate nothing).
    """
    tolerances = dict(tolerances or {})
    _check_same_scenario(base, new)
    base_rows = _keyed(base.summary + _row_counts(base))
    new_rows = _keyed(new.summary + _row_counts(new))
    metrics = {key[-1] for key in base_rows} | {key[-1] for key in new_rows}
    for pattern in tolerances:
        if not any(fnmatchcase(metric, pattern) for metric in metrics):
            raise UserError(f"--tolerance {pattern!r}: matches no metric of either run")
    changes = []
    for key in list(base_rows) + [key for key in new_rows if key not in base_rows]:
        either = base_rows.get(key) or new_rows[key]
        base_row, new_row = base_rows.get(key), new_rows.get(key)
        changes.append(
            MetricChange(
                policy=either.policy,
                metric=either.metric,
                unit=either.unit,
                base=base_row.value if base_row else None,
                new=new_row.value if new_row else None,
                tolerance=tolerance_for(either.metric, tolerances),
                wall_clock=either.wall_clock,
                profile=either.profile,
            )
        )
    return changes


def _check_same_scenario(base: RunFolder, new: RunFolder) -> None:
    for field in ("scenario", "scenario_sha256"):
        if base.metadata.get(field) != new.metadata.get(field):
            raise UserError(
                f"{new.path}: {field} {new.metadata.get(field)!r} differs from "
                f"{base.path}'s {base.metadata.get(field)!r}; compare runs of the same scenario "
                "file (or regenerate the baseline)"
            )


def _keyed(rows: list[SummaryRow]) -> dict[tuple[str, str, str], SummaryRow]:
    return {(row.profile, row.policy, row.metric): row for row in rows}


def _row_counts(run: RunFolder) -> list[SummaryRow]:
    rows = []
    for name, table in run.tables.items():
        for profile, policy in arms_of(table):
            count = rows_of(table, policy, profile).num_rows
            rows.append(
                SummaryRow(policy, f"rows.{name}", float(count), ROWS_UNIT, profile=profile)
            )
    return rows
