"""Issue 31, section 2: time to first token leaves out the client's own waits. Without request
lines, a request after retried attempts is timed from the last attempt's line plus the wait it
announces (`retryInMs`), not from the prompt: the failed attempts and the backoff are no part of
it. On the real retries log (Claude Code 2.1.197, which writes no retry line: 6,094 ms) with the
retry lines 2.1.332 writes put in, and on the real 2.1.332 log of eleven attempts with its
request lines taken out."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from toolturn.traces.calibrate import calibrated_scenario
from toolturn.traces.sources import read_logs
from toolturn.traces.stats import trace_stats
from toolturn.traces.timestamps import epoch_ms

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
RETRIES = (TRACES / "claude-code-retries" / "-tmp-cc-work"
           / "02badb51-5482-477a-b892-f9adedf758da.jsonl")
REFUSED = TRACES / "claude-code-2.1.332" / "f95b3766-95fa-471c-aac1-2caf857d067b.jsonl"


def _retry_line(at: str, wait_ms: int, attempt: int, session: str) -> dict[str, object]:
    return {"type": "system", "subtype": "api_error", "level": "error",
            "error": {"status": 529, "error": {"type": "overloaded_error",
                                               "message": "Overloaded"}},
            "retryInMs": wait_ms, "retryAttempt": attempt, "maxRetries": 10,
            "timestamp": at, "sessionId": session, "isSidechain": False}


def _with_retry_lines(tmp_path: Path) -> Path:
    """The retries log with three 529 attempts' lines after its prompt (sent 15:55:23.838)."""
    lines = [json.loads(raw) for raw in RETRIES.read_text().splitlines()]
    session = lines[0]["sessionId"]
    prompt = next(i for i, line in enumerate(lines) if line["type"] == "user")
    retries = [_retry_line("2026-12-01T15:55:24.100Z", 500, 1, session),
               _retry_line("2026-12-01T15:55:24.900Z", 1100, 2, session),
               _retry_line("2026-12-01T15:55:26.300Z", 2400, 3, session)]
    path = tmp_path / "retried.jsonl"
    out = [*lines[:prompt + 1], *retries, *lines[prompt + 1:]]
    path.write_text("".join(json.dumps(line) + "\n" for line in out))
    return path


def test_without_retry_lines_the_wait_cannot_be_told_apart() -> None:
    (session,) = read_logs([str(RETRIES)]).sessions
    assert session.steps[0].first_block_delay_ms == pytest.approx(6094.0)


def test_the_logged_retry_waits_leave_the_first_token_time(tmp_path: Path) -> None:
    logs = read_logs([str(_with_retry_lines(tmp_path))])
    (session,) = logs.sessions
    failed = [step for step in session.steps if step.api_error]
    answered = [step for step in session.steps if step.has_response]
    # Each attempt is sent when the one before said it would retry.
    assert [step.sent_ms for step in failed] == [
        epoch_ms("2026-12-01T15:55:23.838Z"), epoch_ms("2026-12-01T15:55:24.600Z"),
        epoch_ms("2026-12-01T15:55:26.000Z")]
    # The answered attempt was sent at 26.300 + 2.400 s; its first block at 29.932.
    assert answered[0].first_block_delay_ms == pytest.approx(1232.0)
    assert trace_stats(logs)["first_block_delay_ms"]["max"] < 6094.0
    text = calibrated_scenario(logs, "retried", 1)
    assert max(tomllib.loads(text)["model"]["latency"]["ttft"]["values_ms"]) < 6094.0


def test_each_attempt_without_request_lines_is_sent_after_the_wait(tmp_path: Path) -> None:
    lines = [json.loads(raw) for raw in REFUSED.read_text().splitlines()]
    path = tmp_path / "older.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines
                            if line["type"] != "api-request"))
    (session,) = read_logs([str(path)]).sessions
    retries = [line for line in lines if line.get("subtype") == "api_error"]
    expected = [epoch_ms(line["timestamp"]) + line["retryInMs"] for line in retries]
    # The first attempt follows the prompt; each later one its predecessor's announced wait.
    assert [step.sent_ms for step in session.steps[1:]] == pytest.approx(expected)
