"""Simulated tools for the live driver: a call plan played in real time, keyed by the call."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.helpers.model_support import SPECS
from toolturn.live import LiveCall, ToolError, simulated_tools
from toolturn.live.simulated_tools import play
from toolturn.tools.execution import CallPlan, Outcome

MS = 1_000_000


def plan(outcome: Outcome, duration_ns: int | None = 40 * MS,
         progress_ns: tuple[int, ...] = ()) -> CallPlan:
    return CallPlan(permitted=True, asked=False, permission_delay_ns=0, outcome=outcome,
                    duration_ns=duration_ns, progress_ns=progress_ns, text=f"{outcome} text")


def live_call(seen: list[Any], tool_use_id: str = "toolu_1") -> LiveCall:
    return LiveCall(tool_use_id, "Read", {"file_path": "/a"}, seen.append)


def test_a_successful_plan_reports_progress_then_returns_its_text() -> None:
    seen: list[Any] = []
    result = asyncio.run(play(plan("success", progress_ns=(10 * MS, 20 * MS)), live_call(seen),
                              speed=100.0))
    assert result == "success text"
    assert seen == [{"elapsed_ns": 10 * MS, "of_ns": 40 * MS},
                    {"elapsed_ns": 20 * MS, "of_ns": 40 * MS}]


@pytest.mark.parametrize(("outcome", "raised"), [("error", ToolError), ("exception", RuntimeError)])
def test_failing_plans_raise_what_the_driver_maps_to_their_outcome(
    outcome: Outcome, raised: type[Exception]
) -> None:
    with pytest.raises(raised, match=f"{outcome} text"):
        asyncio.run(play(plan(outcome), live_call([]), speed=100.0))


def test_a_hanging_plan_runs_until_cancelled() -> None:
    async def scenario() -> bool:
        task = asyncio.create_task(play(plan("hang", duration_ns=None), live_call([]), 100.0))
        await asyncio.sleep(0.05)
        running = not task.done()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return running and task.cancelled()

    assert asyncio.run(scenario())


def test_the_same_call_of_the_same_session_plays_the_same_way() -> None:
    async def outputs(session: int, tool_use_id: str) -> str:
        tools = simulated_tools([SPECS["Grep"]], root_seed=3, session=session, speed=1000.0)
        result = await tools["Grep"](live_call([], tool_use_id))
        assert isinstance(result, str)
        return result

    async def scenario() -> list[str]:
        return [await outputs(1, "toolu_a"), await outputs(1, "toolu_a"),
                *[await outputs(session, "toolu_a") for session in range(2, 8)]]

    first, again, *others = asyncio.run(scenario())
    assert first == again
    assert any(other != first for other in others)


def test_speed_must_be_positive() -> None:
    with pytest.raises(ValueError, match="speed must be positive"):
        simulated_tools([SPECS["Read"]], 1, speed=0.0)
