"""Summary numbers checked against the hand-worked values of the hand-made run."""

from __future__ import annotations

import pytest

from sim.metrics import RunCollector, summarize
from sim.metrics.summary import SummaryRow, load_sweep, summary_from_arrow, summary_to_arrow
from sim.metrics.summary_table import format_value, summary_table
from tests.test_metrics_support import handmade_tables, turn


def by_key(rows: list[SummaryRow]) -> dict[tuple[str, str], float]:
    return {(row.policy, row.metric): row.value for row in rows}


def test_percentiles_use_the_higher_method_on_integer_nanoseconds() -> None:
    values = by_key(summarize(handmade_tables()))
    assert values["streaming", "ttfts_ns.p50"] == 20
    assert values["streaming", "ttfts_ns.p90"] == 30
    assert values["streaming", "ttfts_ns.p99.9"] == 30
    assert values["streaming", "ttfts_ns.count"] == 3
    # linear interpolation would say 250 here; "higher" reports a latency a turn really had
    assert values["streaming", "latency_ns.p50"] == 300
    assert values["streaming", "latency_ns.p90"] == 1_999_999_000
    assert values["streaming", "latency_ns.count"] == 4
    assert values["streaming", "start_lag_ns.p50"] == 5
    assert values["streaming", "start_lag_ns.p95"] == 7
    assert values["streaming", "start_lag_ns.count"] == 4
    assert values["serial", "ttfts_ns.p99"] == 50
    assert values["serial", "start_lag_ns.p50"] == 40


def test_rates_per_thousand_requests_by_kind_and_cause() -> None:
    values = by_key(summarize(handmade_tables()))
    assert values["streaming", "requests.count"] == 5
    assert values["streaming", "repairs_per_1k_requests.missing_result"] == 400
    assert values["streaming", "repairs_per_1k_requests.orphan_removed"] == 200
    assert values["streaming", "repairs_per_1k_requests.all"] == 600
    assert values["streaming", "synthetic_per_1k_requests.user_interrupt"] == 200
    # kinds seen under any policy are reported (as zero) under every policy
    assert values["serial", "repairs_per_1k_requests.orphan_removed"] == 0
    assert values["serial", "synthetic_per_1k_requests.all"] == 0


def test_throughput_is_per_simulated_second_of_the_policys_span() -> None:
    values = by_key(summarize(handmade_tables()))
    assert values["streaming", "simulated_span_ns"] == 2_000_000_000
    assert values["streaming", "turns.outcome.completed"] == 3
    assert values["streaming", "turns.outcome.interrupted"] == 1
    assert values["streaming", "throughput.turns_per_s"] == 1.5
    assert values["streaming", "throughput.output_tokens_per_s"] == 250
    assert values["serial", "throughput.turns_per_s"] == 1
    assert values["serial", "throughput.output_tokens_per_s"] == 10
    # Every hand-made request sent 5 input tokens: 5 requests in 2 s, and 1 in 1 s.
    assert values["streaming", "throughput.input_tokens_per_s"] == 12.5
    assert values["serial", "throughput.input_tokens_per_s"] == 5


def test_harness_speed_is_marked_wall_clock() -> None:
    rows = summarize(handmade_tables(), events_per_wall_s={("default", "serial"): 250_000.0})
    speed = [row for row in rows if row.metric == "harness.events_per_wall_s"]
    assert speed == [SummaryRow("serial", "harness.events_per_wall_s", 250_000.0, "events/s", True)]
    assert not any(row.wall_clock for row in rows if row not in speed)


def test_policies_are_sorted_and_metric_order_is_fixed() -> None:
    rows = summarize(handmade_tables())
    assert list(dict.fromkeys(row.policy for row in rows)) == ["serial", "streaming"]
    assert rows[0].metric == "ttfts_ns.p50"


def test_summary_round_trips_through_arrow() -> None:
    rows = summarize(handmade_tables(), events_per_wall_s={("default", "serial"): 1.0})
    assert summary_from_arrow(summary_to_arrow(rows)) == rows


def test_an_empty_policy_has_counts_but_no_percentiles_or_rates() -> None:
    collector = RunCollector(run_id="r", scenario="s", seed=1)
    collector.add_session(
        policy="idle", profile="default", session_id=0, arrival_ns=0, n_turns=0,
        outcome="completed", n_interrupts=0,
    )
    values = by_key(summarize(collector.tables()))
    assert values == {
        ("idle", "ttfts_ns.count"): 0,
        ("idle", "latency_ns.count"): 0,
        ("idle", "start_lag_ns.count"): 0,
        ("idle", "requests.count"): 0,
    }


def test_load_sweep_gives_throughput_and_p99_per_policy_and_load() -> None:
    collector = RunCollector(run_id="r", scenario="s", seed=1)
    for index, (load, latency) in enumerate(
        [(1.0, 1_000_000_000), (2.0, 500_000_000), (2.0, 250_000_000)]
    ):
        collector.add_turn(**turn("p", index, 0, sent=0, ttfts=None, latency=latency, load=load))
    points = load_sweep(collector.tables()["turns"])
    assert [(p.load, p.turns, p.turns_per_s, p.latency_p99_ns) for p in points] == [
        (1.0, 1, 1.0, 1_000_000_000),
        (2.0, 2, 4.0, 500_000_000),
    ]


def test_no_sweep_without_two_distinct_loads() -> None:
    assert load_sweep(handmade_tables()["turns"]) == []


def test_summary_table_puts_policies_side_by_side() -> None:
    table = summary_table(summarize(handmade_tables()))
    # The policy under test first, then its baselines, whatever order the rows came in.
    assert [column.header for column in table.columns] == ["metric", "unit", "streaming", "serial"]
    metric_cells = list(table.columns[0].cells)
    row = metric_cells.index("latency_ns.p90")
    assert list(table.columns[1].cells)[row] == "ms"
    assert list(table.columns[2].cells)[row] == "1,999.999"


@pytest.mark.parametrize(
    ("value", "unit", "shown"),
    [(1_500_000.0, "ns", "1.500"), (3.0, "turns", "3"), (600.0, "per 1k requests", "600.000")],
)
def test_values_are_formatted_for_people(value: float, unit: str, shown: str) -> None:
    assert format_value(value, unit) == shown
