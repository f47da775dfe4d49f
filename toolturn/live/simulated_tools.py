"""Simulated tools for the live driver: each call plays a `CallPlan` in real time.

    tools = simulated_tools(scenario.tool_specs, scenario.seed, session=7, speed=20.0)
    await run_session(client, loop, "go", tools)

The plan of a call is drawn by `toolturn.tools.plans.call_plan`, keyed by the root seed, the session
and the call's tool_use id exactly as the simulator keys it, so the same call of the same session
plays the same way every run, and as its simulated twin. Playing it: progress at the plan's
offsets, then after its duration the result text ("success"), a `ToolError` ("error"), a
`RuntimeError` ("exception"), or no end at all ("hang": the call runs until the loop cancels it
or the driver's tool timeout ends it). `speed` divides every delay. The plan's permission part
is not played here: it is the simulated user's answer (`toolturn.user`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable

from toolturn.live.tools import LiveCall, LiveTool, ToolError
from toolturn.runtime.results import ToolContent
from toolturn.tools.execution import CallPlan
from toolturn.tools.plans import call_plan
from toolturn.tools.spec import ToolSpec

NS_PER_S = 1_000_000_000


def simulated_tools(
    specs: Iterable[ToolSpec], root_seed: int, *, session: int = 0, speed: float = 1.0
) -> dict[str, LiveTool]:
    """One live tool per spec, by name."""
    if not speed > 0:
        raise ValueError(f"speed must be positive, got {speed}")
    return {spec.name: _simulated(spec, root_seed, session, speed) for spec in specs}


def _simulated(spec: ToolSpec, root_seed: int, session: int, speed: float) -> LiveTool:
    async def tool(call: LiveCall) -> ToolContent:
        plan = call_plan(spec, root_seed, session, call.tool_use_id)
        return await play(plan, call, speed)

    return tool


async def play(plan: CallPlan, call: LiveCall, speed: float) -> ToolContent:
    """Carry out `plan` for `call` in real time divided by `speed`."""
    if plan.duration_ns is None:  # a hang
        await asyncio.Event().wait()
    assert plan.duration_ns is not None
    start_ns = time.monotonic_ns()
    for offset_ns in plan.progress_ns:
        await _sleep_until(start_ns + round(offset_ns / speed))
        call.progress({"elapsed_ns": offset_ns, "of_ns": plan.duration_ns})
    await _sleep_until(start_ns + round(plan.duration_ns / speed))
    if plan.outcome == "error":
        raise ToolError(plan.text)
    if plan.outcome == "exception":
        raise RuntimeError(plan.text)
    return plan.text


async def _sleep_until(deadline_ns: int) -> None:
    wait_ns = deadline_ns - time.monotonic_ns()
    if wait_ns > 0:
        await asyncio.sleep(wait_ns / NS_PER_S)
