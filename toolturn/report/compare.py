"""Comparing two run folders metric by metric: what moved, and whether it moved too far.

Simulated metrics are exact functions of code, scenario and seed, so by default any change is a
regression (tolerance zero). A tolerance ``rel`` lets a metric move by ``rel * |base|``.
Wall-clock metrics are compared and shown but never gate. Besides the summary, the number of
rows of each table per policy and load level is compared as metric ``rows.<table>``. Every
metric is compared per load level (the summary's rows are per level), so a regression at one
level of a sweep cannot hide in the others.

Only runs of the same shape compare: the same scenario file, and the same session count,
policies and load levels (else ``UserError``, exit 2, naming what differs). Runs of several
experiment points compare point by point: every row and count is keyed by its point's key and
replication as well (the rows over a key's replications by the key alone), and the two runs must
have the same point keys.

A value that is not a finite number (NaN, infinity) has no relative change: it has not moved if
the other run has the same (NaN on both sides counts as the same), and otherwise it has moved
beyond any tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from toolturn.errors import UserError
from toolturn.metrics.display import RowFormat, measure_name
from toolturn.metrics.paired import PAIRED_COLUMNS, TURN_KEY, PairedStats, pair, paired_stats
from toolturn.metrics.reader import RunFolder
from toolturn.metrics.schema import ARM_COLUMNS
from toolturn.metrics.summary import SummaryRow, has_points
from toolturn.metrics.summary_row import RowKey
from toolturn.report.series import series_label

ROWS_UNIT = "rows"


@dataclass(frozen=True)
class MetricChange:
    """One (protocol, profile, policy, versus, load level, metric) of two runs; ``None`` where a
    run lacks it."""

    policy: str
    metric: str
    unit: str
    base: float | None
    new: float | None
    tolerance: float
    wall_clock: bool
    load_level: int = 0
    load: float | None = None
    versus: str | None = None
    profile: str = "default"
    point_key: str | None = None
    replication: int | None = None
    protocol: str = "anthropic"

    def where(self, split: bool) -> str:
        """Its "policy @ load" cell (`where_label`)."""
        return where_label(self.profile, self.policy, self.protocol, split, self.load,
                           self.versus, self.point_key, self.replication)

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


def point_label(point_key: str, replication: int | None) -> str:
    """How a row's point is shown: `{KEY #R}` for replication R, `{KEY mean}` over them all
    (the base point's key is empty: `{#R}`)."""
    which = "mean" if replication is None else f"#{replication}"
    return "{" + (f"{point_key} " if point_key else "") + which + "}"


def where_label(
    profile: str,
    policy: str,
    protocol: str,
    split: bool,
    load: float | None,
    versus: str | None = None,
    point_key: str | None = None,
    replication: int | None = None,
) -> str:
    """The "policy @ load" cell of a change or a per-turn pairing, in the terminal's tables and
    on the page: the series (`series_label`: its protocol when `split`), minus the policy it is
    compared with, at its load, then its point (`point_label`)."""
    name = series_label(profile, policy, protocol, split)
    name = name if versus is None else f"{name} − {versus}"
    name = name if load is None else f"{name} @ {load:g}"
    return name if point_key is None else f"{name} {point_label(point_key, replication)}"


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
    """Every (policy, versus, load level, metric) of either run, in base order then new-only ones.

    Raises ``UserError`` when the runs are of different scenarios (name or file hash), of a
    different shape (sessions, policies, load levels), or when a tolerance names no metric of
    either run (a typo would silently gate nothing).
    """
    tolerances = dict(tolerances or {})
    _check_same_scenario(base, new)
    check_same_shape(base, new)
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
                load_level=either.load_level,
                load=either.load,
                versus=either.versus,
                profile=either.profile,
                point_key=either.point_key,
                replication=either.replication,
                protocol=either.protocol,
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


def run_shape(run: RunFolder) -> dict[str, Any]:
    """What must be equal for two runs to compare: the configured sessions per level (from
    ``run.json``), and the profiles, policies and load levels the tables hold."""
    sessions = run.tables["sessions"]
    levels = sessions.select(["load_level", "load"]).group_by(["load_level", "load"]).aggregate([])
    extra = run.metadata.get("extra")
    configured = extra.get("sessions") if isinstance(extra, dict) else None
    points = (
        sorted(str(k) for k in pc.unique(_plain(sessions["point_key"])).to_pylist())
        if has_points(sessions)
        else []
    )
    return {
        "sessions": [] if configured is None else [configured],
        "points": points,
        "profiles": sorted(str(p) for p in pc.unique(_plain(sessions["profile"])).to_pylist()),
        "policies": sorted(str(p) for p in pc.unique(_plain(sessions["policy"])).to_pylist()),
        "load levels": sorted(
            (int(entry["load_level"]), entry["load"]) for entry in levels.to_pylist()
        ),
    }


def check_same_shape(base: RunFolder, new: RunFolder) -> None:
    """Raises ``UserError`` naming the first of sessions, profiles, policies and load levels that
    differ:
    such runs differ in every row, and a table of failures would bury the reason."""
    base_shape, new_shape = run_shape(base), run_shape(new)
    for what in ("sessions", "points", "profiles", "policies", "load levels"):
        if base_shape[what] != new_shape[what] and (
            what == "points" or (base_shape[what] and new_shape[what])
        ):
            raise UserError(
                f"{new.path}: {what} {_shape_text(new_shape[what])} differ from {base.path}'s "
                f"{_shape_text(base_shape[what])}; compare runs with the same sessions, "
                "experiment points, profiles, policies and load levels (the same --sessions, "
                "--profile and --policy)"
            )


def _shape_text(values: list[Any]) -> str:
    shown = [
        f"{value[0]} (load {value[1]:g})" if isinstance(value, tuple) and value[1] is not None
        else str(value[0] if isinstance(value, tuple) else value)
        for value in values
    ]
    return "[" + ", ".join(shown) + "]"


def _keyed(rows: list[SummaryRow]) -> dict[RowKey, SummaryRow]:
    return {row.key: row for row in rows}


def _plain(column: pa.ChunkedArray) -> pa.ChunkedArray:
    if pa.types.is_dictionary(column.type):
        return column.cast(column.type.value_type)
    return column


def _row_counts(run: RunFolder) -> list[SummaryRow]:
    rows = []
    for name, table in run.tables.items():
        columns = ["profile", "policy", "load_level", "load"]
        if has_points(table):
            columns += ["point", "replication", "point_key"]
        keys = pa.table({column: _plain(table[column]) for column in columns})
        counts = keys.group_by(columns).aggregate([([], "count_all")])
        for entry in sorted(
            counts.to_pylist(),
            key=lambda e: (e.get("point", 0), e["load_level"], e["profile"], e["policy"]),
        ):
            rows.append(
                SummaryRow(
                    entry["policy"],
                    f"rows.{name}",
                    float(entry["count_all"]),
                    ROWS_UNIT,
                    load_level=int(entry["load_level"]),
                    load=entry["load"],
                    profile=entry["profile"],
                    point=entry.get("point"),
                    replication=entry.get("replication"),
                    point_key=entry.get("point_key"),
                )
            )
    return rows


@dataclass(frozen=True)
class RunPairing:
    """One simulation (protocol, profile, policy, load level; in a run of points, also the
    point's key and replication) of two runs of the same seeds, turn by turn: the statistics of
    ``column``'s new-minus-base difference (``toolturn.metrics.paired``)."""

    policy: str
    load_level: int
    load: float | None
    column: str
    stats: PairedStats
    profile: str = "default"
    point_key: str | None = None
    replication: int | None = None
    protocol: str = "anthropic"

    def where(self, split: bool) -> str:
        """Its "policy @ load" cell (`where_label`)."""
        return where_label(self.profile, self.policy, self.protocol, split, self.load,
                           point_key=self.point_key, replication=self.replication)

    def cells(self) -> list[str]:
        """The row's cells after its place, as the terminal table and the page show them:
        measure, median, p90, mean (in one unit, fitted to the three), turns sooner, pairs."""
        stats = self.stats
        shown = RowFormat(
            "ns", [v for v in (stats.median, stats.p90, stats.mean) if v is not None]
        )
        unit = f" {shown.shown_unit}"
        return [
            measure_name(self.column),
            shown(stats.median) + unit,
            shown(stats.p90) + unit,
            shown(stats.mean) + unit,
            "-" if stats.gained is None else f"{stats.gained:.1%}",
            f"{stats.pairs:,}",
        ]


def paired_between(base: RunFolder, new: RunFolder) -> list[RunPairing]:
    """New minus base, per simulation and paired column, for every turn both runs have (the
    same seed gives the same sessions and turns: any difference is the code's or the
    scenario's). Empty when the seeds differ (then turns do not pair)."""
    if base.metadata.get("seed") != new.metadata.get("seed"):
        return []
    points = has_points(base.tables["turns"]) and has_points(new.tables["turns"])
    # A point's load comes with it: one load level is a different load at each point.
    names = ["profile", "protocol", "policy", "load_level"] + (
        ["point_key", "replication", "load"] if points else []
    )
    key = [*dict.fromkeys([*ARM_COLUMNS, *names, *TURN_KEY])]
    loads = _loads(base)
    pairings = []
    for column in PAIRED_COLUMNS:
        pairs = pair(new.tables["turns"], base.tables["turns"], column, key)
        units = pairs.select(names).group_by(names).aggregate([]).to_pylist()
        for entry in units:
            chosen = pc.equal(pairs[names[0]], entry[names[0]])
            for name in names[1:]:
                # A trace's load is null, which equals nothing.
                same = (
                    pc.is_null(pairs[name])
                    if entry[name] is None
                    else pc.equal(pairs[name], entry[name])
                )
                chosen = pc.and_(chosen, same)
            level = int(entry["load_level"])
            pairings.append(
                RunPairing(
                    entry["policy"],
                    level,
                    entry["load"] if points else loads.get(level),
                    column,
                    paired_stats(pairs.filter(chosen)["difference"].to_numpy()),
                    profile=entry["profile"],
                    point_key=entry.get("point_key"),
                    replication=entry.get("replication"),
                    protocol=entry["protocol"],
                )
            )
    return sorted(
        pairings,
        key=lambda p: (
            p.point_key or "", p.replication or 0, p.protocol, p.load_level, p.profile, p.policy,
            p.column,
        ),
    )


def _loads(run: RunFolder) -> dict[int, float | None]:
    return {level: load for level, load in run_shape(run)["load levels"]}
