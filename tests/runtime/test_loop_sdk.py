"""The loop driven through the official SDK, with the HTTP layer replaced by an in-process
transport: the SDK accepts every request body the loop builds, and the loop accepts the SDK's
own stream events. No network is used."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2

from tests.helpers.loop_tools import TOOLS
from tests.helpers.runtime_script import message_end, message_start, text_block, tool_use_block
from toolturn.runtime.commands import SendRequest, SessionEnded, StartTool
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.repair import check_pairing


def sse(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def test_a_session_through_the_sdk() -> None:
    scripted = [
        [message_start("msg_1"), *text_block(0, "Reading."),
         *tool_use_block(1, "toolu_1", "Read", {"path": "/a"}), *message_end("tool_use")],
        [message_start("msg_2"), *text_block(0, "Done."), *message_end("end_turn")],
    ]
    sent_bodies: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        sent_bodies.append(json.loads(request.content))
        return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                               content=sse(scripted[len(sent_bodies) - 1]))

    client = anthropic.Anthropic(api_key="test-key",
                                 http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    loop = ToolTurnLoop(TOOLS, model="claude-sonnet-5-5")
    now = 0
    commands = loop.start("read /a", now)
    ended: list[str] = []
    while commands:
        command = commands.pop(0)
        now += 1_000
        if isinstance(command, SendRequest):
            for event in client.messages.create(**command.request_body):
                commands += loop.on_event(event.to_dict(), now, command.request_id)
            commands += loop.stream_ended(now, command.request_id)
        elif isinstance(command, StartTool):
            commands += loop.tool_finished(command.tool_use_id, "success", "A", now)
        elif isinstance(command, SessionEnded):
            ended.append(command.reason)
    assert ended == ["end_turn"]
    assert len(sent_bodies) == 2 and sent_bodies[1]["stream"] is True
    assert sent_bodies[1]["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "A"}]
    assert check_pairing(loop.messages) == [] and loop.repairs == []
