"""One simulated tool call as a simpy process, playing back its `CallPlan`.

The process reports progress at the plan's offsets and finishes after the plan's duration with
the plan's outcome. Cancellation (`CancelTool`) interrupts the process, which then stops without
a word: the runtime has already decided the call's result.

A hanging call (outcome `hang`) runs until it is cancelled, but a tool that is not cancellable,
or a turn that nobody interrupts, would then stall its session for ever. So a hang gives up after
`HANG_TIMEOUT_NS` (10 simulated minutes, far beyond every catalogue tool's longest run) and
reports an is_error result saying it timed out, as a real agent's tool timeout would.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import simpy

from sim.engine.clock import Clock
from sim.runtime.outcomes import ToolOutcome
from sim.tools.execution import CallPlan

HANG_TIMEOUT_NS = 600 * 1_000_000_000

_OUTCOMES = {
    "success": ToolOutcome.SUCCESS,
    "error": ToolOutcome.ERROR,
    "exception": ToolOutcome.EXCEPTION,
}

ProgressReport = Callable[[str, Any], None]
FinishReport = Callable[[str, ToolOutcome, str], None]


def timeout_text(name: str) -> str:
    return f"Error: tool {name!r} timed out after {HANG_TIMEOUT_NS // 1_000_000_000} s."


def tool_process(
    env: Clock,
    tool_use_id: str,
    name: str,
    plan: CallPlan,
    on_progress: ProgressReport,
    on_finish: FinishReport,
) -> Generator[simpy.Event, Any, None]:
    """Play `plan` from now: `on_progress(id, progress)` at each progress offset, then
    `on_finish(id, outcome, text)`; silently stop when interrupted."""
    start = env.now
    try:
        if plan.outcome == "hang":
            yield env.timeout(HANG_TIMEOUT_NS)
            on_finish(tool_use_id, ToolOutcome.ERROR, timeout_text(name))
            return
        for count, offset in enumerate(plan.progress_ns, start=1):
            yield env.timeout(start + offset - env.now)
            on_progress(tool_use_id, {"elapsed_ns": offset, "count": count})
        assert plan.duration_ns is not None
        yield env.timeout(start + plan.duration_ns - env.now)
        on_finish(tool_use_id, _OUTCOMES[plan.outcome], plan.text)
    except simpy.Interrupt:
        return
