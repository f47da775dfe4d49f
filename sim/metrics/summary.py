"""The run summary: one number per (profile, policy, metric), in long form, computed from the run
tables. An *arm* is one (recovery profile, executor policy) pair; "policy" below means an arm.

Definitions (every number is exact for given tables, so two runs can be compared exactly):

- ``<column>.p50 ... .p99.9``: percentiles of ``ttfts_ns``, ``latency_ns`` (turns) and
  ``start_lag_ns`` (tools), with numpy's ``method="higher"``: each percentile is a value some row
  actually has (an integer of nanoseconds, never an interpolation), and a tail is never
  under-reported. ``<column>.count`` counts the non-null values. Percentiles of an empty column are
  left out.
- ``requests.count``: rows of ``requests`` (model request attempts), the denominator of the rates.
- ``turns.outcome.<outcome>``: turns by outcome (every outcome seen in the run, for every policy).
- ``repairs_per_1k_requests.<kind>`` and ``.all``: repair rows per 1,000 requests.
- ``synthetic_per_1k_requests.<cause>`` and ``.all``: tool rows with a ``synthetic_cause`` per
  1,000 requests. Rates are left out for a policy without requests.
- ``simulated_span_ns``: last ``turn_end_ns`` minus first ``request_sent_ns`` of the policy's turns;
  ``throughput.turns_per_s`` (turns whose outcome is ``completed``),
  ``throughput.output_tokens_per_s`` (``requests.output_tokens``) and
  ``throughput.input_tokens_per_s`` (``requests.input_tokens``: what the transcripts sent cost)
  are per simulated second of it.
- ``harness.events_per_wall_s``: the harness's own speed, passed in; wall-clock, so it is marked
  ``wall_clock`` and never part of an exact comparison.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sim.metrics.schema import COMPLETED, SUMMARY_SCHEMA

PERCENTILE_METHOD: Final = "higher"
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


@dataclass(frozen=True)
class SummaryRow:
    """One summary number: ``value`` in ``unit`` for ``metric`` under ``policy`` and
    ``profile``."""

    policy: str
    metric: str
    value: float
    unit: str
    wall_clock: bool = False
    profile: str = "default"

    @property
    def arm(self) -> Arm:
        return (self.profile, self.policy)


# (recovery profile, executor policy)
Arm = tuple[str, str]


@dataclass(frozen=True)
class LoadPoint:
    """Throughput and tail latency of one arm at one offered load of a load sweep."""

    policy: str
    load: float
    turns: int
    turns_per_s: float
    latency_p99_ns: float
    profile: str = "default"


def summarize(
    tables: Mapping[str, pa.Table],
    *,
    events_per_wall_s: Mapping[Arm, float] | None = None,
) -> list[SummaryRow]:
    """The summary of a run's tables, arms in sorted order (profile, then policy), metrics in a
    fixed order.

    ``events_per_wall_s`` maps an arm to the harness speed measured while it ran.
    """
    arms = sorted(
        {arm for table in tables.values() for arm in arms_of(table)} | set(events_per_wall_s or {})
    )
    outcomes = categories(tables["turns"], "outcome")
    kinds = categories(tables["repairs"], "kind")
    causes = categories(tables["tools"], "synthetic_cause")
    rows: list[SummaryRow] = []
    for profile, policy in arms:
        mine = {name: rows_of(table, policy, profile) for name, table in tables.items()}
        arm_rows = _distribution_rows(policy, mine)
        arm_rows += _count_rows(policy, mine, outcomes)
        arm_rows += _rate_rows(policy, mine, kinds, causes)
        arm_rows += _throughput_rows(policy, mine["turns"], mine["requests"])
        if events_per_wall_s and (profile, policy) in events_per_wall_s:
            speed = float(events_per_wall_s[profile, policy])
            arm_rows.append(
                SummaryRow(policy, EVENTS_PER_WALL_S, speed, "events/s", wall_clock=True)
            )
        rows += [replace(row, profile=profile) for row in arm_rows]
    return rows


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
    """Per policy and offered load, sorted: completed turns/s and p99 latency; empty if no sweep.

    A run swept load when its turns carry two or more distinct non-null ``load`` values.
    """
    loads = sorted(float(load) for load in _distinct(turns["load"]))
    if len(loads) < 2:
        return []
    points = []
    for profile, policy in arms_of(turns):
        mine = rows_of(turns, policy, profile)
        for load in loads:
            at_load = mine.filter(pc.equal(mine["load"], load))
            if at_load.num_rows == 0:
                continue
            latency = values(at_load, "latency_ns")
            points.append(
                LoadPoint(
                    policy=policy,
                    load=float(load),
                    turns=at_load.num_rows,
                    turns_per_s=_per_second(_completed(at_load), _span_ns(at_load)),
                    latency_p99_ns=float(np.percentile(latency, 99.0, method=PERCENTILE_METHOD)),
                    profile=profile,
                )
            )
    return points


def summary_to_arrow(rows: Iterable[SummaryRow]) -> pa.Table:
    """The summary rows as a table of ``SUMMARY_SCHEMA``, in their given order."""
    rows = list(rows)
    columns = {
        "policy": pa.array([row.policy for row in rows], type=pa.string()).dictionary_encode(),
        "profile": pa.array([row.profile for row in rows], type=pa.string()).dictionary_encode(),
        "metric": pa.array([row.metric for row in rows], type=pa.string()),
        "value": pa.array([row.value for row in rows], type=pa.float64()),
        "unit": pa.array([row.unit for row in rows], type=pa.string()).dictionary_encode(),
        "wall_clock": pa.array([row.wall_clock for row in rows], type=pa.bool_()),
    }
    return pa.Table.from_pydict(columns, schema=SUMMARY_SCHEMA)


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


def values(table: pa.Table, column: str) -> np.ndarray:
    """A column's non-null values as a numpy array (int64 for the ``*_ns`` columns)."""
    return table[column].drop_null().to_numpy()


def _decoded(column: pa.ChunkedArray) -> pa.ChunkedArray:
    if pa.types.is_dictionary(column.type):
        return column.cast(column.type.value_type)
    return column


def _distribution_rows(policy: str, tables: Mapping[str, pa.Table]) -> list[SummaryRow]:
    rows = []
    for table_name, column, count_unit in DISTRIBUTIONS:
        data = values(tables[table_name], column)
        if data.size:
            quantiles = np.percentile(data, [q for _, q in PERCENTILES], method=PERCENTILE_METHOD)
            for (label, _), quantile in zip(PERCENTILES, quantiles, strict=True):
                rows.append(SummaryRow(policy, f"{column}.{label}", float(quantile), "ns"))
        rows.append(SummaryRow(policy, f"{column}.count", float(data.size), count_unit))
    return rows


def _count_rows(
    policy: str, tables: Mapping[str, pa.Table], outcomes: list[str]
) -> list[SummaryRow]:
    rows = [SummaryRow(policy, "requests.count", float(tables["requests"].num_rows), "requests")]
    turn_outcomes = _decoded(tables["turns"]["outcome"])
    for outcome in outcomes:
        count = pc.sum(pc.equal(turn_outcomes, outcome)).as_py() or 0
        rows.append(SummaryRow(policy, f"turns.outcome.{outcome}", float(count), "turns"))
    return rows


def _rate_rows(
    policy: str, tables: Mapping[str, pa.Table], kinds: list[str], causes: list[str]
) -> list[SummaryRow]:
    requests = tables["requests"].num_rows
    if requests == 0:
        return []
    rows = []
    for metric, column, categories in (
        ("repairs_per_1k_requests", _decoded(tables["repairs"]["kind"]), kinds),
        ("synthetic_per_1k_requests", _decoded(tables["tools"]["synthetic_cause"]), causes),
    ):
        counts = {c: pc.sum(pc.equal(column, c)).as_py() or 0 for c in categories}
        total = sum(counts.values())
        rows.append(SummaryRow(policy, f"{metric}.all", total * 1000 / requests, PER_1K))
        for category in categories:
            rate = counts[category] * 1000 / requests
            rows.append(SummaryRow(policy, f"{metric}.{category}", rate, PER_1K))
    return rows


def _throughput_rows(policy: str, turns: pa.Table, requests: pa.Table) -> list[SummaryRow]:
    if turns.num_rows == 0:
        return []
    span = _span_ns(turns)
    rows = [SummaryRow(policy, "simulated_span_ns", float(span), "ns")]
    if span > 0:
        rows.append(
            SummaryRow(
                policy, "throughput.turns_per_s", _per_second(_completed(turns), span), "turns/s"
            )
        )
        for column in ("output_tokens", "input_tokens"):
            tokens = pc.sum(requests[column]).as_py() or 0
            rows.append(
                SummaryRow(
                    policy, f"throughput.{column}_per_s", _per_second(tokens, span), "tokens/s"
                )
            )
    return rows


def _completed(turns: pa.Table) -> int:
    return pc.sum(pc.equal(_decoded(turns["outcome"]), COMPLETED)).as_py() or 0


def _span_ns(turns: pa.Table) -> int:
    return int(pc.max(turns["turn_end_ns"]).as_py() - pc.min(turns["request_sent_ns"]).as_py())


def _per_second(count: int, span_ns: int) -> float:
    return count * NS_PER_S / span_ns if span_ns > 0 else 0.0
