"""Golden summaries: small seeded scenarios whose summaries are checked in as JSON (one,
claude_code, runs both recovery profiles side by side; resume_storm is the shipped
`scenarios/resume_storm.toml` at `SHIPPED` sessions: crashes, rewinds, naive compaction).

A summary (every row but the wall-clock ones) is an exact function of the code, the scenario and
the seed. When a change is *meant* to move them, regenerate and review the diff:

    .venv/bin/python -m tests.golden.regenerate
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolturn.engine.runner import run_scenario
from toolturn.metrics.summary import summarize
from toolturn.scenario.loader import load_scenario, with_overrides
from toolturn.scenario.schema import Scenario

HERE = Path(__file__).parent
SHIPPED_DIR = HERE.parent.parent / "scenarios"
# Shipped scenarios whose golden is a smaller run of the very file: name -> sessions.
SHIPPED = {"resume_storm": 16}
SCENARIOS = ("closed_faults", "open_sweep", "interrupts", "claude_code", *SHIPPED)


def scenario_path(name: str) -> Path:
    return SHIPPED_DIR / f"{name}.toml" if name in SHIPPED else HERE / f"{name}.toml"


def golden_scenario(name: str) -> Scenario:
    scenario = load_scenario(scenario_path(name))
    return with_overrides(scenario, sessions=SHIPPED[name]) if name in SHIPPED else scenario


def expected_path(name: str) -> Path:
    return HERE / f"{name}.summary.json"


def golden_summary(name: str) -> list[dict[str, Any]]:
    """The summary rows of a serial run of scenario `name`, without wall-clock rows."""
    result = run_scenario(golden_scenario(name))
    rows = summarize(result.tables("golden"))
    return [
        {
            "profile": row.profile,
            "policy": row.policy,
            "versus": row.versus,
            "load_level": row.load_level,
            "metric": row.metric,
            "value": row.value,
            "unit": row.unit,
        }
        for row in rows
        if not row.wall_clock
    ]


def main() -> None:
    for name in SCENARIOS:
        path = expected_path(name)
        path.write_text(json.dumps(golden_summary(name), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
