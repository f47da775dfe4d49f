"""The summary of a run of several experiment points: per point, then over each key's
replications (mean and t interval, toolturn.metrics.intervals) and the policy under test's
difference from each baseline (toolturn.metrics.replications)."""

from __future__ import annotations

import math
import statistics
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest

from tests.helpers.experiment_tables import SCENARIO, experiment_tables
from toolturn.experiment.points import points_of
from toolturn.metrics.intervals import t_interval, t_quantile
from toolturn.metrics.replications import DIFFERENCE_PREFIX, beyond_interval, replication_rows
from toolturn.metrics.schema import POINT_SUMMARY_SCHEMA, SUMMARY_SCHEMA
from toolturn.metrics.summary import SummaryRow, summarize, summary_from_arrow, summary_to_arrow
from toolturn.scenario.loader import load_scenario
from toolturn.scenario.schema import Scenario


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    path: Path = tmp_path_factory.mktemp("s") / "s.toml"
    path.write_text(SCENARIO)
    return load_scenario(path)


@pytest.fixture(scope="module")
def tables(scenario: Scenario) -> dict[str, pa.Table]:
    return experiment_tables(scenario)


@pytest.fixture(scope="module")
def summary(tables: dict[str, pa.Table]) -> list[SummaryRow]:
    return summarize(tables)


def test_t_quantiles_are_the_tables() -> None:
    # Two-sided 95%, to the four decimals every table prints.
    for degrees, t in [(1, 12.7062), (2, 4.3027), (4, 2.7764), (10, 2.2281), (30, 2.0423)]:
        assert t_quantile(degrees) == pytest.approx(t, abs=5e-5)
    assert t_quantile(100_000) == pytest.approx(1.95997, abs=1e-4)
    with pytest.raises(ValueError):
        t_quantile(0)


def test_a_t_interval_is_mean_plus_minus_t_s_over_root_n() -> None:
    values = [3.0, 5.0, 10.0]
    interval = t_interval(values)
    half = t_quantile(2) * statistics.stdev(values) / math.sqrt(3)
    assert interval.mean == 6.0
    assert (interval.low, interval.high) == pytest.approx((6.0 - half, 6.0 + half))
    assert interval.excludes(0.0) is False and interval.excludes(-100.0)
    single = t_interval([4.0])
    assert (single.mean, single.low, single.high) == (4.0, None, None)
    assert not single.excludes(0.0)


def test_each_point_is_summarised_as_its_own_run(
    scenario: Scenario, tables: dict[str, pa.Table], summary: list[SummaryRow]
) -> None:
    points = points_of(scenario)
    for point in points:
        mine = {
            name: table.filter(pa.compute.equal(table["point"], point.index)).drop_columns(
                ["point", "replication", "point_key"]
            )
            for name, table in tables.items()
        }
        alone = summarize(mine)
        tagged = [row for row in summary if row.point == point.index]
        assert tagged, point
        # The categories are the whole run's: a point has every metric another point has.
        assert {r.metric for r in alone} <= {r.metric for r in tagged}
        by_key = {r.key[2:]: r for r in tagged}
        for row in alone:
            assert by_key[row.key[2:]] == replace(
                row,
                point=point.index,
                replication=point.replication,
                point_key="load.concurrency=" + str(dict(point.key)["load.concurrency"]),
            )


def test_every_metric_has_its_mean_and_interval_over_the_replications(
    summary: list[SummaryRow],
) -> None:
    over = [r for r in summary if r.replication is None]
    assert {r.point_key for r in over} == {"load.concurrency=1", "load.concurrency=3"}
    checked = 0
    for row in over:
        if row.metric.startswith(DIFFERENCE_PREFIX):
            continue
        values = [
            r.value
            for r in summary
            if r.replication is not None
            and r.key[2:] == row.key[2:]
            and r.point_key == row.point_key
        ]
        assert len(values) == 3
        interval = t_interval(values)
        assert (row.value, row.ci_low, row.ci_high) == (interval.mean, interval.low, interval.high)
        assert row.point is None
        checked += 1
    assert checked > 50
    # Something differs between seeds: a real interval, not a point.
    p99 = next(r for r in over if r.metric == "latency_ns.p99" and r.policy == "serial")
    assert p99.ci_low is not None and p99.ci_high is not None
    assert p99.ci_low < p99.value < p99.ci_high


def test_the_policy_difference_is_paired_by_replication(summary: list[SummaryRow]) -> None:
    differences = [r for r in summary if r.metric.startswith(DIFFERENCE_PREFIX)]
    assert {(r.policy, r.versus) for r in differences} == {("streaming", "serial")}
    row = next(
        r
        for r in differences
        if r.metric == "difference.ttfts_ns.p50" and r.point_key == "load.concurrency=1"
    )
    per_replication = {
        (r.policy, r.replication): r.value
        for r in summary
        if r.metric == "ttfts_ns.p50"
        and r.point_key == "load.concurrency=1"
        and r.replication is not None
    }
    values = [per_replication["streaming", k] - per_replication["serial", k] for k in range(3)]
    interval = t_interval(values)
    assert (row.value, row.ci_low, row.ci_high) == (interval.mean, interval.low, interval.high)
    assert beyond_interval(row) == interval.excludes(0.0)
    # Streaming starts tools while the model speaks: their first tool is sooner on every seed,
    # beyond the noise; the turn's tail latency moves within it.
    assert row.value < 0 and beyond_interval(row) is True
    tail = next(
        r
        for r in differences
        if r.metric == "difference.latency_ns.p99" and r.point_key == "load.concurrency=1"
    )
    assert beyond_interval(tail) is False


def test_beyond_interval_needs_an_interval() -> None:
    row = SummaryRow("streaming", "difference.x", -1.0, "ns", versus="serial", point_key="")
    assert beyond_interval(row) is None
    assert beyond_interval(replace(row, ci_low=-2.0, ci_high=-0.5)) is True
    assert beyond_interval(replace(row, ci_low=-2.0, ci_high=0.5)) is False


def test_the_summary_of_points_round_trips_through_arrow(summary: list[SummaryRow]) -> None:
    table = summary_to_arrow(summary)
    assert table.schema.equals(POINT_SUMMARY_SCHEMA)
    assert summary_from_arrow(table) == summary


def test_a_plain_runs_summary_has_no_point_columns(tables: dict[str, pa.Table]) -> None:
    plain = {
        name: table.filter(pa.compute.equal(table["point"], 0)).drop_columns(
            ["point", "replication", "point_key"]
        )
        for name, table in tables.items()
    }
    rows = summarize(plain)
    assert all(r.point_key is None and r.ci_low is None for r in rows)
    assert summary_to_arrow(rows).schema.equals(SUMMARY_SCHEMA)


def test_the_summary_of_points_is_deterministic(
    scenario: Scenario, summary: list[SummaryRow]
) -> None:
    again = summarize(experiment_tables(scenario))
    assert summary_to_arrow(again).equals(summary_to_arrow(summary))


def test_the_replications_of_each_protocol_are_summarised_apart() -> None:
    # Two protocols' rows of one key are two arms each, never four replications of one.
    value = {("anthropic", "streaming"): (1.0, 3.0), ("anthropic", "serial"): (2.0, 6.0),
             ("openai-chat", "streaming"): (10.0, 30.0), ("openai-chat", "serial"): (20.0, 40.0)}
    rows = [
        SummaryRow(policy, "m", values[replication], "ms", protocol=protocol, point=replication,
                   replication=replication, point_key="k")
        for (protocol, policy), values in value.items() for replication in (0, 1)
    ]
    over = {(r.protocol, r.policy, r.metric): (r.value, r.versus) for r in replication_rows(rows)}
    assert over == {
        ("anthropic", "streaming", "m"): (2.0, None),
        ("anthropic", "serial", "m"): (4.0, None),
        ("openai-chat", "streaming", "m"): (20.0, None),
        ("openai-chat", "serial", "m"): (30.0, None),
        ("anthropic", "streaming", f"{DIFFERENCE_PREFIX}m"): (-2.0, "serial"),
        ("openai-chat", "streaming", f"{DIFFERENCE_PREFIX}m"): (-10.0, "serial"),
    }
