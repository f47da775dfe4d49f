"""The log readers of toolturn/traces on real Claude Code logs, request logs, and broken lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolturn.runtime.pairing import check_pairing
from toolturn.traces.sources import read_logs
from toolturn.wire.sse import encode_stream

FIXTURES = Path(__file__).parents[1] / "fixtures" / "traces"
CLAUDE = FIXTURES / "claude-code"
ONE_PROMPT = "7a1c7cb7-28a8-4819-b172-726c5ffdf474"
TWO_PROMPTS = "86330f54-f1a0-439d-b332-7e463d16cd84"


def _sessions():
    logs = read_logs([str(CLAUDE)])
    return logs, {s.session_id: s for s in logs.sessions}


def test_real_claude_code_logs_give_their_steps_calls_and_durations() -> None:
    logs, sessions = _sessions()
    assert len(logs.skipped) == 0
    assert set(sessions) == {ONE_PROMPT, TWO_PROMPTS}
    assert logs.other_lines["attachment"] == 4 and logs.other_lines["queue-operation"] == 6
    one = sessions[ONE_PROMPT]
    assert len(one.prompts_ms) == 1
    # One response per message id, although Claude Code wrote one line per block and the Read
    # result between the Read and Glob blocks of the same message.
    assert [[b["type"] for b in s.blocks] for s in one.steps] == [
        ["text", "tool_use", "tool_use"], ["tool_use"], ["text"]
    ]
    calls = [(c.name, c.duration_ms, c.is_error) for c in one.tool_calls]
    # tool_use line timestamp to tool_result line timestamp, as the file says (ms).
    assert calls == [("Read", 45.0, False), ("Glob", 50.0, False), ("Bash", 610.0, False)]
    assert [s.stop_reason for s in one.steps] == ["tool_use", "tool_use", "end_turn"]
    assert [s.output_tokens for s in one.steps] == [20, 21, 6]
    two = sessions[TWO_PROMPTS]
    assert len(two.prompts_ms) == 2 and two.think_times_ms() == [5440.0]
    assert [s.prompt_index for s in two.steps] == [0, 0, 1, 1]
    read = next(c for c in two.tool_calls if c.name == "Read")
    assert read.is_error and read.result_text and "does not exist" in read.result_text


def test_the_implied_history_is_a_legal_request() -> None:
    _logs, sessions = _sessions()
    step = sessions[ONE_PROMPT].steps[1]
    roles = [m["role"] for m in step.messages]
    assert roles == ["user", "assistant", "user"]
    assert [b["type"] for b in step.messages[1]["content"]] == ["text", "tool_use", "tool_use"]
    assert [b["type"] for b in step.messages[2]["content"]] == ["tool_result", "tool_result"]
    for session in sessions.values():
        for s in session.steps:
            assert check_pairing(s.messages) == []


def _write(tmp_path: Path, name: str, lines: list[object]) -> Path:
    path = tmp_path / name
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    )
    return path


def _user(text: object, ts: str = "2026-01-01T00:00:00Z", **extra: object) -> dict[str, object]:
    return {"type": "user", "sessionId": "s", "timestamp": ts,
            "message": {"role": "user", "content": text}, **extra}


def _assistant(mid: str, block: dict[str, object], ts: str, **extra: object) -> dict[str, object]:
    return {"type": "assistant", "sessionId": "s", "timestamp": ts,
            "message": {"id": mid, "role": "assistant", "content": [block],
                        "stop_reason": "tool_use", "usage": {"output_tokens": 3}}, **extra}


def test_broken_claude_code_lines_are_reported_by_line_and_skipped(tmp_path: Path) -> None:
    path = _write(tmp_path, "s.jsonl", [
        _user("hi"),
        "not json {",
        [1, 2],
        {"sessionId": "s"},
        {"type": "assistant", "message": {"id": "m", "content": "text, not blocks"}},
        _user("x", ts="yesterday"),
        {"type": "user", "message": "not an object"},
        _assistant("m1", {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}},
                   "2026-01-01T00:00:01Z"),
        _user([{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
              ts="2026-01-01T00:00:03.5Z"),
        '{"type": "assistant", "message": {"id": "m2", "cont',  # killed mid-write
    ])
    logs = read_logs([str(path)])
    assert [(s.line, s.reason.split(":")[0]) for s in logs.skipped.lines] == [
        (2, "not JSON"), (3, "not a JSON object"), (4, "no type"), (5, "bad message"),
        (6, "bad timestamp"), (7, "bad message"), (10, "not JSON"),
    ]
    assert all(s.file == str(path) for s in logs.skipped.lines)
    assert logs.skipped.summary().startswith("skipped 7 lines (")
    (session,) = logs.sessions
    assert [(c.name, c.duration_ms) for c in session.tool_calls] == [("Bash", 2500.0)]


def test_sidechains_are_sessions_of_their_own_and_api_errors_are_counted(tmp_path: Path) -> None:
    path = _write(tmp_path, "s.jsonl", [
        _user("main prompt"),
        _user("sub-agent task", isSidechain=True, agentId="a1"),
        _assistant("m9", {"type": "text", "text": "sub answer"}, "2026-01-01T00:00:01Z",
                   isSidechain=True, agentId="a1"),
        {"type": "system", "subtype": "api_error", "sessionId": "s",
         "error": {"type": "error",
                   "error": {"type": "overloaded_error", "message": "Overloaded"}}},
        _assistant("m2", {"type": "text", "text": "API Error: 529"}, "2026-01-01T00:00:09Z",
                   isApiErrorMessage=True),
    ])
    logs = read_logs([str(path)])
    main, sub = sorted(logs.sessions, key=lambda s: s.sidechain)
    assert not main.sidechain and sub.sidechain and sub.session_id == "s/a1"
    assert [s.api_error for s in main.steps] == [
        "retried: overloaded_error: Overloaded", "API Error: 529"
    ]
    assert [b["text"] for b in sub.steps[0].blocks] == ["sub answer"]


def test_request_log_lines_and_their_problems() -> None:
    logs = read_logs([str(FIXTURES / "requests" / "small.jsonl")])
    assert [(s.line, s.reason.split(":")[0]) for s in logs.skipped.lines] == [
        (2, "not JSON"), (4, "not a request"), (6, "bad timestamp")
    ]
    a, plain = logs.sessions
    assert a.session_id == "a" and len(a.steps) == 3
    assert [(c.name, c.duration_ms) for c in a.tool_calls] == [
        ("Bash", 2500.0), ("Read", 250.0), ("Grep", None)
    ]
    # The plain body's response is what the next request of the session holds.
    assert [c.name for c in plain.tool_calls] == ["Glob"]


def test_request_log_responses_from_events_or_raw_sse(tmp_path: Path) -> None:
    events = [
        {"type": "message_start", "message": {"id": "msg_1", "type": "message",
         "role": "assistant", "model": "m", "content": [], "stop_reason": None,
         "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": "{\"file_path\": \"a\"}"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]
    request = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "go"}]}
    path = _write(tmp_path, "r.jsonl", [
        {"session": 1, "request": request, "events": events},
        {"session": 2, "request": request, "sse": encode_stream(events).decode()},
        {"session": 3, "request": request, "events": events[:1] + events[3:]},
    ])
    logs = read_logs([str(path)])
    assert [s.line for s in logs.skipped.lines] == [3]
    assert logs.skipped.lines[0].reason.startswith("bad response: events:")
    for session in logs.sessions:
        (step,) = session.steps
        assert [(c.name, c.input) for c in step.tool_calls] == [("Read", {"file_path": "a"})]
        assert step.output_tokens == 9 and step.stop_reason == "tool_use"


@pytest.mark.parametrize("argument", ["no/such/file.jsonl", "EMPTY_DIR"])
def test_an_argument_naming_no_log_is_a_user_error(tmp_path: Path, argument: str) -> None:
    from toolturn.errors import UserError

    target = str(tmp_path) if argument == "EMPTY_DIR" else argument
    with pytest.raises(UserError):
        read_logs([target])


def test_real_sub_agent_logs_are_sidechain_sessions() -> None:
    # Claude Code wrote each sub-agent's conversation to <session>/subagents/agent-<id>.jsonl
    # (the scripted model made every sub-agent delegate again, five levels deep).
    logs = read_logs([str(FIXTURES / "claude-code-subagents")])
    assert len(logs.skipped) == 0 and len(logs.files) == 6
    main = [s for s in logs.sessions if not s.sidechain]
    subs = [s for s in logs.sessions if s.sidechain]
    assert len(main) == 1 and len(subs) == 5
    assert all(s.session_id.startswith(main[0].session_id + "/a") for s in subs)
    (agent,) = main[0].tool_calls
    assert agent.name == "Agent" and agent.duration_ms is not None
    # The parent's Agent call lasts at least as long as any of its sub-agents' conversations.
    for sub in subs:
        first, last = sub.prompts_ms[0], sub.steps[-1].last_block_ms
        assert first is not None and last is not None and last - first <= agent.duration_ms


def test_real_log_of_retried_requests_and_results_out_of_call_order() -> None:
    # toolturn serve answered three 529s before the first response; Claude Code retried them without
    # a line in the log, so only the first block's delay shows them. It wrote Read's result before
    # Grep's: the history keeps that order, which the API accepts.
    logs = read_logs([str(FIXTURES / "claude-code-retries")])
    (session,) = logs.sessions
    first, second = session.steps
    assert first.first_block_delay_ms == pytest.approx(6094.0)
    results = [b["tool_use_id"] for b in second.messages[-1]["content"]]
    assert results == [first.tool_calls[1].tool_use_id, first.tool_calls[0].tool_use_id]
    assert check_pairing(second.messages) == []
