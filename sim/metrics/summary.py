"""The run summary: one number per (policy, metric), in long form, computed from the run tables.

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
from dataclasses import dataclass
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
    """One summary number: ``value`` in ``unit`` for ``metric`` under ``policy``."""

    policy: str
    metric: str
    value: float
    unit: str
    wall_clock: bool = False


@dataclass(frozen=True)
class LoadPoint:
    """Throughput and tail latency of one policy at one offered load of a load sweep."""

    policy: str
    load: float
    turns: int
    turns_per_s: float
    latency_p99_ns: float


def summarize(
    tables: Mapping[str, pa.Table],
    *,
    events_per_wall_s: Mapping[str, float] | None = None,
) -> list[SummaryRow]:
    """The summary of a run's tables, policies in sorted order, metrics in a fixed order.

    ``events_per_wall_s`` maps a policy to the harness speed measured while it ran.
    """
    policies = sorted(
        {policy for table in tables.values() for policy in categories(table, "policy")}
        | set(events_per_wall_s or {})
    )
    outcomes = categories(tables["turns"], "outcome")
    kinds = categories(tables["repairs"], "kind")
    causes = categories(tables["tools"], "synthetic_cause")
    rows: list[SummaryRow] = []
    for policy in policies:
        mine = {name: rows_of(table, policy) for name, table in tables.items()}
        rows += _distribution_rows(policy, mine)
        rows += _count_rows(policy, mine, outcomes)
        rows += _rate_rows(policy, mine, kinds, causes)
        rows += _throughput_rows(policy, mine["turns"], mine["requests"])
        if events_per_wall_s and policy in events_per_wall_s:
            speed = float(events_per_wall_s[policy])
            rows.append(SummaryRow(policy, EVENTS_PER_WALL_S, speed, "events/s", wall_clock=True))
    return rows


def load_sweep(turns: pa.Table) -> list[LoadPoint]:
    """Per policy and offered load, sorted: completed turns/s and p99 latency; empty if no sweep.

    A run swept load when its turns carry two or more distinct non-null ``load`` values.
    """
    loads = sorted(float(load) for load in _distinct(turns["load"]))
    if len(loads) < 2:
        return []
    points = []
    for policy in categories(turns, "policy"):
        mine = rows_of(turns, policy)
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
                )
            )
    return points


def summary_to_arrow(rows: Iterable[SummaryRow]) -> pa.Table:
    """The summary rows as a table of ``SUMMARY_SCHEMA``, in their given order."""
    rows = list(rows)
    columns = {
        "policy": pa.array([row.policy for row in rows]).dictionary_encode(),
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


def rows_of(table: pa.Table, policy: str) -> pa.Table:
    """The rows of one policy."""
    return table.filter(pc.equal(_decoded(table["policy"]), policy))


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
