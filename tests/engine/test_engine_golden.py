"""Golden tests: the summaries of five small seeded scenarios are exact and checked in.

Regenerate (after a change meant to move them) with `.venv/bin/python -m tests.golden.regenerate`.
"""

from __future__ import annotations

import json

import pytest

from tests.golden.regenerate import SCENARIOS, expected_path, golden_summary


@pytest.mark.parametrize("name", SCENARIOS)
def test_summary_matches_the_checked_in_golden_file(name: str) -> None:
    expected = json.loads(expected_path(name).read_text(encoding="utf-8"))
    actual = golden_summary(name)
    def keys(rows: list[dict]) -> list[tuple]:
        return [
            (r["profile"], r["policy"], r["versus"], r["load_level"], r["metric"]) for r in rows
        ]

    assert keys(actual) == keys(expected)
    assert actual == expected


def test_the_golden_scenarios_exercise_what_they_are_for() -> None:
    def metrics(
        name: str, level: int = 0, profile: str = "default"
    ) -> dict[tuple[str, str], float]:
        rows = json.loads(expected_path(name).read_text(encoding="utf-8"))
        return {
            (row["policy"], row["metric"]): row["value"]
            for row in rows
            if row["versus"] is None and row["load_level"] == level
            and row["profile"] == profile
        }

    closed = metrics("closed_faults")
    assert closed["streaming", "turns.outcome.stream_error"] > 0
    assert closed["streaming", "synthetic_per_1k_requests.discarded"] > 0
    # Streaming starts the first tool before the message ends; the baselines never do.
    assert closed["streaming", "ttfts_ns.p50"] < closed["at_message_stop", "ttfts_ns.p50"]
    assert closed["streaming", "start_lag_ns.p50"] == 0
    interrupts = metrics("interrupts")
    assert interrupts["streaming", "turns.outcome.interrupted"] > 0
    assert interrupts["streaming", "synthetic_per_1k_requests.user_interrupt"] > 0
    # The same draws under both profiles: default ends a session at a cut, and discards the
    # calls of an attempt broken by an overloaded `event: error`; claude-code keeps what
    # completed, lets every kept call finish and goes on, an overloaded error after a completed
    # block taken as a cut too (CLI 2.1.337): none of its calls gets a synthetic result.
    default, claude = metrics("claude_code"), metrics("claude_code", profile="claude-code")
    assert default["streaming", "synthetic_per_1k_requests.stream_error"] > 0
    assert default["streaming", "synthetic_per_1k_requests.discarded"] > 0
    assert claude["streaming", "synthetic_per_1k_requests.all"] == 0
    assert claude["streaming", "turns.outcome.stream_error"] > 0
    assert claude["streaming", "turns.outcome.completed"] > default["streaming",
                                                                    "turns.outcome.completed"]
    for arm in (default, claude):
        assert arm["streaming", "repairs_per_1k_requests.all"] == 0
    # Crashes, rewinds and a naive compaction break transcripts, each repaired and counted by
    # its cause, under every policy; the other goldens have no such rows at all.
    resume = metrics("resume_storm")
    for policy in ("streaming", "at_message_stop", "serial"):
        for cause in ("crash", "rewind", "compaction"):
            assert resume[policy, f"repairs_by_cause_per_1k_requests.{cause}"] > 0
        assert resume[policy, "refused_without_repair_per_1k_requests"] > 0
        assert resume[policy, "calls_lost_per_1k_requests"] > 0
    assert not any(metric.startswith("repairs_by_cause") for _, metric in closed)
    # The sweep's busier level (2 sessions/s against 3 streams) has requests that failed for good.
    sweep = metrics("open_sweep", level=1)
    assert sweep["streaming", "turns.outcome.request_failed"] > 0
