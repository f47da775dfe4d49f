"""The run summary, in long form, computed from the run tables: per simulation (one arm at one
load level) one number per metric, and per load level the paired differences between arms. An
*arm* is one (recovery profile, executor policy) pair.

Every row names its simulation (``profile``, ``policy``, ``load_level``, ``load``): nothing is
pooled across load levels, whose sessions never coexisted. Definitions (every number is exact for
given tables, so two runs can be compared exactly):

- ``<column>.p50 ... .p99.9``: percentiles of ``ttfts_ns``, ``latency_ns`` (turns) and
  ``start_lag_ns`` (tools) by the project's one method (``toolturn.metrics.percentiles``: numpy's
  ``higher``, a value some row has). ``<column>.count`` counts the non-null values. Percentiles
  of an empty column are left out.
- ``paired.<column>.<statistic>`` (``ttfts_ns``, ``latency_ns``): rows whose ``policy`` is the
  policy under test (the first of ``streaming``, ``at_message_stop``, ``serial`` that ran) and
  whose ``versus`` names a baseline policy: the per-turn difference policy minus versus
  (``toolturn.metrics.paired``: median, p90, mean, 95% confidence intervals, the share of pairs that
  gained, the number of pairs), within the row's ``profile``. Every other row has ``versus`` null.
- ``paired_profile.<column>.<statistic>``: the same between recovery profiles under one policy:
  ``profile`` is the profile under test (each one but ``default``), ``versus`` the baseline
  profile (``default``, else the first profile that ran).
- ``requests.count``: rows of ``requests`` (model request attempts), the denominator of the rates.
- ``turns.outcome.<outcome>``: turns by outcome (every outcome seen in the run, for every policy).
- ``repairs_per_1k_requests.<kind>`` and ``.all``: repair rows per 1,000 requests.
- When sessions crashed, rewound or were compacted (issue 22): repairs by cause, requests the API
  would have refused without the boundary layer, calls lost, compactions, sessions stopped on a
  broken transcript, the time from a crash to the next request
  (``toolturn.metrics.session_faults``).
- ``synthetic_per_1k_requests.<cause>`` and ``.all``: tool rows with a ``synthetic_cause`` per
  1,000 requests.
- ``status_per_1k_requests.<status>``: request attempts per 1,000 by HTTP status (``200``,
  ``429``, ``529``, ...) or the engine's ``pending``/``cancelled``. Rates are left out for a
  simulation without requests.
- ``simulated_span_ns``: last ``turn_end_ns`` minus first ``request_sent_ns`` of the
  simulation's turns; ``throughput.turns_per_s`` (turns whose outcome is ``completed``),
  ``throughput.output_tokens_per_s`` (``requests.output_tokens``) and
  ``throughput.input_tokens_per_s`` (``requests.input_tokens``: what the transcripts sent cost)
  are per simulated second of it.
- ``harness.events_per_wall_s``: the harness's own speed, passed in; wall-clock, so it is marked
  ``wall_clock`` and never part of an exact comparison.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from toolturn.metrics import session_faults
from toolturn.metrics.arm_fold import ArmFold, fold_tables
from toolturn.metrics.misfires import READ as MISFIRES_READ
from toolturn.metrics.misfires import misfire_rows
from toolturn.metrics.paired import paired_differences
from toolturn.metrics.percentiles import percentiles
from toolturn.metrics.replications import replication_rows
from toolturn.metrics.schema import (
    COMPLETED,
    EXPERIMENT_COLUMNS,
    POINT_SUMMARY_SCHEMA,
    SUMMARY_SCHEMA,
)

# The names re-exported ("X as X") are where the rows' readers have always found them.
from toolturn.metrics.summary_plan import BASE_PROFILE as BASE_PROFILE
from toolturn.metrics.summary_plan import DISTRIBUTIONS as DISTRIBUTIONS
from toolturn.metrics.summary_plan import EVENTS_PER_WALL_S as EVENTS_PER_WALL_S
from toolturn.metrics.summary_plan import NS_PER_S as NS_PER_S
from toolturn.metrics.summary_plan import PAIRED_PREFIX as PAIRED_PREFIX
from toolturn.metrics.summary_plan import PAIRED_PROFILE_PREFIX as PAIRED_PROFILE_PREFIX
from toolturn.metrics.summary_plan import PER_1K as PER_1K
from toolturn.metrics.summary_plan import PERCENTILES as PERCENTILES
from toolturn.metrics.summary_plan import Categories as Categories
from toolturn.metrics.summary_plan import UnitKey as UnitKey
from toolturn.metrics.summary_plan import metric_rows as metric_rows
from toolturn.metrics.summary_plan import per_second, speeds_on, summary_rows
from toolturn.metrics.summary_row import POLICY_ORDER as POLICY_ORDER
from toolturn.metrics.summary_row import Arm as Arm
from toolturn.metrics.summary_row import SummaryRow as SummaryRow
from toolturn.metrics.summary_row import treatment_of as treatment_of

__all__ = [
    "LoadPoint", "TableSource", "arm_label", "arms_of", "categories", "has_points", "load_levels",
    "load_sweep", "points_in", "rows_at_level", "rows_of", "rows_of_point", "summarize",
    "summary_from_arrow", "summary_groups", "summary_to_arrow", "values",
]


@dataclass(frozen=True)
class LoadPoint:
    """Throughput and tail latency of one arm at one offered load of a load sweep."""

    policy: str
    load_level: int
    load: float
    turns: int
    turns_per_s: float
    latency_p99_ns: float
    profile: str = "default"


def summarize(
    tables: Mapping[str, pa.Table],
    *,
    events_per_wall_s: Mapping[UnitKey, float] | None = None,
) -> list[SummaryRow]:
    """The summary of a run's tables: level by level, the paired rows first, then each arm in
    sorted order (profile, then policy) with its metrics in a fixed order.

    ``events_per_wall_s`` maps a simulation (profile, policy, load_level, protocol) to the
    harness speed measured while it ran; each protocol's arms get their own.

    Tables of several experiment points (with ``EXPERIMENT_COLUMNS``) are summarised point by
    point, in point order, each row naming its point, replication and key; the rows over each
    key's replications follow (toolturn.metrics.replications). The categories of the count and rate
    metrics are the whole run's, so every replication has the same metrics. Points have no
    harness speed: it is measured per simulation, not per point.
    """
    speeds = dict(events_per_wall_s or {})
    found = Categories(
        outcomes=categories(tables["turns"], "outcome"),
        kinds=categories(tables["repairs"], "kind"),
        causes=categories(tables["tools"], "synthetic_cause"),
        statuses=categories(tables["requests"], "status"),
        faults_ran=session_faults.ran(tables),
    )
    if not has_points(tables["turns"]):
        return _summarize_point(tables, speeds, found)
    rows: list[SummaryRow] = []
    for point, replication, key in points_in(tables["sessions"]):
        mine = {name: rows_of_point(table, point) for name, table in tables.items()}
        rows += [
            replace(row, point=point, replication=replication, point_key=key)
            for row in _summarize_point(mine, {}, found)
        ]
    return rows + replication_rows(rows)


def has_points(table: pa.Table) -> bool:
    """Whether a run table is of several experiment points (has ``EXPERIMENT_COLUMNS``)."""
    return set(EXPERIMENT_COLUMNS) <= set(table.column_names)


def points_in(table: pa.Table) -> list[tuple[int, int, str]]:
    """The (point, replication, point_key) triples of a table's rows, by point."""
    if table.num_rows == 0:
        return []
    triples = pa.table(
        {name: _decoded(table[name]) for name in EXPERIMENT_COLUMNS}
    ).group_by(list(EXPERIMENT_COLUMNS)).aggregate([])
    return sorted(
        (int(e["point"]), int(e["replication"]), str(e["point_key"])) for e in triples.to_pylist()
    )


def rows_of_point(table: pa.Table, point: int) -> pa.Table:
    """The rows of one experiment point."""
    return table.filter(pc.equal(table["point"], point))


def _summarize_point(
    tables: Mapping[str, pa.Table],
    speeds: Mapping[UnitKey, float],
    found: Categories,
) -> list[SummaryRow]:
    """The summary of one simulation's (or a plain run's) tables, as ``summarize`` says: protocol
    by protocol (in name order), each row naming its protocol, as arms of different protocols
    never pool."""
    protocols = categories(tables["sessions"], "protocol")
    if not protocols:
        return summary_rows(TableSource(tables), found, speeds_on(speeds, None))
    rows: list[SummaryRow] = []
    for protocol in protocols:
        mine = {name: _rows_on(table, protocol) for name, table in tables.items()}
        rows += [replace(row, protocol=protocol)
                 for row in summary_rows(TableSource(mine), found, speeds_on(speeds, protocol))]
        rows += misfire_rows([mine["turns"].select(list(MISFIRES_READ))], protocol)
    return rows


def _rows_on(table: pa.Table, protocol: str) -> pa.Table:
    """The rows of one wire protocol."""
    return table.filter(pc.equal(_decoded(table["protocol"]), protocol))


class TableSource:
    """The arm source (`toolturn.metrics.summary_plan.ArmSource`) of whole tables in memory."""

    def __init__(self, tables: Mapping[str, pa.Table]) -> None:
        self._tables = tables
        self._levels: dict[int, dict[str, pa.Table]] = {}

    def levels(self) -> list[tuple[int, float | None]]:
        return load_levels(self._tables)

    def _at(self, level: int) -> dict[str, pa.Table]:
        at_level = self._levels.get(level)
        if at_level is None:
            at_level = self._levels[level] = {
                name: rows_at_level(table, level) for name, table in self._tables.items()
            }
        return at_level

    def arms_at(self, level: int) -> set[Arm]:
        return {arm for table in self._at(level).values() for arm in arms_of(table)}

    def fold(self, level: int, arm: Arm, faults: bool) -> ArmFold:
        profile, policy = arm
        return fold_tables(
            {name: rows_of(table, policy, profile) for name, table in self._at(level).items()},
            faults=faults,
        )

    def differences(
        self, level: int, treatment: Arm, baseline: Arm
    ) -> Callable[[str], np.ndarray]:
        # Two arms differ in one arm column: their policies within a profile, or their
        # profiles under one policy.
        turns = self._at(level)["turns"]
        if treatment[0] == baseline[0]:
            dimension, values = "policy", (treatment[1], baseline[1])
            mine = turns.filter(pc.equal(_decoded(turns["profile"]), treatment[0]))
        else:
            dimension, values = "profile", (treatment[0], baseline[0])
            mine = turns.filter(pc.equal(_decoded(turns["policy"]), treatment[1]))

        def differences(column: str) -> np.ndarray:
            pairs = paired_differences(
                mine, column, dimension=dimension, treatment=values[0], baseline=values[1]
            )
            array: np.ndarray = pairs["difference"].to_numpy()
            return array

        return differences


def load_levels(tables: Mapping[str, pa.Table]) -> list[tuple[int, float | None]]:
    """The (load_level, load) pairs that occur in the tables, by level."""
    seen: dict[int, float | None] = {}
    for table in tables.values():
        pairs = table.select(["load_level", "load"]).group_by(["load_level", "load"]).aggregate([])
        for entry in pairs.to_pylist():
            seen.setdefault(int(entry["load_level"]), entry["load"])
    return sorted(seen.items())


def arm_label(profile: str, policy: str) -> str:
    """How an arm is shown: its policy alone under the ``default`` profile, else the policy and
    the profile in brackets (``streaming [claude-code]``)."""
    return policy if profile == "default" else f"{policy} [{profile}]"


def arms_of(table: pa.Table) -> list[Arm]:
    """The distinct (profile, policy) pairs of a table's rows, sorted."""
    if table.num_rows == 0:
        return []
    pairs = pa.table({"profile": _decoded(table["profile"]), "policy": _decoded(table["policy"])})
    unique = pairs.group_by(["profile", "policy"]).aggregate([])
    return sorted(zip(unique["profile"].to_pylist(), unique["policy"].to_pylist(), strict=True))


def load_sweep(turns: pa.Table) -> list[LoadPoint]:
    """Per policy and load level, sorted: completed turns/s and p99 latency; empty if no sweep.

    A run swept load when its turns have two or more load levels.
    """
    levels = [(level, load) for level, load in load_levels({"turns": turns}) if load is not None]
    if len(levels) < 2:
        return []
    points = []
    for profile, policy in arms_of(turns):
        mine = rows_of(turns, policy, profile)
        for level, load in levels:
            at_level = rows_at_level(mine, level)
            if at_level.num_rows == 0:
                continue
            (p99,) = percentiles(values(at_level, "latency_ns"), (99.0,))
            points.append(
                LoadPoint(
                    policy=policy,
                    load_level=level,
                    load=float(load),
                    turns=at_level.num_rows,
                    turns_per_s=per_second(_completed(at_level), _span_ns(at_level)),
                    latency_p99_ns=p99,
                    profile=profile,
                )
            )
    return points


def summary_to_arrow(rows: Iterable[SummaryRow]) -> pa.Table:
    """The summary rows as a table of ``SUMMARY_SCHEMA``, in their given order; of
    ``POINT_SUMMARY_SCHEMA`` when they are of experiment points."""
    rows = list(rows)
    columns = {
        "policy": pa.array([row.policy for row in rows], type=pa.string()).dictionary_encode(),
        "profile": pa.array([row.profile for row in rows], type=pa.string()).dictionary_encode(),
        "protocol": pa.array([row.protocol for row in rows], type=pa.string()).dictionary_encode(),
        "versus": pa.array([row.versus for row in rows], type=pa.string()).dictionary_encode(),
        "load_level": pa.array([row.load_level for row in rows], type=pa.int64()),
        "load": pa.array([row.load for row in rows], type=pa.float64()),
        "metric": pa.array([row.metric for row in rows], type=pa.string()),
        "value": pa.array([row.value for row in rows], type=pa.float64()),
        "unit": pa.array([row.unit for row in rows], type=pa.string()).dictionary_encode(),
        "wall_clock": pa.array([row.wall_clock for row in rows], type=pa.bool_()),
    }
    if not any(row.point_key is not None for row in rows):
        return pa.Table.from_pydict(columns, schema=SUMMARY_SCHEMA)
    for name in ("point", "replication", "point_key", "ci_low", "ci_high"):
        columns[name] = pa.array(
            [getattr(row, name) for row in rows], type=POINT_SUMMARY_SCHEMA.field(name).type
        )
    return pa.Table.from_pydict(columns, schema=POINT_SUMMARY_SCHEMA)


def summary_groups(summary: list[SummaryRow]) -> list[dict[str, Any]]:
    """The summary for people and JSON readers: one object per (load level, profile, policy,
    versus), in summary order, with its metrics by name (a paired group's metrics keep their
    prefix, which says what `versus` is). In a run of experiment points, one object per point
    and replication as well (``point``, ``replication``, ``point_key``; both of the first null
    for the rows over a key's replications, whose ``intervals`` give each metric's
    ``[ci_low, ci_high]``)."""
    groups: dict[tuple[str | None, int | None, str, int, str, str, str | None, bool], Any] = {}
    for row in summary:
        by_profile = row.metric.startswith(PAIRED_PROFILE_PREFIX)
        key = (
            row.point_key, row.replication, row.protocol, row.load_level, row.profile, row.policy,
            row.versus, by_profile,
        )
        group = groups.get(key)
        if group is None:
            group = groups[key] = {
                "load_level": row.load_level,
                "load": row.load,
                "profile": row.profile,
                "protocol": row.protocol,
                "policy": row.policy,
                "versus": row.versus,
                "metrics": {},
            }
            if row.point_key is not None:
                group |= {
                    "point": row.point,
                    "replication": row.replication,
                    "point_key": row.point_key,
                }
        group["metrics"][row.metric] = row.value
        if row.ci_low is not None and row.ci_high is not None:
            group.setdefault("intervals", {})[row.metric] = [row.ci_low, row.ci_high]
    return list(groups.values())


def summary_from_arrow(table: pa.Table) -> list[SummaryRow]:
    """The rows of a table written by ``summary_to_arrow``."""
    return [SummaryRow(**row) for row in table.to_pylist()]


def categories(table: pa.Table, column: str) -> list[str]:
    """The distinct non-null values of a category column, sorted."""
    return sorted(str(value) for value in _distinct(table[column]))


def _distinct(column: pa.ChunkedArray) -> list[Any]:
    return [value for value in pc.unique(_decoded(column)).to_pylist() if value is not None]


def rows_of(table: pa.Table, policy: str, profile: str | None = None) -> pa.Table:
    """The rows of one policy (of one profile, when given)."""
    chosen = pc.equal(_decoded(table["policy"]), policy)
    if profile is not None:
        chosen = pc.and_(chosen, pc.equal(_decoded(table["profile"]), profile))
    return table.filter(chosen)


def rows_at_level(table: pa.Table, level: int) -> pa.Table:
    """The rows of one load level."""
    return table.filter(pc.equal(table["load_level"], level))


def values(table: pa.Table, column: str) -> np.ndarray:
    """A column's non-null values as a numpy array (int64 for the ``*_ns`` columns)."""
    array: np.ndarray = table[column].drop_null().to_numpy()
    return array


def _decoded(column: pa.ChunkedArray) -> pa.ChunkedArray:
    if pa.types.is_dictionary(column.type):
        return column.cast(column.type.value_type)
    return column


def _completed(turns: pa.Table) -> int:
    return pc.sum(pc.equal(_decoded(turns["outcome"]), COMPLETED)).as_py() or 0


def _span_ns(turns: pa.Table) -> int:
    return int(pc.max(turns["turn_end_ns"]).as_py() - pc.min(turns["request_sent_ns"]).as_py())
