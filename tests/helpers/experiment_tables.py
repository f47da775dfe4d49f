"""The tables of a small experiment: as the runner simulates it, and as its points run one by
one would give them."""

from __future__ import annotations

import pyarrow as pa

from toolturn.engine.runner import run_scenario
from toolturn.experiment.points import key_text, points_of
from toolturn.scenario.schema import Scenario

# A small experiment: two points (concurrency 1 and 3), three replications, two policies.
SCENARIO = """
name = "replicated"
seed = 11
[load]
mode = "closed"
sessions = 3
concurrency = 2
[runtime]
policies = ["streaming", "serial"]
[model.script]
kind = "generated"
tool_calls = { kind = "fixed", n = 3 }
tool_mix = { Read = 1, Grep = 1, Glob = 1 }
[experiment]
replications = 3
[experiment.grid]
"load.concurrency" = [1, 3]
"""


def experiment_tables(scenario: Scenario) -> dict[str, pa.Table]:
    """The run tables of an experiment as `toolturn run` simulates it: every point, with the point
    columns."""
    return run_scenario(scenario).tables("run")


def points_run_alone(scenario: Scenario) -> dict[str, pa.Table]:
    """Every point's scenario run on its own (a plain run), its tables given the point columns
    by hand and joined in point order: what the runner's tables of the experiment must equal."""
    parts: dict[str, list[pa.Table]] = {}
    for point in points_of(scenario):
        tables = run_scenario(point.scenario).tables("run")
        for name, table in tables.items():
            rows = table.num_rows
            table = table.append_column(
                pa.field("point", pa.int32()), pa.array([point.index] * rows, pa.int32())
            )
            table = table.append_column(
                pa.field("replication", pa.int32()),
                pa.array([point.replication] * rows, pa.int32()),
            )
            table = table.append_column(
                pa.field("point_key", pa.string()), pa.array([key_text(point)] * rows, pa.string())
            )
            parts.setdefault(name, []).append(table)
    return {name: pa.concat_tables(tables) for name, tables in parts.items()}
