"""The agent's own account of a run (Claude Code's stream-json stdout) beside the recording's
calls and results (`toolturn.probe.agent_account`), and where the scorecard shows it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolturn.probe.agent_account import compare_account, read_account
from toolturn.probe.scorecard import account_cell, case_entry, format_scorecard

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "claude-stream-json.jsonl"


def call(tool_use_id: str, result: int | None, is_error: bool | None = None) -> dict[str, Any]:
    return {"tool_use_id": tool_use_id, "result_request_index": result, "is_error": is_error}


def test_the_calls_and_results_the_cli_reported_are_read_and_bad_lines_counted() -> None:
    account = read_account(FIXTURE.read_text(encoding="utf-8"))
    assert account is not None
    assert account.calls == ["toolu_read", "toolu_bash"]
    assert account.results == {"toolu_read": False, "toolu_bash": True}
    assert account.unreadable == 2  # a warning line and a JSON array: counted, not fatal


def test_an_account_that_matches_the_recording_agrees() -> None:
    account = read_account(FIXTURE.read_text(encoding="utf-8"))
    verdict = compare_account(account, [call("toolu_read", 1, False), call("toolu_bash", 1, True)])
    assert verdict is not None and verdict["agrees"] and verdict["differences"] == []
    assert (verdict["calls"], verdict["results"], verdict["unreadable"]) == (2, 2, 2)


def test_each_disagreement_is_named() -> None:
    account = read_account(FIXTURE.read_text(encoding="utf-8"))
    # The server never got the Bash result, got the Read one as an error, and one of its own.
    verdict = compare_account(account, [call("toolu_read", 1, True), call("toolu_bash", None),
                                         call("toolu_other", 2, False)])
    assert verdict is not None and not verdict["agrees"]
    assert verdict["differences"] == [
        "toolu_read: the agent's result is_error=False, the server received is_error=True",
        "toolu_bash: the agent reported a result the server never received",
        "toolu_other: the server received a result the agent did not report",
    ]
    unseen = compare_account(account, [call("toolu_read", 1, False)])
    assert unseen is not None
    assert "toolu_bash: the agent reported a call the server never wrote" in unseen["differences"]


def test_a_stdout_that_is_not_stream_json_is_no_account() -> None:
    assert read_account("Done: the project is a small probe folder.\n") is None
    assert read_account('{"result": "a json output, not a stream"}\n') is None
    assert compare_account(None, [call("toolu_read", 1, False)]) is None


def test_the_scorecard_shows_whether_the_account_agreed() -> None:
    agreeing = {"agrees": True, "differences": []}
    differing = {"agrees": False, "differences": ["toolu_x: the agent reported a result the "
                                                  "server never received"]}
    runs = [{"class": "calls_answered", "exit": 0, "requests": 2, "400s": 0, "lost": 0,
             "retries": 0, "round_trip_ms": 5, "account": account}
            for account in (agreeing, differing, None)]
    assert account_cell(runs) == "1/2" and account_cell(runs[:1]) == "yes"
    assert account_cell(runs[1:2]) == "no" and account_cell(runs[2:]) == "-"
    table = format_scorecard([case_entry("case_a", "checks", runs, "calls_answered")])
    header = [cell.strip() for cell in table.splitlines()[0].split("|")]
    assert header[header.index("agrees") + 1] == "account"
    assert "case_a: the agent's account: toolu_x: the agent reported a result" in table
