"""The example of driving the tool-turn loop in docs/runtime.md (an excerpt there), whole and
kept runnable."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


def test_the_loop_example_runs(capsys: Any) -> None:
    # --- docs/runtime.md example begins ---
    from toolturn.runtime.commands import SendRequest, SessionEnded, StartTool
    from toolturn.runtime.loop import ToolTurnLoop
    from toolturn.runtime.tooldef import ToolDefinition

    read = ToolDefinition(
        "Read",
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        concurrency_safe=True,
    )
    loop = ToolTurnLoop([read], model="claude-sonnet-5-5", policy="streaming")

    def response(
        message_id: str, block: dict[str, Any], stop_reason: str
    ) -> Iterator[dict[str, Any]]:
        """One scripted streamed response holding one block, as Messages API event dicts."""
        yield {"type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 1}}}
        if block["type"] == "tool_use":
            yield {"type": "content_block_start", "index": 0,
                   "content_block": {**block, "input": {}}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            yield {"type": "content_block_start", "index": 0,
                   "content_block": {"type": "text", "text": ""}}
            delta = {"type": "text_delta", "text": block["text"]}
        yield {"type": "content_block_delta", "index": 0, "delta": delta}
        yield {"type": "content_block_stop", "index": 0}
        yield {"type": "message_delta",
               "delta": {"stop_reason": stop_reason, "stop_sequence": None},
               "usage": {"output_tokens": 9}}
        yield {"type": "message_stop"}

    responses = iter([
        response("msg_1", {"type": "tool_use", "id": "toolu_1", "name": "Read",
                           "input": {"path": "/etc/hostname"}}, "tool_use"),
        response("msg_2", {"type": "text", "text": "The host is called box."}, "end_turn"),
    ])

    now_ns = 0
    commands = loop.start("What is this machine called?", now_ns)
    while commands:
        command = commands.pop(0)
        now_ns += 1_000_000  # each step takes 1 ms of fake time
        if isinstance(command, SendRequest):
            # A live driver would send command.request_body with the SDK and feed the events it
            # gets back: client.messages.create(**command.request_body) -> event.to_dict().
            for event in next(responses):
                commands += loop.on_event(event, now_ns)
        elif isinstance(command, StartTool):
            commands += loop.tool_finished(command.tool_use_id, "success", "box\n", now_ns)
        elif isinstance(command, SessionEnded):
            print("session ended:", command.reason)

    print([message["role"] for message in loop.messages])
    print(loop.messages[2]["content"][0])
    # --- docs/runtime.md example ends ---
    assert capsys.readouterr().out.splitlines() == [
        "session ended: end_turn",
        "['user', 'assistant', 'user', 'assistant']",
        "{'type': 'tool_result', 'tool_use_id': 'toolu_1', 'content': 'box\\n'}",
    ]
