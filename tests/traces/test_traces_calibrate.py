"""`toolturn traces calibrate`: the scenario validates, runs, and its simulated run's stats are
close to the logs' (tolerances stated beside each check)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest

from toolturn.cli import main
from toolturn.engine.simulation import simulate
from toolturn.scenario.loader import load_scenario, with_overrides
from toolturn.traces.calibrate import calibrated_scenario
from toolturn.traces.sources import read_logs
from toolturn.traces.stats import trace_stats

CLAUDE = Path(__file__).parents[1] / "fixtures" / "traces" / "claude-code"


def test_calibrate_writes_a_commented_scenario_that_validates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "cal.toml"
    assert main(["traces", "calibrate", str(CLAUDE), "-o", str(target)]) == 0
    text = target.read_text()
    assert "# empirical, 2 logged duration(s) (p50 565.0 ms)" in text  # Bash: 520 and 610 ms
    assert main(["validate", str(target)]) == 0
    assert main(["traces", "calibrate", str(CLAUDE), "-o", str(target)]) == 2  # no --force
    data = tomllib.loads(text)
    bash = next(t for t in data["tools"]["define"] if t["name"] == "Bash")
    assert bash["duration"] == {"kind": "empirical", "values_ms": [520.0, 610.0]}
    assert bash["concurrency_safe"] is False
    assert data["model"]["script"]["tool_mix"] == {"Bash": 2, "Glob": 1, "Grep": 1, "Read": 2}
    capsys.readouterr()


def test_calibrated_run_is_close_to_the_logs(tmp_path: Path) -> None:
    logs = read_logs([str(CLAUDE)])
    logged = trace_stats(logs)
    path = tmp_path / "cal.toml"
    path.write_text(calibrated_scenario(logs, "cal", 5))
    scenario = with_overrides(load_scenario(path), sessions=400)
    rows = simulate(scenario, "streaming", 1.0).rows
    per_step = np.array(rows["turns"]["n_tool_calls"], dtype=float)
    # Mean tool calls per model step: within 15% of the logged 6/7 (400 sessions make about 1,000
    # steps; the sampling error of the mean is about 3%).
    assert per_step.mean() == pytest.approx(logged["tool_calls_per_step"]["mean"], rel=0.15)
    # Tool mix: each tool's share of the calls within 0.05 of its logged share.
    names = rows["tools"]["tool_name"]
    for tool, count in logged["tool_calls_by_tool"].items():
        share = names.count(tool) / len(names)
        assert share == pytest.approx(count / logged["tool_calls"], abs=0.05)
    # Durations are the logged values drawn back: every simulated Bash run is one of them, and
    # the median is within 10% of the logged median.
    tools = rows["tools"]
    bash = [(end - start) / 1e6 for name, start, end
            in zip(names, tools["start_ns"], tools["end_ns"], strict=True) if name == "Bash"]
    assert set(bash) <= {520.0, 610.0}
    assert float(np.median(bash)) == pytest.approx(
        logged["tool_duration_ms_by_tool"]["Bash"]["p50"], rel=0.10
    )


def test_calibrate_without_responses_is_a_user_error(tmp_path: Path) -> None:
    empty = tmp_path / "e.jsonl"
    empty.write_text('{"type": "summary", "summary": "nothing"}\n')
    assert main(["traces", "calibrate", str(empty), "-o", str(tmp_path / "x.toml")]) == 2
    assert not (tmp_path / "x.toml").exists()
