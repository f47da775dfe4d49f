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
        heappush(
            self._queue,
            (max(time_ns, self._now), NORMAL, next(self._eid), _Call(self, action, args)),
        )


class _Call(simpy.Event):
    """An event already triggered, whose one callback is `action(*args)`."""

    def __init__(self, env: Clock, action: Callable[..., None], args: tuple[Any, ...]) -> None:
        # As simpy's own `Timeout` does, the fields `Event.__init__` and `succeed` set, inline.
        self.env = env
        self.callbacks = [self._run]
        self._value = None
        self._ok = True
        self._action = action
        self._args = args

    def _run(self, _: simpy.Event) -> None:
        self._action(*self._args)
