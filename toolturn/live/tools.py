"""Tools as the live driver runs them: async callables, one call each.

    async def read_file(call: LiveCall) -> ToolContent:
        call.progress("opening")              # for observers; never a result
        text = await load(call.input["path"])
        if text is None:
            raise ToolError(f"no such file: {call.input['path']}")
        return text

Returning gives a successful tool_result; raising `ToolError` gives the tool's own is_error
result (outcome "error"); raising anything else is a crash (outcome "exception", the message
wrapped by the runtime). A call the runtime cancels is cancelled as an asyncio task.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from toolturn.runtime.results import ToolContent


@dataclass(frozen=True, slots=True)
class LiveCall:
    """One call of a tool: the model's tool_use block, and a way to report progress."""

    tool_use_id: str
    name: str
    input: dict[str, Any]
    progress: Callable[[Any], None]


class ToolError(Exception):
    """The tool ran and failed; `content` is its error result for the model."""

    def __init__(self, content: ToolContent) -> None:
        super().__init__(content if isinstance(content, str) else "tool error")
        self.content = content


LiveTool = Callable[[LiveCall], Awaitable[ToolContent]]
