"""Paired differences (`toolturn.metrics.paired`), checked against values worked out by hand, and on
a real small run against an independent pandas computation (issue 14, section 2)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.metrics_support import collect, turn
from toolturn.engine.runner import run_scenario
from toolturn.metrics.paired import paired_differences, paired_stats
from toolturn.metrics.summary import summarize
from toolturn.scenario.loader import load_scenario

S, A = "streaming", "at_message_stop"
# (policy, session, turn, ttfts): session 1 turn 0 has no tool under streaming, session 2
# turn 1 exists only under streaming: neither pairs.
TURNS = [
    (S, 0, 0, 100), (S, 0, 1, 200), (S, 1, 0, None), (S, 2, 0, 50), (S, 2, 1, 300),
    (A, 0, 0, 150), (A, 0, 1, 180), (A, 1, 0, 70), (A, 2, 0, 90),
]


def handmade() -> dict:
    rows = [("turns", turn(p, s, t, sent=0, ttfts=v, latency=1000 + (v or 0))) for p, s, t, v in
            TURNS]
    return collect(rows).tables()


def test_pairs_are_the_turns_both_policies_have_with_a_value() -> None:
    pairs = paired_differences(
        handmade()["turns"], "ttfts_ns", dimension="policy", treatment=S, baseline=A
    )
    assert pairs.to_pylist() == [
        # The other arm columns (profile, protocol) are held equal: part of the key.
        {"profile": "default", "protocol": "anthropic", "load_level": 0, "session_id": 0,
         "turn_index": 0, "difference": -50},
        {"profile": "default", "protocol": "anthropic", "load_level": 0, "session_id": 0,
         "turn_index": 1, "difference": 20},
        {"profile": "default", "protocol": "anthropic", "load_level": 0, "session_id": 2,
         "turn_index": 0, "difference": -40},
    ]


def test_statistics_worked_by_hand() -> None:
    stats = paired_stats(np.array([-50, 20, -40]))
    # sorted -50, -40, 20: "higher" median is position ceil(0.5 * 2) = 1, p90 ceil(0.9 * 2) = 2
    assert (stats.pairs, stats.median, stats.p90) == (3, -40, 20)
    assert stats.mean == pytest.approx(-70 / 3)
    assert stats.gained == pytest.approx(2 / 3)
    # n = 3: j = floor((3 - 1.96 sqrt 3) / 2) -> 1 (clipped), k = ceil(1 + (3 + 3.39) / 2) -> 3
    assert stats.median_ci == (-50, 20)
    s = math.sqrt(((-50 + 70 / 3) ** 2 + (20 + 70 / 3) ** 2 + (-40 + 70 / 3) ** 2) / 2)
    half = 1.959963984540054 * s / math.sqrt(3)
    assert stats.mean_ci == pytest.approx((-70 / 3 - half, -70 / 3 + half))


def test_the_median_interval_is_by_order_statistics() -> None:
    # n = 100: j = floor((100 - 19.6) / 2) = 40, k = ceil(1 + 119.6 / 2) = 61 (1-based ranks)
    stats = paired_stats(np.arange(1, 101))
    assert stats.median_ci == (40, 61)


def test_one_pair_has_no_interval_and_none_has_no_statistics() -> None:
    assert paired_stats(np.array([5])).as_dict() == {
        "median": 5, "p90": 5, "mean": 5, "gained": 0.0, "pairs": 1.0
    }
    assert paired_stats(np.array([], dtype=np.int64)).as_dict() == {"pairs": 0.0}


def test_the_summary_has_the_paired_rows_of_the_handmade_run() -> None:
    rows = {
        (row.policy, row.versus, row.metric): row.value
        for row in summarize(handmade())
        if row.versus is not None
    }
    assert rows[S, A, "paired.ttfts_ns.median"] == -40
    assert rows[S, A, "paired.ttfts_ns.pairs"] == 3
    # latency is 1000 + ttfts (1000 for the tool-less turn): 4 pairs, -50, 20, -70, -40
    assert rows[S, A, "paired.latency_ns.pairs"] == 4
    assert rows[S, A, "paired.latency_ns.median"] == -40
    assert rows[S, A, "paired.latency_ns.gained"] == 0.75


def test_on_a_small_run_the_summary_agrees_with_a_pandas_merge() -> None:
    scenario = load_scenario(Path(__file__).parents[1] / "golden" / "closed_faults.toml")
    tables = run_scenario(scenario).tables("paired")
    summary = {
        (row.versus, row.metric): row.value for row in summarize(tables) if row.versus is not None
    }
    turns = tables["turns"].to_pandas()
    turns["policy"] = turns["policy"].astype(str)
    key = ["load_level", "session_id", "turn_index"]
    treatment = turns[turns["policy"] == "streaming"]
    checked = 0
    for versus in sorted(set(turns["policy"]) - {"streaming"}):
        baseline = turns[turns["policy"] == versus]
        for column in ("ttfts_ns", "latency_ns"):
            merged = treatment[[*key, column]].merge(baseline[[*key, column]], on=key).dropna()
            diff = (merged[f"{column}_x"] - merged[f"{column}_y"]).astype("int64")
            prefix = f"paired.{column}."
            assert summary[versus, prefix + "pairs"] == len(diff) > 10
            assert summary[versus, prefix + "median"] == diff.quantile(0.5, interpolation="higher")
            assert summary[versus, prefix + "p90"] == diff.quantile(0.9, interpolation="higher")
            assert summary[versus, prefix + "mean"] == pytest.approx(diff.mean())
            assert summary[versus, prefix + "gained"] == pytest.approx((diff < 0).mean())
            checked += 1
    assert checked == 4
    # What early start buys: tools start sooner in most turns that have one.
    assert summary["at_message_stop", "paired.ttfts_ns.median"] < 0
