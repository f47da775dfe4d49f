"""Python's cyclic garbage collector, run less often while a simulation runs.

A simulation allocates millions of short-lived containers (every stream event is two dicts,
every command an object) while keeping a growing set of long-lived ones (transcripts, records,
the rows of finished sessions). With the default threshold the collector runs a young
collection every 700 allocations and, every few of those, walks the survivors again: about a
fifth of the simulation's wall time on `scenarios/default.toml` (the engine ran 25-30% faster
with a threshold of 10,000, and 100,000 saves another 2% of its instructions), for almost no
garbage (a run of 20 sessions leaves about a thousand objects in cycles).

The objects that exist when a simulation starts (the libraries' modules, the scenario, earlier
runs' rows: a quarter of a million in `toolturn run`) are frozen for its duration (`gc.freeze`): the
collector's full collections would otherwise walk them all, for nothing, several times per
simulation (the default scenario ran 7% to 29% faster per policy with them frozen). A caller
that froze objects itself is left as it is.
A higher threshold makes the collections rare; cycles that do form (simpy's processes and their
events) are still collected, later, so memory stays bounded. Simulated results never depend on it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# Allocations between young collections while simulating (Python's default: 700).
SIMULATION_GEN0_THRESHOLD = 100_000


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the collector's young-generation threshold and freeze what exists for the block,
    then restore both."""
    before = gc.get_threshold()
    freezing = gc.get_freeze_count() == 0
    gc.set_threshold(max(before[0], SIMULATION_GEN0_THRESHOLD), *before[1:])
    if freezing:
        gc.freeze()
    try:
        yield
    finally:
        if freezing:
            gc.unfreeze()
        gc.set_threshold(*before)
