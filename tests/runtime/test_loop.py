"""The tool-turn loop on scripted streams with fake integer time: the normal path."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.loop_tools import READ, TOOLS, legal, tool_response
from tests.helpers.runtime_script import (
    feed,
    of_type,
    text_response,
)
from toolturn.runtime import validation as validation_module
from toolturn.runtime.commands import (
    AskPermission,
    CancelTool,
    ResultReady,
    SendRequest,
    SessionEnded,
    StartTool,
    ToolProgress,
    TurnEnded,
)
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.outcomes import CallOutcome
from toolturn.runtime.permission import PermissionDecision
from toolturn.runtime.record import (
    AttachmentAppended,
    BlockComplete,
    DuplicateToolUse,
    FirstEvent,
    RequestFailed,
    RequestSent,
    ResultHandedOver,
    ToolEnded,
    ToolQueued,
    ToolStarted,
    TurnEnd,
)
from toolturn.runtime.repair import check_pairing
from toolturn.runtime.validation import InputValidation


def test_the_request_body_is_a_complete_streaming_messages_request() -> None:
    loop = ToolTurnLoop(TOOLS, model="model-a", max_tokens=1024, system="Be brief.")
    [send] = loop.start("hello", 0)
    assert isinstance(send, SendRequest) and send.model == "model-a" and send.attempt == 1
    body = send.request_body
    assert body["model"] == "model-a" and body["max_tokens"] == 1024 and body["stream"] is True
    assert body["system"] == "Be brief."
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]
    assert [tool["name"] for tool in body["tools"]] == ["Read", "Bash", "Edit", "Task"]
    assert body["tools"][0]["input_schema"]["required"] == ["path"]


def test_a_full_session_tool_turn_then_answer() -> None:
    loop = ToolTurnLoop(TOOLS, model="model-a")
    loop.start("read /a", 0)
    out = feed(loop, tool_response("msg_1", ("t1", "Read", {"path": "/a"})), 100)
    assert [c.tool_use_id for c in of_type(StartTool, out)] == ["t1"]
    out = loop.tool_finished("t1", "success", "contents of a", 1_000)
    [send] = of_type(SendRequest, out)
    assert of_type(TurnEnded, out) == [TurnEnded(1, "tool_use", 1)]
    assert send.request_body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "read /a"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "/a"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "contents of a"},
        ]},
    ]
    out = feed(loop, text_response("msg_2", "It says a."), 2_000)
    assert of_type(SessionEnded, out) == [SessionEnded("end_turn")]
    assert loop.messages[-1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "It says a."}],
    }
    legal(loop)
    # The session goes on with a new prompt.
    [send] = loop.start("thanks", 5_000)
    assert send.request_body["messages"][-1]["content"] == [{"type": "text", "text": "thanks"}]
    assert loop.turn == 3


def test_streaming_starts_a_tool_before_message_stop_and_the_baseline_does_not() -> None:
    events = tool_response("msg_1", ("t1", "Read", {"path": "/a"}))
    stop_time = 100 + (len(events) - 1) * 10
    for policy, expect_before_stop in (
        ("streaming", True),
        ("at_message_stop", False),
        ("serial", False),
    ):
        loop = ToolTurnLoop(TOOLS, model="m", policy=policy)
        loop.start("go", 0)
        [(started_at, _)] = [(t, c) for t, c in feed(loop, events, 100) if isinstance(c, StartTool)]
        assert (started_at < stop_time) is expect_before_stop, policy
        if not expect_before_stop:
            assert started_at == stop_time


def test_an_unsafe_call_holds_back_later_ones() -> None:
    loop = ToolTurnLoop(TOOLS, model="m")
    loop.start("go", 0)
    out = feed(loop, tool_response("msg_1", ("e", "Edit", {}), ("r", "Read", {"path": "/a"})), 100)
    assert [c.tool_use_id for c in of_type(StartTool, out)] == ["e"]
    finished = loop.tool_finished("e", "success", "ok", 500)
    assert [c.tool_use_id for c in of_type(StartTool, finished)] == ["r"]


def test_an_id_given_twice_in_one_response_runs_once_and_is_left_out() -> None:
    for policy in ("streaming", "at_message_stop", "serial"):
        loop = ToolTurnLoop(TOOLS, model="m", policy=policy)
        loop.start("go", 0)
        calls = ("t1", "Read", {"path": "/a"}), ("t1", "Read", {"path": "/b"})
        twice = tool_response("msg_1", *calls)
        out = feed(loop, twice, 100)
        assert [c.tool_use_id for c in of_type(StartTool, out)] == ["t1"], policy
        [duplicate] = loop.record.of_kind(DuplicateToolUse)
        assert (duplicate.tool_use_id, duplicate.block_index) == ("t1", 2)
        assert [call.tool_use_id for call in loop.call_records()] == ["t1"]
        [send] = of_type(SendRequest, loop.tool_finished("t1", "success", "a", 1_000))
        messages = send.request_body["messages"]
        assert check_pairing(messages) == []
        uses = [block for block in messages[1]["content"] if block["type"] == "tool_use"]
        assert [use["input"] for use in uses] == [{"path": "/a"}]
        assert loop.repairs == []


def test_progress_reaches_observers_never_the_transcript() -> None:
    loop = ToolTurnLoop(TOOLS, model="m")
    loop.start("go", 0)
    feed(loop, tool_response("msg_1", ("t", "Task", {})), 100)
    assert loop.tool_progress("t", "step 1 of 2", 300) == [ToolProgress("t", "Task", "step 1 of 2")]
    out = loop.tool_finished("t", "success", "done", 400)
    [send] = of_type(SendRequest, out)
    assert "step 1 of 2" not in repr(send.request_body["messages"])
    assert loop.messages[-1]["content"] == [
        {"type": "tool_result", "tool_use_id": "t", "content": "done"}
    ]


def test_an_attachment_during_tools_lands_after_all_results() -> None:
    loop = ToolTurnLoop(TOOLS, model="m")
    loop.start("go", 0)
    feed(
        loop,
        tool_response("msg_1", ("a", "Read", {"path": "/a"}), ("b", "Read", {"path": "/b"})),
        100,
    )
    loop.tool_finished("a", "success", "A", 300)
    note = {"type": "text", "text": "<file-changed>/a</file-changed>"}
    loop.attachment(note, 310, kind="file_change")
    loop.attachment({"type": "text", "text": "also check /c"}, 320, kind="queued_user_input")
    loop.tool_finished("b", "success", "B", 400)
    assert loop.messages[-1]["content"] == [
        {"type": "tool_result", "tool_use_id": "a", "content": "A"},
        {"type": "tool_result", "tool_use_id": "b", "content": "B"},
        note,
        {"type": "text", "text": "also check /c"},
    ]
    appended = loop.record.of_kind(AttachmentAppended)
    assert [(e.time_ns, e.kind, e.arrived_ns) for e in appended] == [
        (400, "file_change", 310),
        (400, "queued_user_input", 320),
    ]
    legal(loop)


def test_an_attachment_after_a_final_answer_waits_for_the_next_prompt() -> None:
    loop = ToolTurnLoop(TOOLS, model="m")
    loop.start("hi", 0)
    loop.attachment({"type": "text", "text": "build finished"}, 50)
    feed(loop, text_response("msg_1", "Hello."), 100)
    assert loop.messages[-1]["role"] == "assistant"
    [send] = loop.start("next", 1_000)
    assert send.request_body["messages"][-1]["content"] == [
        {"type": "text", "text": "next"}, {"type": "text", "text": "build finished"},
    ]


def test_sibling_abort_through_the_loop() -> None:
    loop = ToolTurnLoop(TOOLS, model="m")
    loop.start("go", 0)
    feed(
        loop,
        tool_response("msg_1", ("s", "Bash", {"command": "make"}), ("r", "Read", {"path": "/a"})),
        100,
    )
    out = loop.tool_finished("s", "error", "make: *** Error 2", 500)
    # "r" was held back behind the unsafe shell, so it never started: nothing to cancel.
    assert of_type(CancelTool, out) == []
    results = {c.tool_use_id: c.result for c in of_type(ResultReady, out)}
    assert results["s"]["content"] == "make: *** Error 2"
    assert "sibling call s failed" in results["r"]["content"] and results["r"]["is_error"]
    assert len(of_type(SendRequest, out)) == 1
    legal(loop)


def test_permission_asked_through_the_loop() -> None:
    loop = ToolTurnLoop(TOOLS, model="m", permission=lambda tool, _: PermissionDecision.ASK)
    loop.start("go", 0)
    out = feed(loop, tool_response("msg_1", ("e", "Edit", {})), 100)
    assert of_type(AskPermission, out) == [AskPermission("e", "Edit", {})]
    assert of_type(StartTool, loop.permission_decided("e", True, 9_000)) == [
        StartTool("e", "Edit", {})
    ]


def test_max_turns_ends_the_session_with_a_legal_transcript() -> None:
    loop = ToolTurnLoop(TOOLS, model="m", max_turns=2)
    loop.start("go", 0)
    for turn in (1, 2):
        feed(loop, tool_response(f"msg_{turn}", (f"t{turn}", "Read", {"path": "/a"})), turn * 1_000)
        out = loop.tool_finished(f"t{turn}", "success", "A", turn * 1_000 + 500)
    assert of_type(SessionEnded, out) == [SessionEnded("max_turns")]
    assert loop.requests_sent == 2
    legal(loop)


def test_the_record_holds_the_timeline_without_per_delta_entries() -> None:
    loop = ToolTurnLoop(TOOLS, model="m")
    loop.start("go", 0)
    events = tool_response("msg_1", ("t1", "Read", {"path": "/a"}))
    feed(loop, events, 100)
    loop.tool_finished("t1", "success", "A", 1_000)
    kinds = [type(entry) for entry in loop.record.entries]
    assert kinds == [
        RequestSent, FirstEvent, BlockComplete, BlockComplete, ToolQueued, ToolStarted,
        ToolEnded, ResultHandedOver, TurnEnd, RequestSent,
    ]
    first_event = loop.record.of_kind(FirstEvent)[0]
    assert (first_event.time_ns, first_event.turn, first_event.attempt) == (100, 1, 1)
    started = loop.record.of_kind(ToolStarted)[0]
    block = loop.record.of_kind(BlockComplete)[1]
    assert started.time_ns == block.time_ns  # start lag zero under `streaming`
    assert loop.record.entries[-1].turn == 2


def test_two_tools_with_one_name_are_refused() -> None:
    with pytest.raises(ValueError, match="share a name"):
        ToolTurnLoop([READ, READ], model="m")


def test_a_validation_given_is_used_and_must_cover_every_tool() -> None:
    validation = InputValidation(TOOLS)
    loop = ToolTurnLoop(TOOLS, model="m", validation=validation)
    loop.start("go", 0)
    out = feed(loop, tool_response("msg_1", ("t1", "Read", {"limit": 3})), 100)
    [result] = loop.call_records()
    assert result.outcome is CallOutcome.INVALID_INPUT and not of_type(StartTool, out)
    partial = InputValidation(tool for tool in TOOLS if tool.name in ("Read", "Edit"))
    with pytest.raises(ValueError, match="validation: no schema for the tools Bash, Task"):
        ToolTurnLoop(TOOLS, model="m", validation=partial)


def test_loops_given_one_validation_remember_its_verdicts_together(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Who builds many loops owns one validation: a verdict given in one session is not made
    # again in the next (and a loop without one makes its own, remembering nothing of others).
    fresh: list[dict[str, Any]] = []
    real = validation_module.validate

    def counted(validator: Any, tool_input: dict[str, Any]) -> str | None:
        fresh.append(tool_input)
        return real(validator, tool_input)

    monkeypatch.setattr(validation_module, "validate", counted)
    shared = InputValidation(TOOLS)
    for loop in (ToolTurnLoop(TOOLS, model="m", validation=shared) for _ in range(2)):
        loop.start("go", 0)
        feed(loop, tool_response("msg_1", ("t1", "Read", {"path": "/a"})), 100)
        [record] = loop.call_records()
        assert record.start_ns is not None  # valid, so started
    assert fresh == [{"path": "/a"}]
    own = ToolTurnLoop(TOOLS, model="m")
    own.start("go", 0)
    feed(own, tool_response("msg_1", ("t1", "Read", {"path": "/a"})), 100)
    assert fresh == [{"path": "/a"}, {"path": "/a"}]


def test_input_about_an_older_request_is_ignored() -> None:
    loop = ToolTurnLoop(TOOLS, model="m")
    [first] = loop.start("go", 0)
    # The only call is rejected at once, so message_stop completes the batch and the next
    # request goes out before the driver reports that the first stream closed.
    out = feed(loop, tool_response("msg_1", ("x", "Nope", {})), 100)
    [second] = of_type(SendRequest, out)
    assert (first.request_id, second.request_id) == (1, 2)
    assert loop.stream_ended(900, request_id=first.request_id) == []
    assert loop.on_event({"type": "ping"}, 910, request_id=first.request_id) == []
    assert loop.request_failed(529, 920, request_id=first.request_id) == []
    assert loop.record.of_kind(RequestFailed) == []


def test_call_records_cover_the_session_and_blocks_name_their_call() -> None:
    loop = ToolTurnLoop(TOOLS, model="m", policy="at_message_stop")
    loop.start("go", 0)
    feed(loop, tool_response("msg_1", ("a", "Read", {"path": "/a"})), 100)
    loop.tool_finished("a", "success", "A", 1_000)
    feed(loop, tool_response("msg_2", ("b", "Read", {"path": "/b"})), 2_000)
    loop.tool_finished("b", "success", "B", 3_000)
    records = loop.call_records()
    assert [r.tool_use_id for r in records] == ["a", "b"]
    [block] = [e for e in loop.record.of_kind(BlockComplete) if e.tool_use_id == "a"]
    # Start lag under the baseline: from the block's stop to the message's stop.
    assert records[0].block_complete_ns == block.time_ns and records[0].start_ns == 100 + 10 * 11
    assert records[0].start_ns - records[0].block_complete_ns == 20
