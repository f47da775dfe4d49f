"""One simulated tool call playing back its `CallPlan` in simulated time.

The call reports progress at the plan's offsets and finishes after the plan's duration with the
plan's outcome. Cancellation (`CancelTool`) silences it: the runtime has already decided the
call's result. The reports are callbacks at their times (`Clock.call_at`) rather than a simpy
process: a call only waits, and a process costs more scheduled events and generator resumptions.

A hanging call (outcome `hang`) runs until it is cancelled or the tool timeout ends it
(`toolturn.tools.execution.TOOL_TIMEOUT_NS`, 10 simulated minutes): then it reports the is_error
result `timeout_text(...)`. Every other plan ends sooner than that.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolturn.engine.clock import Clock
from toolturn.runtime.outcomes import ToolOutcome
from toolturn.tools.execution import TOOL_TIMEOUT_NS, CallPlan, timeout_text

_OUTCOMES = {
    "success": ToolOutcome.SUCCESS,
    "error": ToolOutcome.ERROR,
    "exception": ToolOutcome.EXCEPTION,
}

ProgressReport = Callable[[str, Any], None]
FinishReport = Callable[[str, ToolOutcome, str], None]


class ToolRun:
    """Plays `plan` from now: `on_progress(id, progress)` at each progress offset, then
    `on_finish(id, outcome, text)`; nothing more once cancelled."""

    __slots__ = ("_on_finish", "_on_progress", "cancelled", "tool_use_id")

    def __init__(
        self,
        env: Clock,
        tool_use_id: str,
        name: str,
        plan: CallPlan,
        on_progress: ProgressReport,
        on_finish: FinishReport,
    ) -> None:
        self.tool_use_id = tool_use_id
        self.cancelled = False
        self._on_progress = on_progress
        self._on_finish = on_finish
        start = env.now
        if plan.outcome == "hang":
            timed_out = timeout_text(name)
            env.call_at(start + TOOL_TIMEOUT_NS, self._finish, ToolOutcome.ERROR, timed_out)
            return
        for count, offset in enumerate(plan.progress_ns, start=1):
            env.call_at(start + offset, self._progress, {"elapsed_ns": offset, "count": count})
        assert plan.duration_ns is not None
        env.call_at(start + plan.duration_ns, self._finish, _OUTCOMES[plan.outcome], plan.text)

    def cancel(self) -> None:
        self.cancelled = True

    def _progress(self, progress: dict[str, int]) -> None:
        if not self.cancelled:
            self._on_progress(self.tool_use_id, progress)

    def _finish(self, outcome: ToolOutcome, text: str) -> None:
        if not self.cancelled:
            self._on_finish(self.tool_use_id, outcome, text)
