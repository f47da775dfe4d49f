"""Interrupt and recovery paths of the tool-turn loop. Each test shows the transcript after,
which must pass the API's pairing rules with zero boundary repairs."""

from __future__ import annotations

import pytest

from tests.helpers.loop_tools import TOOLS, legal
from tests.helpers.runtime_script import (
    PROMPT,
    READ_A,
    error_event,
    feed,
    message_end,
    message_start,
    of_type,
    text_block,
    text_response,
    tool_use_block,
)
from toolturn.runtime.commands import (
    CancelRequest,
    CancelTool,
    DiscardedResult,
    ResultReady,
    SendRequest,
    SessionEnded,
    StartTool,
    TurnEnded,
    WaitUntil,
)
from toolturn.runtime.loop import INTERRUPT_TEXT, ToolTurnLoop
from toolturn.runtime.outcomes import SyntheticCause
from toolturn.runtime.record import Fallback, Repaired, Retry, Tombstone
from toolturn.runtime.repair import PairingError, RepairKind, check_pairing
from toolturn.runtime.retry import RetrySettings


def started_loop(**settings: object) -> ToolTurnLoop:
    loop = ToolTurnLoop(TOOLS, model="model-a", **settings)  # type: ignore[arg-type]
    loop.start("go", 0)
    return loop


def partial_stream() -> list[dict[str, object]]:
    """Text, a complete Read call, and a Read call whose JSON never finished."""
    return [
        message_start("msg_1"),
        *text_block(0, "Reading."),
        *tool_use_block(1, "a", "Read", {"path": "/a"}),
        *tool_use_block(2, "b", "Read", {"path": "/b"}, stop=False),
    ]


@pytest.mark.parametrize("how", ["cut", "api_error"])
def test_stream_broken_after_some_blocks_keeps_them_and_answers_every_call(how: str) -> None:
    loop = started_loop()
    out = feed(loop, partial_stream(), 100)
    assert [c.tool_use_id for c in of_type(StartTool, out)] == ["a"]
    out2 = (loop.stream_ended(900) if how == "cut"
            else loop.on_event(error_event("api_error", "Internal"), 900))
    assert of_type(CancelTool, out2) == [CancelTool("a", SyntheticCause.STREAM_ERROR)]
    assert of_type(TurnEnded, out2) == [TurnEnded(1, "stream_error", 1)]
    assert of_type(SessionEnded, out2) == [SessionEnded("stream_error")]
    [result] = [c.result for c in of_type(ResultReady, out2)]
    assert loop.messages == [
        PROMPT,
        {"role": "assistant", "content": [{"type": "text", "text": "Reading."}, READ_A]},
        {"role": "user", "content": [result]},
    ]
    assert result["is_error"] and "stream broke off" in result["content"]
    legal(loop)
    # The late report of the cancelled tool changes nothing; the session can go on.
    assert loop.tool_finished("a", "cancelled", "", 950) == []
    [send] = loop.start("try again", 1_000)
    assert send.request_body["messages"][-1]["content"][-1] == {"type": "text", "text": "try again"}
    legal(loop)


def test_stream_broken_after_text_only_keeps_the_text() -> None:
    loop = started_loop()
    feed(loop, [message_start("msg_1"), *text_block(0, "Half an ans")], 100)
    out = loop.stream_ended(500)
    assert of_type(SessionEnded, out) == [SessionEnded("stream_error")]
    assert loop.messages == [
        PROMPT, {"role": "assistant", "content": [{"type": "text", "text": "Half an ans"}]},
    ]
    legal(loop)


def test_user_interrupt_while_streaming() -> None:
    loop = started_loop()
    events = [
        message_start("msg_1"),
        *tool_use_block(0, "a", "Read", {"path": "/a"}),
        *tool_use_block(1, "t", "Task", {}),
        *tool_use_block(2, "b", "Read", {"path": "/b"}, stop=False),
    ]
    feed(loop, events, 100)
    out = loop.interrupt(500)
    assert of_type(CancelRequest, out) == [CancelRequest("user interrupt")]
    # "a" is cancellable and cancelled; "t" (Task) is not cancellable and is left to finish.
    assert of_type(CancelTool, out) == [CancelTool("a", SyntheticCause.USER_INTERRUPT)]
    assert of_type(SessionEnded, out) == []
    assert loop.on_event({"type": "message_stop"}, 510) == []  # late events are ignored
    out = loop.tool_finished("t", "success", "subtask done", 800)
    assert of_type(SessionEnded, out) == [SessionEnded("interrupted")]
    assert loop.messages == [
        PROMPT,
        {"role": "assistant", "content": [
            READ_A, {"type": "tool_use", "id": "t", "name": "Task", "input": {}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "a", "is_error": True,
             "content": "Error: tool 'Read' was cancelled: the user interrupted the turn."},
            {"type": "tool_result", "tool_use_id": "t", "content": "subtask done"},
            {"type": "text", "text": INTERRUPT_TEXT},
        ]},
    ]
    legal(loop)


def test_user_interrupt_while_tools_run() -> None:
    loop = started_loop()
    events = [message_start("msg_1"), *tool_use_block(0, "e", "Edit", {}),
              *tool_use_block(1, "a", "Read", {"path": "/a"}), *message_end("tool_use")]
    feed(loop, events, 100)
    out = loop.interrupt(700)
    assert of_type(CancelRequest, out) == []
    assert of_type(CancelTool, out) == [CancelTool("e", SyntheticCause.USER_INTERRUPT)]
    assert of_type(SessionEnded, out) == [SessionEnded("interrupted")]
    assert [b.get("tool_use_id") for b in loop.messages[-1]["content"]] == ["e", "a", None]
    assert loop.messages[-1]["content"][-1] == {"type": "text", "text": INTERRUPT_TEXT}
    legal(loop)


def test_user_interrupt_before_any_event_marks_the_prompt() -> None:
    loop = started_loop()
    out = loop.interrupt(50)
    assert out == [CancelRequest("user interrupt"), SessionEnded("interrupted")]
    assert loop.messages == [{"role": "user", "content": [
        {"type": "text", "text": "go"}, {"type": "text", "text": INTERRUPT_TEXT}]}]
    loop.start("go on", 100)
    assert len(loop.messages) == 1
    legal(loop)
    assert loop.interrupt(200) != [] and loop.interrupt(300) == []  # idle: nothing to interrupt


def test_retries_with_backoff_for_429_and_529_then_give_up() -> None:
    loop = started_loop(retry=RetrySettings(jitter=lambda retry: 0.125))
    assert loop.request_failed(429, 1_000) == [WaitUntil(1_000 + 437_500_000)]
    assert loop.wake(1_000) == [WaitUntil(1_000 + 437_500_000)]  # too early: keep waiting
    [send] = loop.wake(437_501_000)
    assert isinstance(send, SendRequest) and send.attempt == 2
    # retry-after wins over the backoff.
    assert loop.request_failed(529, 500_000_000, retry_after_ns=3_000_000_000) == [
        WaitUntil(3_500_000_000)]
    [send] = loop.wake(3_500_000_000)
    assert send.attempt == 3
    assert loop.request_failed(429, 4_000_000_000) == [SessionEnded("request_failed")]
    assert [e.delay_ns for e in loop.record.of_kind(Retry)] == [437_500_000, 3_000_000_000]
    assert loop.messages == [PROMPT]
    legal(loop)


def test_a_client_error_is_not_retried_and_a_connection_failure_is() -> None:
    loop = started_loop()
    assert loop.request_failed(400, 10) == [SessionEnded("request_failed")]
    loop = started_loop()
    assert loop.stream_ended(10) == [WaitUntil(10 + 500_000_000)]  # closed before any event


def test_backoff_doubles_up_to_the_cap() -> None:
    settings = RetrySettings()
    assert [settings.delay_ns(n) for n in (1, 2, 3, 5, 9)] == [
        500_000_000, 1_000_000_000, 2_000_000_000, 8_000_000_000, 8_000_000_000]


def test_fallback_after_overloaded_errors_before_any_event() -> None:
    loop = started_loop(fallback_model="model-b", fallback_after=3)
    assert of_type(WaitUntil, loop.request_failed(529, 10))
    loop.wake(600_000_000)
    assert of_type(WaitUntil, loop.request_failed(529, 700_000_000))
    loop.wake(2_000_000_000)
    [send] = loop.request_failed(529, 2_100_000_000)
    assert (send.model, send.request_body["model"], send.attempt) == ("model-b", "model-b", 4)
    assert [e.model for e in loop.record.of_kind(Fallback)] == ["model-b"]
    feed(loop, text_response("msg_1", "Fine."), 2_200_000_000)
    assert loop.messages[-1]["content"] == [{"type": "text", "text": "Fine."}]
    legal(loop)


def test_fallback_mid_stream_tombstones_the_attempt_and_ends_its_calls() -> None:
    loop = started_loop(fallback_model="model-b", fallback_after=1)
    out = feed(loop, partial_stream(), 100)
    assert of_type(StartTool, out) == [StartTool("a", "Read", {"path": "/a"})]
    out = loop.on_event(error_event("overloaded_error"), 900)
    assert of_type(CancelTool, out) == [CancelTool("a", SyntheticCause.FALLBACK)]
    assert [c.synthetic_cause for c in of_type(DiscardedResult, out)] == [SyntheticCause.FALLBACK]
    assert of_type(ResultReady, out) == []
    [send] = of_type(SendRequest, out)
    assert send.model == "model-b"
    # The discarded attempt never reached the transcript.
    assert send.request_body["messages"] == [PROMPT]
    assert loop.wasted_executions == 1
    assert [(e.block_type, e.block_index) for e in loop.record.of_kind(Tombstone)] == [
        ("text", 0), ("tool_use", 1)]
    assert loop.tool_finished("a", "cancelled", "", 950) == []
    # The fallback model reuses nothing of the attempt and the turn completes normally.
    events = [message_start("msg_2", "model-b"), *tool_use_block(0, "c", "Read", {"path": "/a"}),
              *message_end("tool_use")]
    feed(loop, events, 1_000)
    out = loop.tool_finished("c", "success", "A", 2_000)
    assert len(of_type(SendRequest, out)) == 1
    assert loop.messages[1:] == [
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "c", "name": "Read", "input": {"path": "/a"}},
        ]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "content": "A"}]},
    ]
    legal(loop)


def test_an_overloaded_error_mid_stream_is_retried_on_the_same_model() -> None:
    loop = started_loop()
    feed(loop, partial_stream(), 100)
    out = loop.on_event(error_event("overloaded_error"), 900)
    assert of_type(CancelTool, out) == [CancelTool("a", SyntheticCause.DISCARDED)]
    [wait] = of_type(WaitUntil, out)
    [send] = loop.wake(wait.time_ns)
    assert (send.model, send.attempt, send.request_body["messages"]) == ("model-a", 2, [PROMPT])


def test_an_overloaded_error_mid_stream_without_retries_left_is_a_stream_error() -> None:
    loop = started_loop(retry=RetrySettings(max_retries=0))
    feed(loop, partial_stream(), 100)
    out = loop.on_event(error_event("overloaded_error"), 900)
    assert of_type(SessionEnded, out) == [SessionEnded("stream_error")]
    assert loop.messages[1]["content"][1] == READ_A
    legal(loop)


def test_max_tokens_with_an_unclosed_tool_use_drops_it() -> None:
    loop = started_loop()
    events = [message_start("msg_1"), *tool_use_block(0, "a", "Read", {"path": "/a"}),
              *tool_use_block(1, "b", "Read", {"path": "/b"}, stop=False),
              *message_end("max_tokens")]
    feed(loop, events, 100)
    out = loop.tool_finished("a", "success", "A", 900)
    assert of_type(TurnEnded, out) == [TurnEnded(1, "max_tokens", 1)]
    assert len(of_type(SendRequest, out)) == 1
    assert loop.messages[1] == {"role": "assistant", "content": [READ_A]}
    legal(loop)


@pytest.mark.parametrize("stop_reason", ["max_tokens", "tool_use"])
def test_tool_json_cut_off_or_invalid_becomes_an_error_result(stop_reason: str) -> None:
    loop = started_loop()
    events = [message_start("msg_1"), *tool_use_block(0, "a", "Read", '{"path": "/a'),
              *message_end(stop_reason)]
    out = feed(loop, events, 100)
    assert of_type(StartTool, out) == []
    [result] = [c.result for c in of_type(ResultReady, out)]
    assert result["is_error"] and "not valid JSON" in result["content"]
    assert loop.messages[1] == {"role": "assistant", "content": [
        {"type": "tool_use", "id": "a", "name": "Read", "input": {}},
    ]}
    assert len(of_type(SendRequest, out)) == 1
    legal(loop)


def test_a_stream_that_breaks_the_protocol_is_a_stream_error() -> None:
    loop = started_loop()
    events = [message_start("msg_1"), *tool_use_block(0, "a", "Read", {"path": "/a"}),
              {"type": "content_block_delta", "index": 7,
               "delta": {"type": "text_delta", "text": "?"}}]
    out = feed(loop, events, 100)
    assert of_type(SessionEnded, out) == [SessionEnded("stream_error")]
    legal(loop)


ORPHANED = [
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "gone", "content": "x"},
                                 {"type": "text", "text": "where were we"}]},
]


def test_strict_mode_raises_instead_of_repairing() -> None:
    loop = ToolTurnLoop(TOOLS, model="m", strict=True, messages=ORPHANED)
    with pytest.raises(PairingError):
        loop.start("continue", 0)


def test_repairs_at_the_boundary_are_recorded_and_kept() -> None:
    loop = ToolTurnLoop(TOOLS, model="m", messages=ORPHANED)
    [send] = loop.start("continue", 0)
    assert [r.kind for r in loop.repairs] == [RepairKind.LEADING_ORPHAN_REMOVED]
    assert [e.repair for e in loop.record.of_kind(Repaired)] == ["leading_orphan_removed"]
    assert check_pairing(send.request_body["messages"]) == []
    feed(loop, text_response("msg_1", "Hi."), 100)
    loop.start("more", 1_000)
    assert len(loop.repairs) == 1  # the repaired transcript is kept: nothing to repair twice
