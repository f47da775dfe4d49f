"""The plan of a run: its simulations (`Unit`: each executor policy under each recovery profile
at each load level of each experiment point) and the tasks they are cut into (`Task`: a unit
whole, or one block of its sessions, `toolturn.engine.blocks`), in the fixed order of the run's
tables. A pure function of the scenario and its points: every backend runs the same plan."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from toolturn.engine.arrivals import load_levels
from toolturn.engine.blocks import session_blocks
from toolturn.experiment.points import Point, points_of
from toolturn.scenario.schema import Scenario

__all__ = ["Task", "Unit", "UnitProgress", "has_point_columns", "tasks_of", "units_of"]


@dataclass(frozen=True, slots=True)
class Unit:
    """One simulation of a run."""

    policy: str
    load: float | None
    # The level's position in the sweep (0 without a sweep): the `load_level` of its rows.
    load_level: int = 0
    profile: str = "default"
    # The experiment point it simulates (`Point.index`) and how people read it ("" for a plain
    # scenario's one point).
    point: int = 0
    point_label: str = ""
    # The wire protocol its turns are spoken in (`toolturn.runtime.protocol_timing`).
    protocol: str = "anthropic"

    @property
    def columns(self) -> dict[str, Any]:
        """The columns every row of it has (`schema.UNIT_COLUMNS`), added when the run's tables
        are assembled from its parts (`toolturn.metrics.assemble`)."""
        return {
            "policy": self.policy, "profile": self.profile, "protocol": self.protocol,
            "load_level": self.load_level, "load": self.load,
        }

    @property
    def label(self) -> str:
        arm = self.policy if self.profile == "default" else f"{self.policy} [{self.profile}]"
        arm = arm if self.protocol == "anthropic" else f"{arm} on {self.protocol}"
        arm = arm if self.load is None else f"{arm} @ {self.load:g}"
        return f"{arm} ({self.point_label})" if self.point_label else arm


@dataclass(frozen=True, slots=True)
class Task:
    """What one process runs at a time: a unit (its index in the run), whole or one block."""

    unit_index: int
    unit: Unit
    block: range | None = None

    @property
    def name(self) -> str:
        """Its parts folder's name: the tables' order (profile, policy, level, block) spelt out
        (`parts_in_order` sorts by the fields, not by this)."""
        first = 0 if self.block is None else self.block.start
        unit = self.unit
        return (f"point{unit.point}.{unit.profile}.{unit.protocol}.{unit.policy}"
                f".level{unit.load_level}.from{first}")

    @property
    def label(self) -> str:
        """How people read it: its unit's label, and its sessions when it is one block."""
        block = self.block
        return self.unit.label if block is None else (
            f"{self.unit.label}, sessions {block.start}-{block.stop - 1}"
        )

    @property
    def order(self) -> tuple[int, str, str, str, int, int]:
        """Where its rows go in the run's tables: by their sort key (point, profile, protocol,
        policy, level, session id)."""
        first = 0 if self.block is None else self.block.start
        unit = self.unit
        return (unit.point, unit.profile, unit.protocol, unit.policy, unit.load_level, first)


# Called with (unit index, sessions finished in that unit).
UnitProgress = Callable[[int, int], None]

def units_of(scenario: Scenario, points: Sequence[Point] | None = None) -> list[Unit]:
    """The run's simulations in their fixed order: point by point (`points`, by default the
    scenario's), then by load level, then profile, protocol and policy of the point's
    scenario."""
    return [
        Unit(policy, level, index, profile, point.index, _point_label(point), protocol)
        for point in (points_of(scenario) if points is None else points)
        for index, level in enumerate(load_levels(point.scenario.load))
        for profile in point.scenario.runtime.profiles
        for protocol in point.scenario.model.protocols
        for policy in point.scenario.runtime.policies
    ]


def _point_label(point: Point) -> str:
    if not point.key and point.replication == 0:
        return ""
    settings = ", ".join(f"{path}={value}" for path, value in point.key)
    return f"{settings}, replication {point.replication}" if settings else (
        f"replication {point.replication}"
    )


def tasks_of(scenario: Scenario, points: Sequence[Point] | None = None) -> list[Task]:
    """The run's tasks: each unit in order, by its blocks (`toolturn.engine.blocks`)."""
    points = points_of(scenario) if points is None else list(points)
    blocks = {point.index: session_blocks(point.scenario) for point in points}
    return [
        Task(index, unit, block)
        for index, unit in enumerate(units_of(scenario, points))
        for block in blocks[unit.point]
    ]


def has_point_columns(points: Sequence[Point]) -> bool:
    """Whether the run's tables carry the point columns (`toolturn.metrics.point_columns`): a run of
    more than one point, or of a point with settings."""
    return len(points) > 1 or any(point.key for point in points)

