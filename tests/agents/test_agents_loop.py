"""The virtual-time event loop (toolturn/agents/virtual_loop.py): timers jump, threads are waited
for, a stall is an error, the real time per virtual instant is measured."""

from __future__ import annotations

import asyncio
import time

import pytest

from toolturn.agents.virtual_loop import VirtualStall, run_virtual


def test_sleeps_and_timeouts_take_virtual_time_only() -> None:
    async def main() -> tuple[int, int]:
        start = time.monotonic_ns()
        await asyncio.sleep(3600)
        async with asyncio.timeout(5):
            await asyncio.sleep(2.5)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(1):
                await asyncio.Event().wait()
        await asyncio.gather(asyncio.sleep(10), asyncio.sleep(20))
        return time.monotonic_ns() - start, getattr(asyncio.get_running_loop(), "clock_ns")  # noqa: B009

    wall = time.perf_counter()
    (elapsed, clock), steps = run_virtual(main())
    assert elapsed == 3623_500_000_000 == clock  # monotonic reads the virtual clock exactly
    assert time.perf_counter() - wall < 2.0  # an hour of sleeping, not waited for
    assert steps.steps >= 4


def test_the_real_clock_is_back_afterwards() -> None:
    run_virtual(asyncio.sleep(1000))
    before = time.monotonic()
    time.sleep(0.01)
    assert 0.005 < time.monotonic() - before < 5.0


def test_work_in_a_thread_is_waited_for_and_takes_no_virtual_time() -> None:
    async def main() -> tuple[int, int]:
        total = await asyncio.to_thread(lambda: (time.sleep(0.02), sum(range(1000)))[1])
        return total, time.monotonic_ns()

    (total, at), _ = run_virtual(main())
    assert total == 499500 and at == 0


def test_a_stall_is_an_error_not_a_hang() -> None:
    with pytest.raises(VirtualStall, match="every task waits"):
        run_virtual(asyncio.Event().wait())


def test_a_stall_handler_may_end_the_stuck_tasks() -> None:
    async def main() -> str:
        task = asyncio.create_task(asyncio.Event().wait())
        setattr(asyncio.get_running_loop(), "on_stall", task.cancel)  # noqa: B010
        try:
            await task
        except asyncio.CancelledError:
            return "ended"
        return "not reached"

    assert run_virtual(main())[0] == "ended"


def test_blocking_work_shows_in_the_real_time_of_its_step() -> None:
    async def main() -> None:
        await asyncio.sleep(7)
        time.sleep(0.05)  # a blocking call: the clock stands still meanwhile
        await asyncio.sleep(1)

    _, steps = run_virtual(main())
    assert steps.max_real_ns >= 50_000_000
    assert steps.max_at_ns == 7_000_000_000
