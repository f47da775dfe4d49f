"""The points of a run. A scenario without `[experiment]` is one point: itself, with an empty key,
so a plain run's tables and seeds are what they were before experiments existed.

The runner simulates every point; each point's tables carry its key. A point's `scenario` is
complete (its overrides applied, its own seed) and has no `[experiment]` of its own.

Rules (toolturn.scenario.experiment says what the table holds):

1. A point's scenario is the file's data with the point's values put at their paths
   (toolturn.experiment.paths), without `[experiment]`, validated as a file is: a value wrong at its
   path is a UserError naming the point, the path and the reason.
2. A point's seed is a hash of the root seed, the point's key text (`key_text`) and its
   replication, never of its position: adding, removing or reordering points changes no other
   point's draws.
3. The order is the experiment's (`ExperimentConfig.keys`), each key's replications together;
   `index` numbers the points of the run from 0 in that order.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from pydantic import ValidationError

from toolturn.errors import UserError
from toolturn.experiment.paths import with_settings, without_path
from toolturn.limits import MAX_SEED
from toolturn.scenario.experiment import value_text
from toolturn.scenario.loader import validation_error
from toolturn.scenario.schema import Scenario

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


def settings_text(key: tuple[Setting, ...]) -> str:
    """A key as one string: `path=value` in key order, values as compact JSON, joined by `;`
    (`load.concurrency=4;model.profile="haiku"`); empty for the empty key."""
    return ";".join(f"{path}={value_text(value)}" for path, value in key)


def key_text(point: Point) -> str:
    """The point's key as the `point_key` column holds it (`settings_text`)."""
    return settings_text(point.key)


def point_seed(root_seed: int, key: tuple[Setting, ...], replication: int) -> int:
    """The seed of one replication of one point (rule 2): BLAKE2b of the root seed, the key's
    text and the replication, read as an integer in [0, MAX_SEED]."""
    text = "\x1f".join((str(root_seed), settings_text(key), str(replication)))
    digest = hashlib.blake2b(text.encode(), digest_size=8, person=b"sim.point").digest()
    return int.from_bytes(digest, "little") & MAX_SEED


def points_of(scenario: Scenario, source: str | None = None) -> list[Point]:
    """The run's points in their fixed order (rule 3); raises UserError (rule 1), its message
    starting with `source` (the file) or else the scenario's name."""
    experiment = scenario.experiment
    if experiment is None:
        return [Point(index=0, key=(), replication=0, scenario=scenario)]
    points: list[Point] = []
    for key in experiment.keys:
        for replication in range(experiment.replications):
            point = point_scenario(scenario, key, replication, source=source)
            points.append(Point(len(points), key, replication, point))
    return points


def point_scenario(
    scenario: Scenario,
    key: tuple[Setting, ...],
    replication: int,
    *,
    drop: tuple[str, ...] = (),
    source: str | None = None,
) -> Scenario:
    """The scenario of one replication of the point `key` (rules 1 and 2), without
    `[experiment]` and without the dotted paths of `drop` (`load.sweep`: a capacity search sets
    the load itself); raises UserError (rule 1)."""
    described = f"{source or scenario.name}: experiment point {settings_text(key) or '(base)'}"
    data = scenario.model_dump(mode="python", exclude_unset=True)
    data.pop("experiment", None)
    for path in drop:
        without_path(data, path)
    try:
        data = with_settings(data, key)
    except UserError as error:
        raise UserError(f"{described}: {error.message}") from None
    data["seed"] = point_seed(scenario.seed, key, replication)
    try:
        point = Scenario.model_validate(data)
    except ValidationError as error:
        raise validation_error(described, error, data) from None
    # Like a command-line override (toolturn.scenario.loader.with_overrides): the file's hash.
    point._content_hash = scenario.content_hash
    return point
