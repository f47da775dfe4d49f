"""When sessions are due: the arrival schedule of one load level.

- closed loop: `concurrency` sessions are due at time 0; each later one is due the moment a
  running session ends (a free slot), so its arrival is its start.
- open loop: sessions are due at fixed times, however many are running: a Poisson process of
  `rate` per second drawn from the keyed stream "arrivals" (the same unit-rate draws, scaled, at
  every rate of a sweep), or the scenario's trace.

Latency is measured from these due times (no coordinated omission): an open-loop session that
is due is started at once, never held back until the system has room.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toolturn.randomness import stream
from toolturn.scenario.schema import LoadConfig

NS_PER_S = 1_000_000_000


@dataclass(frozen=True, slots=True)
class ClosedLoop:
    """`concurrency` sessions at a time until `sessions` have run."""

    sessions: int
    concurrency: int


@dataclass(frozen=True, slots=True)
class OpenLoop:
    """Session `i` is due at `arrivals_ns[i]` (non-decreasing, from the run's start)."""

    arrivals_ns: tuple[int, ...]


Arrivals = ClosedLoop | OpenLoop


def poisson_arrivals(seed: int, sessions: int, rate_per_s: float) -> tuple[int, ...]:
    """`sessions` arrival times of a Poisson process of `rate_per_s`, the first one gap after 0."""
    unit_gaps = stream(seed, "arrivals").exponential(1.0, sessions)
    # Scale once and sum in integers, so the times never carry accumulated float error.
    gaps_ns = np.maximum(np.round(unit_gaps * (NS_PER_S / rate_per_s)), 0).astype(np.int64)
    return tuple(int(t) for t in np.cumsum(gaps_ns))


def arrivals_for(load: LoadConfig, seed: int, level: float | None) -> Arrivals:
    """The schedule at load `level` (a concurrency or a rate; None for a trace)."""
    if load.mode == "closed":
        assert level is not None
        return ClosedLoop(load.sessions, int(level))
    trace = load.trace_ns
    if trace is not None:
        return OpenLoop(trace)
    assert level is not None
    return OpenLoop(poisson_arrivals(seed, load.sessions, level))


def load_levels(load: LoadConfig) -> tuple[float | None, ...]:
    """The load levels a scenario runs at: its sweep, its one level, or (None,) for a trace."""
    return load.levels or (None,)
