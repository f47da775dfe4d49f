"""Property: whatever the stream, the tools and the user do, every session ends with a transcript
that passes the API's pairing rules without a single boundary repair."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.loop_tools import TOOLS
from tests.helpers.runtime_script import (
    error_event,
    message_end,
    message_start,
    text_block,
    tool_use_block,
)
from toolturn.runtime.commands import CancelTool, SendRequest, SessionEnded, StartTool, WaitUntil
from toolturn.runtime.loop import Phase, ToolTurnLoop
from toolturn.runtime.repair import check_pairing, ensure_tool_result_pairing

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


class _Driver:
    """A driver of one loop whose every choice (responses, tool outcomes, which input comes
    next) hypothesis draws."""

    def __init__(self, loop: ToolTurnLoop, data: st.DataObject) -> None:
        self.loop = loop
        self.data = data
        self.now = 0
        self.next_id = [0]
        self.running: list[str] = []
        self.stream: list[dict[str, Any]] = []
        self.stream_open = False
        self.wake_at: int | None = None
        self.request_id = 0
        self.ended = False

    def carry_out(self, commands: list[Any]) -> None:
        for command in commands:
            if isinstance(command, SendRequest):
                self.request_id = command.request_id
                status, self.stream = draw_response(self.data, self.next_id)
                self.stream_open = status is None
                if status is not None:
                    commands.extend(
                        self.loop.request_failed(status, self.now, request_id=self.request_id)
                    )
            elif isinstance(command, StartTool):
                self.running.append(command.tool_use_id)
            elif isinstance(command, CancelTool) and command.tool_use_id in self.running:
                self.running.remove(command.tool_use_id)
            elif isinstance(command, WaitUntil):
                self.wake_at = command.time_ns
            elif isinstance(command, SessionEnded):
                self.ended = True

    def moves(self) -> list[str]:
        """The inputs that may come next."""
        moves = []
        if self.stream_open:
            moves.append("event")
        if self.running:
            moves += ["finish", "progress"]
        if self.wake_at is not None:
            moves.append("wake")
        if self.loop.phase in (Phase.STREAMING, Phase.TOOLS):
            moves += ["interrupt", "attachment"]
        return moves

    def make(self, move: str) -> list[Any]:
        """Give the loop the input `move` names; returns its commands."""
        loop, now, data = self.loop, self.now, self.data
        if move == "event":
            if self.stream:
                return loop.on_event(self.stream.pop(0), now, self.request_id)
            self.stream_open = False
            return loop.stream_ended(now, self.request_id)
        if move == "finish":
            tool_use_id = data.draw(st.sampled_from(self.running), label="tool")
            self.running.remove(tool_use_id)
            outcome = data.draw(
                st.sampled_from(["success", "error", "exception", "cancelled"]), label="outcome"
            )
            return loop.tool_finished(tool_use_id, outcome, "out", now)
        if move == "progress":
            return loop.tool_progress(self.running[0], "tick", now)
        if move == "wake":
            assert self.wake_at is not None
            self.now = max(now, self.wake_at)
            self.wake_at = None
            return loop.wake(self.now)
        if move == "interrupt":
            self.stream_open = False
            return loop.interrupt(now)
        return loop.attachment({"type": "text", "text": "note"}, now)


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
    driver = _Driver(loop, data)
    commands: list[Any] = loop.start("go", driver.now)
    for _ in range(400):
        driver.carry_out(commands)
        commands = []
        if driver.ended and not driver.running:
            break
        driver.now += 10
        moves = driver.moves()
        if not moves:
            break
        commands = driver.make(data.draw(st.sampled_from(moves), label="move"))
    assert driver.ended, "the session did not end"
    assert loop.phase is Phase.IDLE
    assert check_pairing(loop.messages) == []
    assert loop.repairs == []
    assert ensure_tool_result_pairing(loop.messages)[1] == []
