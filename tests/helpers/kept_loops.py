"""A loop the test can look at after its session has ended (the `kept_loops` fixture)."""

from __future__ import annotations

from typing import Any, ClassVar

from toolturn.runtime.loop import ToolTurnLoop


class KeptLoop(ToolTurnLoop):
    """A loop the test can look at after its session has ended."""

    kept: ClassVar[list[ToolTurnLoop]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        KeptLoop.kept.append(self)
