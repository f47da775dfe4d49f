"""The `[experiment]` table of a scenario: which scenario values vary, and how many seeds each
combination runs.

    [experiment]
    replications = 2                       # seeds per point (default 1)
    [experiment.grid]                      # every combination (the cartesian product)...
    "load.concurrency" = [4, 16]
    "model.profile" = ["haiku", "sonnet"]

    [[experiment.points]]                  # ...or the points listed, one table each
    "load.concurrency" = 4
    "tools.override.Bash.duration.median_ms" = 200

A path names a scenario value by its keys joined by dots, as the file would nest them
(`tools.override.Bash.duration.median_ms`: the key `Bash` of the table `tools.override`). This
table checks only its own shape: paths spelled as keys, no value or point given twice, no path
inside another of the same point, the number of points bounded. Whether a value is right at its
path is known only once it is put there: `toolturn.experiment.points` builds each point's scenario
and validates it as a file would be.
"""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from toolturn.field_problems import FieldProblem, raise_problems, repeated
from toolturn.tools.json_values import json_problems

# The most points one experiment may have (replications included): each is a whole run.
MAX_POINTS = 10_000
# A path's keys: TOML bare keys (tool names are spelled the same way).
_PATH = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*")
# Values a point cannot set, and why.
_RESERVED = {
    "seed": "each point's seed derives from the root seed and the point's key",
    "experiment": "a point cannot change the experiment it belongs to",
}


def _json_value(value: Any) -> Any:
    # TOML dates and times, inf and nan are no JSON: a point's key is written as JSON.
    raise_problems("ExperimentValue", json_problems({"value": value}))
    return value


Value = Annotated[Any, AfterValidator(_json_value)]


def value_text(value: Any) -> str:
    """A value as its key spells it: compact JSON with sorted keys (`4`, `"haiku"`,
    `["serial"]`)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class ExperimentConfig(BaseModel):
    """Points over scenario values: a `grid` (every combination of its values, the first path
    varying slowest) or a list of `points`, or neither (the scenario itself); each point runs
    `replications` times, on seeds derived from the root seed, its key and the replication."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)

    replications: int = Field(
        default=1, ge=1, le=MAX_POINTS, description="Seeds per point (for confidence intervals)."
    )
    grid: dict[str, Annotated[list[Value], Field(min_length=1)]] | None = Field(
        default=None,
        min_length=1,
        description="Dotted path -> the values it takes; the points are every combination.",
    )
    points: list[Annotated[dict[str, Value], Field(min_length=1)]] | None = Field(
        default=None,
        min_length=1,
        description="The points one by one: each a table of dotted path -> value.",
    )

    @model_validator(mode="after")
    def _shape(self) -> ExperimentConfig:
        problems: list[FieldProblem] = []
        if self.grid is not None and self.points is not None:
            problems.append(FieldProblem(("points",), "give grid or points, not both"))
        if self.grid is not None:
            problems += _path_problems(list(self.grid), ("grid",))
            for path, values in self.grid.items():
                twice = repeated([value_text(value) for value in values])
                if twice:
                    problems.append(
                        FieldProblem(
                            ("grid", path), f"values listed more than once: {', '.join(twice)}"
                        )
                    )
        if self.points is not None:
            seen: dict[tuple[tuple[str, str], ...], int] = {}
            for index, point in enumerate(self.points):
                problems += _path_problems(list(point), ("points", index))
                key = tuple(sorted((path, value_text(v)) for path, v in point.items()))
                if key in seen:
                    problems.append(
                        FieldProblem(("points", index), f"the same point as points[{seen[key]}]")
                    )
                seen.setdefault(key, index)
        if not problems and self.count > MAX_POINTS:
            problems.append(
                FieldProblem(
                    ("replications",) if self.grid is None and self.points is None else (),
                    f"{self.count} points with replications, more than {MAX_POINTS}",
                )
            )
        raise_problems("ExperimentConfig", problems)
        return self

    @property
    def keys(self) -> list[tuple[tuple[str, Any], ...]]:
        """Each point's settings, (path, value) in the order the file gives the paths, in the
        experiment's order: the grid's combinations with its first path varying slowest, or the
        points as listed; one empty key when neither is given."""
        if self.grid is not None:
            keys: list[tuple[tuple[str, Any], ...]] = [()]
            for path, values in self.grid.items():
                keys = [(*key, (path, value)) for key in keys for value in values]
            return keys
        if self.points is not None:
            return [tuple(point.items()) for point in self.points]
        return [()]

    @property
    def count(self) -> int:
        """How many points the experiment runs, replications included."""
        if self.grid is not None:
            return math.prod(len(values) for values in self.grid.values()) * self.replications
        return len(self.points or [{}]) * self.replications


def _path_problems(paths: list[str], loc: tuple[str | int, ...]) -> list[FieldProblem]:
    problems = []
    for path in paths:
        if not _PATH.fullmatch(path):
            problems.append(
                FieldProblem(
                    (*loc, path),
                    "not a dotted path of keys (letters, digits, _ and -, joined by dots)",
                )
            )
        elif path.split(".")[0] in _RESERVED:
            problems.append(FieldProblem((*loc, path), _RESERVED[path.split(".")[0]]))
        for other in paths:
            if other != path and other.startswith(path + "."):
                problems.append(
                    FieldProblem((*loc, other), f"is inside {path}, which this point also sets")
                )
    return problems
