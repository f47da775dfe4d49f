"""simpy's environment, typed for the engine's integer time.

simpy types time as `int | float`; the engine only ever schedules whole nanoseconds (DESIGN.md
rule 6), so its clock reads as an `int` and flows into the runtime's `now_ns: int` unconverted.
"""

from __future__ import annotations

import simpy


class Clock(simpy.Environment):
    """A simpy environment whose `now` is integer nanoseconds (start at 0, integer delays only)."""

    @property
    def now(self) -> int:
        # simpy's own property returns the same attribute: no cost over it.
        return self._now  # type: ignore[return-value]
