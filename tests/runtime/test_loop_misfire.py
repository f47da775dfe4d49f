"""Loop rule 17 and executor rule 14: a call started speculatively (its block's stop fed when its
arguments first parsed) whose arguments then go on is withdrawn and added again at its real stop.

The streams are scripted as a Chat Completions runtime under `chat_start = "at_parsed_json"`
feeds the loop (`toolturn.runtime.protocol_timing.retimed`): the block's stop right after the
delta that made its arguments parse, `arguments_changed` at the delta that changed them, the
deltas after, then the block's stop again at its real completion.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tests.helpers.loop_tools import TOOLS, legal
from tests.helpers.runtime_script import (
    message_end,
    message_start,
    of_type,
    text_block,
    text_response,
)
from toolturn.runtime.commands import (
    AskPermission,
    CancelTool,
    DiscardedResult,
    ResultReady,
    SendRequest,
    StartTool,
    TurnEnded,
)
from toolturn.runtime.executor import CallState, ToolExecutor
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.outcomes import CallOutcome, SyntheticCause
from toolturn.runtime.permission import PermissionDecision
from toolturn.runtime.record import CallRetracted, WastedExecution
from toolturn.runtime.recovery import DEFAULT, DuplicateIds, ResultOrder

Event = dict[str, Any]
# The text of the misfiring call: a complete object, then a second one (a model fault).
FIRST, SECOND = '{"path": "/a"}', '{"path": "/b"}'


def _start(index: int, tool_use_id: str, name: str = "Read") -> Event:
    return {"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": tool_use_id, "name": name, "input": {}}}


def _delta(index: int, piece: str) -> Event:
    return {"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": piece}}


def _stop(index: int) -> Event:
    return {"type": "content_block_stop", "index": index}


def _head() -> list[Event]:
    """The response up to the misfiring call's speculative stop (block 1, `t1`)."""
    return [message_start("msg_1"), *text_block(0, "Looking."), _start(1, "t1"),
            _delta(1, FIRST[:6]), _delta(1, FIRST[6:]), _stop(1)]


def _tail(later_call: bool = False) -> list[Event]:
    """The deltas after the change, the real stop, then (optionally) a valid call `t2`."""
    events = [_delta(1, SECOND[:5]), _delta(1, SECOND[5:]), _stop(1)]
    if later_call:
        events += [_start(2, "t2"), _delta(2, '{"path": "/c"}'), _stop(2)]
    return events + message_end("tool_use")


def _feed(loop: ToolTurnLoop, events: list[Event], now: int) -> list[Any]:
    out: list[Any] = []
    for event in events:
        out += loop.on_event(event, now)
    return out


def _answered_once(loop: ToolTurnLoop) -> None:
    """Every tool_use of the transcript has exactly one tool_result."""
    uses = [b["id"] for m in loop.messages if m["role"] == "assistant"
            for b in m["content"] if b["type"] == "tool_use"]
    results = [b["tool_use_id"] for m in loop.messages if m["role"] == "user"
               and isinstance(m["content"], list)
               for b in m["content"] if b["type"] == "tool_result"]
    assert sorted(uses) == sorted(results) and len(set(results)) == len(results)
    legal(loop)


def test_a_running_speculative_start_is_cancelled_and_the_call_answered_once() -> None:
    loop = ToolTurnLoop(TOOLS, model="m")
    loop.start("read", 0)
    out = _feed(loop, _head(), 10)
    assert [c.tool_use_id for c in of_type(StartTool, out)] == ["t1"]
    out = loop.arguments_changed(1, 20)
    assert out == [CancelTool("t1", SyntheticCause.MISFIRE)]
    # The cancelled run's late report is ignored.
    assert loop.tool_finished("t1", "success", "contents of a", 25) == []
    out = _feed(loop, _tail(later_call=True), 30)
    assert [c.tool_use_id for c in of_type(StartTool, out)] == ["t2"]  # t1 is invalid JSON now
    [ready] = of_type(ResultReady, out)
    assert ready.tool_use_id == "t1" and ready.result["is_error"] is True
    assert "not valid JSON" in ready.result["content"]
    out = loop.tool_finished("t2", "success", "contents of c", 40)
    assert of_type(TurnEnded, out) == [TurnEnded(1, "tool_use", 2)]
    [send] = of_type(SendRequest, out)
    _answered_once(loop)
    records = loop.call_records()
    assert [(r.tool_use_id, r.synthetic_cause, r.wasted) for r in records] == [
        ("t1", SyntheticCause.MISFIRE, True), ("t1", None, False), ("t2", None, False),
    ]
    assert records[0].start_ns == 10 and records[0].end_ns == 20
    assert records[1].outcome is CallOutcome.INVALID_INPUT and records[1].start_ns is None
    assert [e.tool_use_id for e in loop.record.of_kind(CallRetracted)] == ["t1"]
    assert [e.tool_use_id for e in loop.record.of_kind(WastedExecution)] == ["t1"]
    assert loop.wasted_executions == 1
    assert len(send.request_body["messages"][-1]["content"]) == 2


def test_a_result_already_handed_over_is_dropped() -> None:
    loop = ToolTurnLoop(TOOLS, model="m")
    loop.start("read", 0)
    _feed(loop, _head(), 10)
    out = loop.tool_finished("t1", "success", "contents of a", 15)
    [handed] = of_type(ResultReady, out)
    assert handed.tool_use_id == "t1"
    # Nothing to cancel (it had ended); its result, handed over, is dropped for observers too.
    assert loop.arguments_changed(1, 20) == [
        DiscardedResult("t1", handed.result, SyntheticCause.MISFIRE)
    ]
    out = _feed(loop, _tail(), 30)
    [ready] = of_type(ResultReady, out)
    assert ready.result["is_error"] is True
    assert of_type(TurnEnded, out) == [TurnEnded(1, "tool_use", 1)]
    _answered_once(loop)
    [result] = loop.messages[-1]["content"]
    assert result["is_error"] is True and result["tool_use_id"] == "t1"
    assert loop.call_records()[0].wasted is True


def test_a_queued_call_is_withdrawn_without_a_cancel() -> None:
    # Bash is unsafe: t1 waits behind the running t0.
    loop = ToolTurnLoop(TOOLS, model="m")
    loop.start("go", 0)
    events = [message_start("msg_1"), _start(0, "t0", "Bash"), _delta(0, "{}"), _stop(0),
              _start(1, "t1"), _delta(1, FIRST), _stop(1)]
    out = _feed(loop, events, 10)
    assert [c.tool_use_id for c in of_type(StartTool, out)] == ["t0"]
    assert loop.arguments_changed(1, 20) == []
    out = _feed(loop, _tail(), 30)
    assert [r.tool_use_id for r in of_type(ResultReady, out)] == []  # behind t0 in order
    out = loop.tool_finished("t0", "success", "ok", 40)
    assert [r.tool_use_id for r in of_type(ResultReady, out)] == ["t0", "t1"]
    _answered_once(loop)
    first = loop.call_records()[1]
    assert first.synthetic_cause is SyntheticCause.MISFIRE and first.start_ns is None
    assert first.wasted is False and loop.wasted_executions == 0


def test_a_call_awaiting_permission_is_withdrawn_and_its_answer_ignored() -> None:
    loop = ToolTurnLoop(TOOLS, model="m", permission=lambda tool, _: PermissionDecision.ASK)
    loop.start("read", 0)
    out = _feed(loop, _head(), 10)
    assert [c.tool_use_id for c in of_type(AskPermission, out)] == ["t1"]
    assert loop.arguments_changed(1, 20) == [CancelTool("t1", SyntheticCause.MISFIRE)]
    assert loop.permission_decided("t1", True, 25) == []
    out = _feed(loop, _tail(), 30)
    assert of_type(StartTool, out) == []
    assert of_type(TurnEnded, out) == [TurnEnded(1, "tool_use", 1)]
    _answered_once(loop)


@pytest.mark.parametrize("policy", ["at_message_stop", "serial"])
def test_under_the_baselines_nothing_started_so_nothing_is_cancelled(policy: str) -> None:
    loop = ToolTurnLoop(TOOLS, model="m", policy=policy)
    loop.start("read", 0)
    assert of_type(StartTool, _feed(loop, _head(), 10)) == []
    assert loop.arguments_changed(1, 20) == []
    out = _feed(loop, _tail(later_call=True), 30)
    assert [c.tool_use_id for c in of_type(StartTool, out)] == ["t2"]
    loop.tool_finished("t2", "success", "c", 40)
    _answered_once(loop)
    assert loop.wasted_executions == 0


def test_a_change_outside_the_stream_is_ignored() -> None:
    loop = ToolTurnLoop(TOOLS, model="m")
    loop.start("read", 0)
    _feed(loop, _head(), 10)
    assert loop.arguments_changed(1, 20, request_id=7) == []  # a stale request
    _feed(loop, _tail(), 30)
    loop.tool_finished("t1", "success", "a", 40)  # the call was never withdrawn
    assert loop.arguments_changed(1, 50) == []  # the next request awaits: no stream
    _feed(loop, text_response("msg_2", "done"), 60)
    _answered_once(loop)


def test_reopening_a_block_that_is_not_a_completed_tool_block_is_an_error() -> None:
    loop = ToolTurnLoop(TOOLS, model="m")
    loop.start("read", 0)
    _feed(loop, _head(), 10)
    with pytest.raises(ValueError, match="no completed tool block"):
        loop.arguments_changed(0, 20)  # the text block


def test_the_executor_hands_over_what_a_withdrawn_call_held_back() -> None:
    executor = ToolExecutor({tool.name: tool for tool in TOOLS})
    block = {"id": "a", "name": "Read", "input": {"path": "/a"}}
    executor.add_tool_use(block, 0)
    out = executor.add_tool_use({"id": "b", "name": "Read", "input": {"path": "/b"}}, 0)
    out = executor.tool_finished("b", "success", "b", 5)
    assert of_type(ResultReady, out) == []  # waits for a
    retraction = executor.retract("a", 6)
    assert retraction.commands[0] == CancelTool("a", SyntheticCause.MISFIRE)
    assert [r.tool_use_id for r in of_type(ResultReady, retraction.commands)] == ["b"]
    assert retraction.wasted and retraction.freed and retraction.withdrawn is None
    executor.add_tool_use({**block, "input": {}}, 7, input_error="bad")
    executor.message_ended(8)
    assert executor.done and executor.call_count == 2
    assert [(r.tool_use_id, r.state) for r in executor.records()] == [
        ("a", CallState.COMPLETED), ("b", CallState.HANDED_OVER), ("a", CallState.HANDED_OVER),
    ]
    with pytest.raises(ValueError, match="not in the batch"):
        executor.retract("zzz", 9)


def test_in_completion_order_a_handed_over_result_is_dropped_and_the_rest_go_on() -> None:
    profile = replace(DEFAULT, result_order=ResultOrder.COMPLETION)
    loop = ToolTurnLoop(TOOLS, model="m", profile=profile)
    loop.start("read", 0)
    events = [message_start("msg_1"), _start(0, "t0"), _delta(0, '{"path": "/z"}'), _stop(0),
              *_head()[5:]]
    out = _feed(loop, events, 10)
    assert [c.tool_use_id for c in of_type(StartTool, out)] == ["t0", "t1"]
    assert [r.tool_use_id for r in of_type(ResultReady, loop.tool_finished("t1", "success", "a",
                                                                           12))] == ["t1"]
    assert [d.tool_use_id for d in of_type(DiscardedResult, loop.arguments_changed(1, 20))] == [
        "t1"
    ]
    out = _feed(loop, _tail(), 30)
    assert [r.tool_use_id for r in of_type(ResultReady, out)] == ["t1"]  # the parse error
    out = loop.tool_finished("t0", "success", "z", 40)
    assert of_type(TurnEnded, out) == [TurnEnded(1, "tool_use", 2)]
    _answered_once(loop)
    assert [b["tool_use_id"] for b in loop.messages[-1]["content"]] == ["t1", "t0"]


def test_a_repeat_of_an_id_is_withdrawn_and_comes_back_as_a_repeat() -> None:
    # Rule 2a's `run_each`: the second block of id t1 runs after the first; its misfire
    # withdraws only it, and its real stop makes it a repeat again (its result dropped).
    profile = replace(DEFAULT, duplicate_ids=DuplicateIds.RUN_EACH)
    loop = ToolTurnLoop(TOOLS, model="m", profile=profile)
    loop.start("read", 0)
    events = [message_start("msg_1"), _start(0, "t1"), _delta(0, '{"path": "/z"}'), _stop(0),
              *_head()[5:]]
    out = _feed(loop, events, 10)
    assert [c.tool_use_id for c in of_type(StartTool, out)] == ["t1"]  # the repeat waits
    assert loop.arguments_changed(1, 20) == []
    _feed(loop, _tail(), 30)
    out = loop.tool_finished("t1", "success", "z", 40)
    assert of_type(TurnEnded, out) == [TurnEnded(1, "tool_use", 2)]
    _answered_once(loop)
    assert [b["content"] for b in loop.messages[-1]["content"]] == ["z"]


def test_a_report_about_a_call_the_loop_never_started_is_still_an_error() -> None:
    loop = ToolTurnLoop(TOOLS, model="m")
    loop.start("read", 0)
    _feed(loop, _head(), 10)
    with pytest.raises(KeyError, match="zzz"):
        loop.tool_finished("zzz", "success", "?", 12)
    loop.arguments_changed(1, 20)
    assert loop.tool_finished("t1", "success", "late", 25) == []  # the withdrawn run's
