"""Summary numbers checked against the hand-worked values of the hand-made run."""

from __future__ import annotations

import pytest
from rich.console import Console

from tests.helpers.metrics_support import collect, handmade_rows, handmade_tables, turn
from toolturn.metrics import RunCollector, summarize
from toolturn.metrics.display import RowFormat, metric_label
from toolturn.metrics.summary import SummaryRow, load_sweep, summary_from_arrow, summary_to_arrow
from toolturn.metrics.summary_table import print_summary, summary_table


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
    speeds = {("default", "serial", 0, "anthropic"): 250_000.0}
    rows = summarize(handmade_tables(), events_per_wall_s=speeds)
    speed = [row for row in rows if row.metric == "harness.events_per_wall_s"]
    assert speed == [SummaryRow("serial", "harness.events_per_wall_s", 250_000.0, "events/s", True)]
    assert not any(row.wall_clock for row in rows if row not in speed)


def test_paired_rows_lead_then_policies_sorted_in_a_fixed_metric_order() -> None:
    rows = summarize(handmade_tables())
    assert (rows[0].policy, rows[0].versus, rows[0].metric) == (
        "streaming", "serial", "paired.ttfts_ns.median"
    )
    plain = [row for row in rows if row.versus is None]
    assert list(dict.fromkeys(row.policy for row in plain)) == ["serial", "streaming"]
    assert plain[0].metric == "ttfts_ns.p50"


def test_summary_round_trips_through_arrow() -> None:
    speeds = {("default", "serial", 0, "anthropic"): 1.0}
    rows = summarize(handmade_tables(), events_per_wall_s=speeds)
    assert summary_from_arrow(summary_to_arrow(rows)) == rows


def test_an_empty_policy_has_counts_but_no_percentiles_or_rates() -> None:
    collector = RunCollector(run_id="r", scenario="s", seed=1)
    collector.add("sessions", dict(
        policy="idle",
        profile="default",
        protocol="anthropic",
        load_level=0,
        session_id=0,
        arrival_ns=0,
        n_turns=0,
        outcome="completed",
        n_interrupts=0,
        n_compactions=0,
        n_calls_lost=0,
    ))
    values = by_key(summarize(collector.tables()))
    assert values == {
        ("idle", "ttfts_ns.count"): 0,
        ("idle", "latency_ns.count"): 0,
        ("idle", "start_lag_ns.count"): 0,
        ("idle", "requests.count"): 0,
    }


def test_load_sweep_gives_throughput_and_p99_per_policy_and_load() -> None:
    collector = RunCollector(run_id="r", scenario="s", seed=1)
    for index, (level, load, latency) in enumerate(
        [(0, 1.0, 1_000_000_000), (1, 2.0, 500_000_000), (1, 2.0, 250_000_000)]
    ):
        collector.add("turns", turn("p", index, 0, 0, None, latency, load=load, load_level=level))
    points = load_sweep(collector.tables()["turns"])
    assert [(p.load_level, p.load, p.turns, p.turns_per_s, p.latency_p99_ns) for p in points] == [
        (0, 1.0, 1, 1.0, 1_000_000_000),
        (1, 2.0, 2, 4.0, 500_000_000),
    ]


def test_no_sweep_without_two_distinct_loads() -> None:
    assert load_sweep(handmade_tables()["turns"]) == []


def test_summary_table_puts_policies_side_by_side_with_readable_names() -> None:
    table = summary_table(summarize(handmade_tables()))
    # The policy under test first, then its baselines, whatever order the rows came in.
    assert [column.header for column in table.columns] == ["metric", "unit", "streaming", "serial"]
    metric_cells = list(table.columns[0].cells)
    row = metric_cells.index("turn latency p90")
    # 2.0 s and 1.0 s: shown in seconds to three significant digits, not 1,999.999 ms.
    assert list(table.columns[1].cells)[row] == "s"
    assert list(table.columns[2].cells)[row] == "2.00"
    assert list(table.columns[3].cells)[row] == "1.00"
    row = metric_cells.index("TTFTS p50")
    assert list(table.columns[1].cells)[row] == "ns"
    assert "paired" not in " ".join(metric_cells)


@pytest.mark.parametrize(
    ("values", "unit", "shown", "shown_unit"),
    [
        ([1_500_000.0], "ns", ["1.50"], "ms"),
        ([438_123_456.0, 8_000_000.0], "ns", ["438", "8"], "ms"),
        ([12_345_678_901.0, 0.0], "ns", ["12.3", "0.0"], "s"),
        ([0.0], "ns", ["0"], "ms"),
        ([3.0], "turns", ["3"], "turns"),
        ([600.0, 5.5], "per 1k requests", ["600", "6"], "/1k req"),
        ([0.597], "share", ["59.7"], "%"),
    ],
)
def test_a_row_shares_one_unit_at_three_significant_digits(
    values: list[float], unit: str, shown: list[str], shown_unit: str
) -> None:
    row = RowFormat(unit, values)
    assert ([row(value) for value in values], row.shown_unit) == (shown, shown_unit)


def test_metric_labels_are_what_people_say() -> None:
    assert [
        metric_label(metric)
        for metric in (
            "ttfts_ns.p50",
            "latency_ns.p99",
            "status_per_1k_requests.529",
            "paired.ttfts_ns.median",
            "repairs_per_1k_requests.all",
        )
    ] == ["TTFTS p50", "turn latency p99", "HTTP 529", "TTFTS Δ median", "repairs: all"]


def test_the_printed_summary_fits_100_columns_and_leads_with_the_paired_headline() -> None:
    console = Console(width=100, record=True, color_system=None)
    print_summary(summarize(handmade_tables()), console=console, title="handmade")
    lines = console.export_text().splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 100
    assert lines[0].startswith("streaming vs serial, median per turn: TTFTS -40 ns (100% of")
    text = "\n".join(lines)
    assert text.index("paired per turn") < text.index("TTFTS p50")
    narrow = Console(width=60, record=True, color_system=None)
    print_summary(summarize(handmade_tables()), console=narrow, title="handmade")
    narrow_text = narrow.export_text()
    assert max(len(line.rstrip()) for line in narrow_text.splitlines()) <= 60
    assert "…" not in narrow_text.replace(" … ", "")


def _two_profiles() -> list[SummaryRow]:
    """The hand-made run under `default`, and again under `claude-code` with every streaming
    turn 7 ns slower (serial's the same)."""
    rows = handmade_rows()
    for name, row in list(rows):
        other = {**row, "profile": "claude-code"}
        if name == "turns" and row["policy"] == "streaming":
            other["latency_ns"] += 7
        rows.append((name, other))
    return summarize(collect(rows).tables())


def test_paired_rows_compare_policies_within_each_profile_and_profiles_within_a_policy() -> None:
    rows = _two_profiles()
    paired = {(r.profile, r.policy, r.versus, r.metric): r.value for r in rows if r.versus}
    # Policies within each profile: streaming minus serial, per profile (claude-code's 7 ns more).
    default = paired["default", "streaming", "serial", "paired.latency_ns.median"]
    claude = paired["claude-code", "streaming", "serial", "paired.latency_ns.median"]
    assert claude == default + 7
    assert paired["default", "streaming", "serial", "paired.latency_ns.pairs"] == 1
    # Profiles within each policy: claude-code minus default.
    assert paired["claude-code", "streaming", "default", "paired_profile.latency_ns.median"] == 7
    assert paired["claude-code", "streaming", "default", "paired_profile.latency_ns.pairs"] == 4
    assert paired["claude-code", "serial", "default", "paired_profile.latency_ns.median"] == 0
    assert not any(key[0] == "default" and key[3].startswith("paired_profile.") for key in paired)
    # Every plain row names its arm; the two profiles' serial counts are the same.
    plain = {(r.profile, r.policy, r.metric): r.value for r in rows if r.versus is None}
    assert plain["claude-code", "serial", "requests.count"] == plain[
        "default", "serial", "requests.count"
    ]
    assert summary_from_arrow(summary_to_arrow(rows)) == rows


def test_the_terminal_summary_shows_every_arm_and_each_profile_s_headline() -> None:
    console = Console(width=200, record=True)
    print_summary(_two_profiles(), console=console)
    text = console.export_text()
    assert "streaming [claude-code]" in text and "serial [claude-code]" in text
    # The headline is the default profile's; a paired table per profile's policies, then one
    # per arm against the default profile (titles wrap at the table's width).
    assert text.index("streaming vs serial") < text.index("paired per turn")
    titles = [line.strip() for line in text.splitlines() if line.startswith("paired per turn")]
    assert titles == [
        "paired per turn: streaming minus baseline",
        "paired per turn: streaming [claude-code] minus",
        "paired per turn: streaming [claude-code] minus",
        "paired per turn: serial [claude-code] minus",
    ]
    assert text.count("vs default") == 4
