"""The summary's session-fault rows (toolturn.metrics.session_faults) on hand-made tables: exact
values, absent from a run without session faults, and the report's repairs-by-cause panel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers.metrics_support import (
    collect,
    handmade_rows,
    metadata,
    repair,
    request,
    session,
    turn,
)
from toolturn.metrics import read_run, write_run
from toolturn.metrics.summary import summarize
from toolturn.report.writer import write_report

S = "streaming"


def faulty_rows() -> list[tuple[str, dict[str, Any]]]:
    """Session 0 crashes in turn 1 (its end at 1,000 ns) and resumes with turn 2 sent at 4,000 ns
    (two results repaired in request 2, two calls lost); session 1 compacted once, one leading
    orphan removed in its request 1; ten requests in all."""
    rows: list[tuple[str, dict[str, Any]]] = [
        ("turns", turn(S, 0, 1, sent=0, ttfts=None, latency=1_000, outcome="crash")),
        ("turns", turn(S, 0, 2, sent=4_000, ttfts=None, latency=500)),
        ("turns", turn(S, 1, 1, sent=0, ttfts=None, latency=700)),
    ]
    rows += [("requests", request(S, 0, 1, sent=i)) for i in range(10)]
    for tool_id in ("toolu_1", "toolu_2"):
        row = repair(S, 0, 2, "missing_result_inserted", tool_id)
        rows.append(("repairs", {**row, "request_index": 2, "cause": "crash"}))
    orphan = repair(S, 1, 1, "leading_orphan_removed", "toolu_9")
    rows.append(("repairs", {**orphan, "request_index": 1, "cause": "compaction"}))
    rows.append(("sessions", {**session(S, 0, 2), "n_calls_lost": 2}))
    rows.append(("sessions", {**session(S, 1, 1), "n_compactions": 1}))
    return rows


def values(rows: list[tuple[str, dict[str, Any]]]) -> dict[str, float]:
    return {row.metric: row.value for row in summarize(collect(rows).tables())
            if row.policy == S and row.versus is None}


def test_the_session_fault_rows_are_exact() -> None:
    got = values(faulty_rows())
    assert {metric: value for metric, value in got.items() if metric in EXPECTED} == EXPECTED
    assert "crash_to_request_ns.p50" in got


EXPECTED = {
    "repairs_by_cause_per_1k_requests.crash": 200.0,
    "repairs_by_cause_per_1k_requests.rewind": 0.0,
    "repairs_by_cause_per_1k_requests.compaction": 100.0,
    "refused_without_repair_per_1k_requests": 200.0,  # two requests had repairs
    "calls_lost_per_1k_requests": 200.0,
    "compactions.count": 1.0,
    "sessions.broken_transcript": 0.0,
    "crash_to_request_ns.mean": 3_000.0,
    "crash_to_request_ns.count": 1.0,
}


def test_a_run_without_session_faults_has_none_of_these_rows() -> None:
    got = values(handmade_rows())
    assert not set(got) & set(EXPECTED)


def test_the_report_shows_repairs_by_cause(tmp_path: Path) -> None:
    write_run(tmp_path / "run", collect(faulty_rows()).tables(), metadata())
    page = write_report(read_run(tmp_path / "run")).read_text()
    assert "repairs by cause" in page
    assert "repairs caused by crash" in page
