"""Property: whatever the stream, the tools and the user do, every session ends with a transcript
that passes the API's pairing rules without a single boundary repair."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sim.runtime.commands import CancelTool, SendRequest, SessionEnded, StartTool, WaitUntil
from sim.runtime.loop import Phase, ToolTurnLoop
from sim.runtime.repair import check_pairing, ensure_tool_result_pairing
from tests.helpers.loop_tools import TOOLS
from tests.helpers.runtime_script import (
    error_event,
    message_end,
    message_start,
    text_block,
    tool_use_block,
)

TOOL_NAMES = ["Read", "Bash", "Edit", "Task", "Missing"]
INPUTS = {"Read": {"path": "/a"}, "Bash": {"command": "ls"}, "Edit": {}, "Task": {}, "Missing": {}}


def draw_response(
    data: st.DataObject, next_id: list[int]
) -> tuple[int | None, list[dict[str, Any]]]:
    """(HTTP failure status, events): a failed request, or a stream that may break anywhere."""
    status = data.draw(st.sampled_from([None, None, None, None, 429, 529, 400]), label="status")
    if status is not None:
        return status, []
    next_id[0] += 1
    events = [
        message_start(f"msg_{next_id[0]}"),
        *text_block(0, data.draw(st.sampled_from(["", "ok", "Let me see."]))),
    ]
    calls = data.draw(st.lists(st.sampled_from(TOOL_NAMES), max_size=4), label="calls")
    for index, name in enumerate(calls, start=1):
        next_id[0] += 1
        broken = data.draw(st.booleans(), label="broken json") and data.draw(st.booleans())
        tool_input: dict[str, Any] | str = '{"path": "/' if broken else INPUTS[name]
        events += tool_use_block(index, f"toolu_{next_id[0]}", name, tool_input)
    events += message_end(
        "tool_use" if calls else data.draw(st.sampled_from(["end_turn", "max_tokens"]))
    )
    ending = data.draw(
        st.sampled_from(["whole", "whole", "cut", "api_error", "overloaded"]), label="ending"
    )
    if ending != "whole":
        events = events[: data.draw(st.integers(1, len(events) - 1), label="cut at")]
        if ending != "cut":
            events.append(error_event(f"{ending}_error" if ending == "overloaded" else ending))
    return None, events


@settings(max_examples=150, deadline=None)
@given(st.data(), st.sampled_from(["streaming", "at_message_stop", "serial"]))
def test_every_session_ends_legal_without_boundary_repairs(
    data: st.DataObject, policy: str
) -> None:
    loop = ToolTurnLoop(
        TOOLS,
        model="model-a",
        fallback_model="model-b",
        fallback_after=2,
        policy=policy,
        max_turns=3,
    )
    now = 0
    next_id = [0]
    commands: list[Any] = loop.start("go", now)
    running: list[str] = []
    stream: list[dict[str, Any]] = []
    stream_open = False
    wake_at: int | None = None
    request_id = 0
    ended = False
    for _ in range(400):
        for command in commands:
            if isinstance(command, SendRequest):
                request_id = command.request_id
                status, stream = draw_response(data, next_id)
                stream_open = status is None
                if status is not None:
                    commands.extend(loop.request_failed(status, now, request_id=request_id))
            elif isinstance(command, StartTool):
                running.append(command.tool_use_id)
            elif isinstance(command, CancelTool) and command.tool_use_id in running:
                running.remove(command.tool_use_id)
            elif isinstance(command, WaitUntil):
                wake_at = command.time_ns
            elif isinstance(command, SessionEnded):
                ended = True
        commands = []
        if ended and not running:
            break
        now += 10
        moves = []
        if stream_open:
            moves.append("event")
        if running:
            moves += ["finish", "progress"]
        if wake_at is not None:
            moves.append("wake")
        if loop.phase in (Phase.STREAMING, Phase.TOOLS):
            moves += ["interrupt", "attachment"]
        if not moves:
            break
        move = data.draw(st.sampled_from(moves), label="move")
        if move == "event":
            if stream:
                commands = loop.on_event(stream.pop(0), now, request_id)
            else:
                stream_open = False
                commands = loop.stream_ended(now, request_id)
        elif move == "finish":
            tool_use_id = data.draw(st.sampled_from(running), label="tool")
            running.remove(tool_use_id)
            outcome = data.draw(
                st.sampled_from(["success", "error", "exception", "cancelled"]), label="outcome"
            )
            commands = loop.tool_finished(tool_use_id, outcome, "out", now)
        elif move == "progress":
            commands = loop.tool_progress(running[0], "tick", now)
        elif move == "wake":
            assert wake_at is not None
            now = max(now, wake_at)
            wake_at = None
            commands = loop.wake(now)
        elif move == "interrupt":
            stream_open = False
            commands = loop.interrupt(now)
        else:
            commands = loop.attachment({"type": "text", "text": "note"}, now)
    assert ended, "the session did not end"
    assert loop.phase is Phase.IDLE
    assert check_pairing(loop.messages) == []
    assert loop.repairs == []
    assert ensure_tool_result_pairing(loop.messages)[1] == []
