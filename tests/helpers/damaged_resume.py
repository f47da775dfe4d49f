"""A loop resumed from a damaged transcript: a tool_use whose result was lost. The runtime itself
never makes an illegal transcript (so no fault of the mock model reaches strict mode); a session
resumed from a broken log does, which is what strict mode and the boundary repair are for."""

from __future__ import annotations

from typing import Any

from toolturn.runtime.loop import ToolTurnLoop

LOST = [
    {"role": "user", "content": "earlier"},
    {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_lost", "name": "Read", "input": {"path": "/x"}}]},
]


class DamagedResumeLoop(ToolTurnLoop):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "messages": LOST})
