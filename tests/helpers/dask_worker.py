"""What a Dask worker runs to say how often its periodic work wakes it."""

from __future__ import annotations

import distributed


def periodic_work() -> dict[str, float | None]:
    """The period (ms) of the calling worker's profiler, health tick, system monitor and memory
    check; None for one it does not run."""
    callbacks = distributed.get_worker().periodic_callbacks
    return {
        name: callbacks[name].callback_time if name in callbacks else None
        for name in ("profile", "tick", "monitor", "memory_monitor")
    }
