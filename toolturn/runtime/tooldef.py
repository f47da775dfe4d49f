"""What the runtime needs to know about a tool: its name, its input schema and how it may run.

Durations, failures and progress belong to whoever hosts the tool (the simulator's
`toolturn.tools`, or a live asyncio driver); the runtime only decides when a call may start.

Concurrency safety is decided per call: `safe_for(input)` is `safe_when(input)` when the tool has
that predicate (a shell runs read-only commands beside other safe calls, anything else alone;
`toolturn.runtime.recovery.InputPattern` is one such predicate, as data), else `concurrency_safe`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """One tool as the runtime knows it (see the module docstring)."""

    name: str
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})
    description: str = ""
    # May run beside other concurrency-safe calls; an unsafe call always runs alone.
    concurrency_safe: bool = False
    # An error in this tool cancels the other calls of the batch (a shell failing, say).
    cancels_siblings: bool = False
    # A user interrupt may cancel it while it runs; otherwise it is left to finish.
    cancellable: bool = True
    # Per-call safety: input -> whether this call may run beside other safe calls. None: every
    # call is as safe as `concurrency_safe` says.
    safe_when: Callable[[Mapping[str, Any]], bool] | None = None

    def safe_for(self, tool_input: Mapping[str, Any]) -> bool:
        """Whether a call with this input may run beside other concurrency-safe calls."""
        if self.safe_when is None:
            return self.concurrency_safe
        return bool(self.safe_when(tool_input))

    def to_api(self) -> dict[str, Any]:
        """The tool as the Messages API `tools` parameter spells it."""
        api: dict[str, Any] = {"name": self.name, "input_schema": dict(self.input_schema)}
        if self.description:
            api["description"] = self.description
        return api
