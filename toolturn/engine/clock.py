"""simpy's environment, typed for the engine's integer time.

simpy types time as `int | float`; the engine only ever schedules whole nanoseconds (DESIGN.md
rule 6), so its clock reads as an `int` and flows into the runtime's `now_ns: int` unconverted.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappush
from typing import Any

import simpy
from simpy.events import NORMAL


class Clock(simpy.Environment):
    """A simpy environment whose `now` is integer nanoseconds (start at 0, integer delays only)."""

    @property
    def now(self) -> int:
        # simpy's own property returns the same attribute: no cost over it.
        return self._now  # type: ignore[return-value]

    def call_at(self, time_ns: int, action: Callable[..., None], *args: Any) -> None:
        """Run `action(*args)` at `time_ns` (now if it has passed): the one callback of an event,
        cheaper than a process for work that only waits. Actions due at the same time run in the
        order they were scheduled, as simpy orders its own events."""
        # Scheduled as `Environment.schedule` does it, without a `Timeout` and a closure: the
        # engine schedules thousands of these per simulated second.
        # simpy types its queue as holding `Event`s; a `_Call` is read as one (see below).
        queue: list[tuple[int | float, int, int, Any]] = self._queue  # type: ignore[assignment]
        heappush(queue, (max(time_ns, self._now), NORMAL, next(self._eid), _Call(action, args)))


def _fire(call: _Call) -> None:
    call.action(*call.args)


# Every call's callbacks: a tuple shared by all (simpy's `step` only iterates it, then sets the
# event's own attribute to None).
_FIRE = (_fire,)


class _Call:
    """An event already triggered, whose one callback is `action(*args)`: what simpy's
    `Environment.step` reads of an event (`callbacks`, `_ok`) and no more. Not a `simpy.Event`:
    an event has a `__dict__` and a bound method per instance; nothing but `step` ever sees this
    one."""

    __slots__ = ("action", "args", "callbacks")
    _ok = True  # triggered, and never failed

    def __init__(self, action: Callable[..., None], args: tuple[Any, ...]) -> None:
        self.callbacks: tuple[Callable[[_Call], None], ...] | None = _FIRE
        self.action = action
        self.args = args
