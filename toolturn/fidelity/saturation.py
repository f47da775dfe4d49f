"""Could the live run keep up? A live run measures the real path only while its own process has
time to spare: on a loaded host (or at a speed that asks too much of one core) its timers wake
late and every figure grows by the harness's own lateness, not the simulator's error.

Two signs, each against a limit (`Limits`): the event loop's lateness p95, in wall-clock ms
(how late a 10 ms sleep woke, `toolturn.fidelity.overhead.LagSampler`), and the share of one
core the live process used over its wall time. Past either, the run was saturated, by how much
is the ratio to the limit, and the speed (or the number of sessions at once: a closed loop's
concurrency, not its total of sessions) that would fit is the present one divided by the
largest ratio: both signs grow about in proportion to the work asked per wall-clock second,
which the speed and the sessions at once multiply.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    lag_p95_ms: float = 2.0
    cpu_percent: float = 80.0


@dataclass(frozen=True, slots=True)
class Saturation:
    lag_p95_ms: float
    cpu_percent: float
    limits: Limits
    speed: float
    # Sessions running at once in a closed loop (the largest level), None for an open loop.
    sessions_at_once: int | None

    @property
    def excess(self) -> float:
        """The largest ratio of a sign to its limit (above 1: saturated); an unmeasured sign
        (NaN) counts as within."""
        ratios = [value / limit for value, limit in (
            (self.lag_p95_ms, self.limits.lag_p95_ms),
            (self.cpu_percent, self.limits.cpu_percent),
        ) if math.isfinite(value) and limit > 0]
        return max(ratios, default=0.0)

    @property
    def saturated(self) -> bool:
        return self.excess > 1.0

    def reasons(self) -> list[str]:
        """What passed its limit, and by how much."""
        reasons = []
        if self.lag_p95_ms > self.limits.lag_p95_ms:
            reasons.append(f"event loop lateness p95 {self.lag_p95_ms:.2f} ms of wall time "
                           f"(limit {self.limits.lag_p95_ms:g} ms, "
                           f"{self.lag_p95_ms / self.limits.lag_p95_ms:.1f}x)")
        if self.cpu_percent > self.limits.cpu_percent:
            reasons.append(f"live process at {self.cpu_percent:.0f}% of a core "
                           f"(limit {self.limits.cpu_percent:g}%, "
                           f"{self.cpu_percent / self.limits.cpu_percent:.2f}x)")
        return reasons

    def suggested_speed(self) -> float:
        """The speed that would fit, at two significant digits rounded down."""
        return _round_down(self.speed / max(self.excess, 1.0))

    def suggested_sessions(self) -> int | None:
        if self.sessions_at_once is None:
            return None
        return max(1, math.floor(self.sessions_at_once / max(self.excess, 1.0)))

    def suggestion(self) -> str:
        advice = f"--speed {self.suggested_speed():g}"
        sessions = self.suggested_sessions()
        if sessions is not None and self.sessions_at_once is not None and sessions > 1:
            # Sessions at once are the scenario's concurrency: `--sessions` sets how many run
            # in all, which leaves as many at once (while it exceeds the concurrency).
            advice += (f", or about {sessions} sessions at once instead of "
                       f"{self.sessions_at_once} ([load] concurrency = {sessions} in the "
                       "scenario)")
        return advice

    def to_json(self) -> dict[str, object]:
        return {
            "lag_p95_ms": _finite(self.lag_p95_ms),
            "cpu_percent": _finite(self.cpu_percent),
            "limits": {"lag_p95_ms": self.limits.lag_p95_ms,
                       "cpu_percent": self.limits.cpu_percent},
            "saturated": self.saturated,
            "excess": self.excess,
            "reasons": self.reasons(),
            "suggested_speed": self.suggested_speed() if self.saturated else None,
            "suggested_sessions": self.suggested_sessions() if self.saturated else None,
        }


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _round_down(value: float) -> float:
    if value <= 0 or not math.isfinite(value):
        return value
    scale = 10.0 ** (math.floor(math.log10(value)) - 1)
    return round(math.floor(value / scale + 1e-9) * scale, 12)
