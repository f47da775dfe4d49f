"""Small scenarios and one-call runs of the engine, shared by the engine's tests."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from toolturn.engine.simulation import SimulationResult, simulate
from toolturn.metrics.row_columns import Columns
from toolturn.scenario.loader import with_overrides
from toolturn.scenario.schema import Scenario

ROOT = Path(__file__).resolve().parents[2]
# One session, one prompt, fixed latencies, one tool call followed by more text (so message_stop
# comes well after the tool_use block's stop), then a final answer.
ARITHMETIC = """
name = "arithmetic"
seed = 5
[load]
mode = "closed"
sessions = 1
concurrency = 1
[session]
user_prompts = 1
[runtime]
policies = ["streaming", "at_message_stop", "serial"]
[model.latency]
ttft = { kind = "fixed", ms = 700 }
token_gap = { kind = "fixed", ms = 13 }
tool_use_pause = { kind = "fixed", ms = 250 }
json_chunk_gap = { kind = "fixed", ms = 3 }
block_gap = { kind = "fixed", ms = 40 }
[model.script]
kind = "explicit"
[[model.script.responses]]
blocks = [
  { type = "text", text = "Let me read the file first." },
  { type = "tool_use", name = "Lint", input = { path = "a.py" } },
  { type = "text", text = "While that runs, here is what I expect to find in it, at some length." },
]
[[model.script.responses]]
blocks = [{ type = "text", text = "All clean." }]
[tools]
catalogue = "none"
[[tools.define]]
name = "Lint"
input_schema = { type = "object", properties = { path = { type = "string" } }, required = ["path"] }
duration = { kind = "fixed", ms = 400 }
"""
STRICT = """
name = "strict"
seed = 11
[load]
mode = "closed"
sessions = 3
concurrency = 3
[runtime]
strict = true
policies = ["streaming"]
[model.script]
kind = "generated"
end_probability = 0.0
max_turns = 4
tool_calls = 1
tool_mix = { Read = 1 }
[model.faults]
duplicate_tool_id = 1.0
"""


def scenario_of(text: str, **overrides: Any) -> Scenario:
    data = tomllib.loads(text)
    for path, value in overrides.items():
        table = data
        *parents, key = path.split(".")
        for parent in parents:
            table = table.setdefault(parent, {})
        table[key] = value
    return Scenario.model_validate(data)


def default_scenario(sessions: int) -> Scenario:
    from toolturn.scenario.loader import load_scenario

    return with_overrides(load_scenario(ROOT / "scenarios" / "default.toml"), sessions=sessions)


def run(
    scenario: Scenario, policy: str = "streaming", level: float | None = None,
    profile: str = "default",
) -> SimulationResult:
    if level is None and scenario.load.levels:
        level = scenario.load.levels[0]
    return simulate(scenario, policy, level, profile=profile)


def dict_rows(columns: Columns) -> list[dict[str, Any]]:
    """The rows of one table's columns (a simulation's `rows[table]`), one dict per row, to
    read in a test."""
    names = list(columns)
    return [dict(zip(names, values, strict=True)) for values in zip(*columns.values(), strict=True)]


def first_turn(result: SimulationResult) -> dict[str, Any]:
    return next(row for row in dict_rows(result.rows["turns"]) if row["turn_index"] == 1)
