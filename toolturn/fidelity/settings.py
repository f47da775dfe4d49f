"""How a live run reaches its model (the speed, the endpoint and its key) and how close a live run
must come to its simulated twin: apart from the run and the comparison, so the command line reads
them without loading the SDK and pandas (seconds, which every other command would wait for)."""

from __future__ import annotations

from dataclasses import dataclass

# The key sent to a loopback endpoint (`toolturn serve` takes any key): never a real one.
LOOPBACK_KEY = "sim-live"


@dataclass(frozen=True, slots=True)
class LiveSettings:
    speed: float = 1.0
    # None: an embedded `toolturn serve` of the scenario on a free loopback port.
    base_url: str | None = None
    api_key: str = LOOPBACK_KEY
    # The SDK's timeout per request, in wall-clock seconds.
    timeout_s: float = 600.0
    # Sample the event loop's lateness while the units run (`toolturn.fidelity.overhead`).
    sample_lag: bool = False


@dataclass(frozen=True, slots=True)
class Tolerances:
    """Relative errors allowed of a median and a p95, and a difference in ms (scenario time) that
    passes whatever its relative error."""

    median: float = 0.05
    p95: float = 0.10
    absolute_ms: float = 1.0
