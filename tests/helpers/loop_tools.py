"""The tools and responses the loop's tests script their sessions with, and what a legal
transcript is."""

from __future__ import annotations

from typing import Any

from tests.helpers.runtime_script import (
    message_end,
    message_start,
    text_block,
    tool_use_block,
)
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.repair import check_pairing, ensure_tool_result_pairing
from toolturn.runtime.tooldef import ToolDefinition

READ = ToolDefinition(
    "Read",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    concurrency_safe=True,
)
BASH = ToolDefinition(
    "Bash", {"type": "object", "properties": {"command": {"type": "string"}}}, cancels_siblings=True
)
EDIT = ToolDefinition("Edit")
TASK = ToolDefinition("Task", concurrency_safe=True, cancellable=False)
TOOLS = [READ, BASH, EDIT, TASK]


def tool_response(
    message_id: str, *calls: tuple[str, str, dict[str, Any]], text: str = "Looking."
) -> list[dict[str, Any]]:
    events = [message_start(message_id), *text_block(0, text)]
    for offset, (tool_use_id, name, tool_input) in enumerate(calls, start=1):
        events += tool_use_block(offset, tool_use_id, name, tool_input)
    return events + message_end("tool_use")


def legal(loop: ToolTurnLoop) -> None:
    """The transcript passes the API's pairing rules, the boundary layer never had to act, and
    it would find nothing to do before the next request either."""
    assert check_pairing(loop.messages) == []
    assert loop.repairs == []
    assert ensure_tool_result_pairing(loop.messages)[1] == []
