"""Issue 29: `toolturn traces replay LOGS --scenario NAME` takes a packaged scenario's name as
every other command does (`toolturn.scenario.packaged`), and a near miss is a usage error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolturn.cli import main

LOG = (Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "claude-code-shapes"
       / "unparsed_input.jsonl")


def test_replay_takes_a_packaged_scenario_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["traces", "replay", str(LOG), "--scenario", "default", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sessions"][0]["policies"]


def test_a_misspelt_scenario_name_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["traces", "replay", str(LOG), "--scenario", "defualt"])
    assert exit_info.value.code == 2
    assert "did you mean default?" in capsys.readouterr().err
