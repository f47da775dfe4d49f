"""The points of a run. A scenario without `[experiment]` is one point: itself, with an empty key,
so a plain run's tables and seeds are what they were before experiments existed.

The runner simulates every point; each point's tables carry its key. A point's `scenario` is
complete (its overrides applied, its own seed) and has no `[experiment]` of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.scenario.schema import Scenario

# One override of a point: a dotted path into the scenario and the value put there, e.g.
# ("load.concurrency", 16).
Setting = tuple[str, object]


@dataclass(frozen=True, slots=True)
class Point:
    """One point of an experiment: its position in the run's order, its settings, which
    replication it is, and the complete scenario it simulates."""

    index: int
    key: tuple[Setting, ...]
    replication: int
    scenario: Scenario


def points_of(scenario: Scenario) -> list[Point]:
    """The run's points in their fixed order."""
    return [Point(index=0, key=(), replication=0, scenario=scenario)]
