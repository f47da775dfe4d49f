"""Issue 31, section 2: the log's own request lines (Claude Code 2.1.332's `api-request`, one per
request sent, attempts included) time the requests instead of counting as other lines. On real
2.1.332 logs (tests/fixtures/traces/claude-code-2.1.332, README there)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolturn.traces.sources import read_logs
from toolturn.traces.stats import trace_stats
from toolturn.traces.timestamps import epoch_ms

LOGS = Path(__file__).parents[1] / "fixtures" / "traces" / "claude-code-2.1.332"
ANSWERED = LOGS / "2eb4825b-8209-4831-9c21-1cb1f76554d5.jsonl"
REFUSED = LOGS / "f95b3766-95fa-471c-aac1-2caf857d067b.jsonl"


def _request_line_times(path: Path) -> list[float]:
    lines = [json.loads(raw) for raw in path.read_text().splitlines()]
    return [epoch_ms(line["timestamp"]) for line in lines if line["type"] == "api-request"]


def test_request_lines_time_the_responses_they_name() -> None:
    logs = read_logs([str(ANSWERED)])
    (session,) = logs.sessions
    sent = _request_line_times(ANSWERED)
    assert [step.sent_ms for step in session.steps] == sent
    assert all(step.sent_logged for step in session.steps)
    # 220 and 222 ms from request line to first block; the line before each request (the
    # prompt, the last tool result) would have said 288 and 285.
    assert [step.first_block_delay_ms for step in session.steps] == [220.0, 222.0]
    figures = trace_stats(logs)
    assert figures["request_lines"] == 2 and figures["requests_timed_by_request_line"] == 2
    assert "api-request" not in figures["other_lines_by_type"]
    assert figures["requests"] == 2


def test_each_failed_attempt_is_timed_by_its_own_request_line() -> None:
    logs = read_logs([str(REFUSED)])
    (session,) = logs.sessions
    assert [step.sent_ms for step in session.steps] == _request_line_times(REFUSED)
    assert all(step.api_error for step in session.steps)
    figures = trace_stats(logs)
    assert figures["requests"] == 11 and figures["request_lines"] == 11
    # The synthetic line's kind is the one 2.1.332 names in `apiError`.
    assert figures["api_errors_by_kind"] == {"retried": 10, "connection_failed": 1}


def test_a_log_without_request_lines_times_requests_by_the_line_before(tmp_path: Path) -> None:
    text = ANSWERED.read_text().splitlines()
    path = tmp_path / "older.jsonl"
    path.write_text("\n".join(raw for raw in text if '"type":"api-request"' not in raw) + "\n")
    (session,) = read_logs([str(path)]).sessions
    assert not any(step.sent_logged for step in session.steps)
    assert [step.first_block_delay_ms for step in session.steps] == pytest.approx([288.0, 285.0])


def test_a_request_line_without_an_id_is_skipped_and_named(tmp_path: Path) -> None:
    lines = [json.loads(raw) for raw in ANSWERED.read_text().splitlines()]
    first = next(line for line in lines if line["type"] == "api-request")
    del first["id"]
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    logs = read_logs([str(path)])
    assert logs.skipped.by_reason() == {"bad api-request line": 1}
    figures = trace_stats(logs)
    assert figures["request_lines"] == 1 and figures["requests_timed_by_request_line"] == 1
