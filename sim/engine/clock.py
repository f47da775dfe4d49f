"""simpy's environment, typed for the engine's integer time.

simpy types time as `int | float`; the engine only ever schedules whole nanoseconds (DESIGN.md
rule 6), so its clock reads as an `int` and flows into the runtime's `now_ns: int` unconverted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import simpy


class Clock(simpy.Environment):
    """A simpy environment whose `now` is integer nanoseconds (start at 0, integer delays only)."""

    @property
    def now(self) -> int:
        # simpy's own property returns the same attribute: no cost over it.
        return self._now  # type: ignore[return-value]

    def call_at(self, time_ns: int, action: Callable[..., None], *args: Any) -> None:
        """Run `action(*args)` at `time_ns` (now if it has passed): a callback on a timeout,
        cheaper than a process for work that only waits."""
        self.timeout(max(0, time_ns - self._now)).callbacks.append(lambda _: action(*args))
