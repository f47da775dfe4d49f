"""The `codex` profile in `toolturn run`: a shipped scenario with `[runtime] profiles = ["codex"]`
(fallback_storm: strict pairing, 529s, overloaded error events, cuts after a tool_use)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from toolturn.cli import main
from toolturn.scenario.packaged import packaged_path


@pytest.fixture
def storm(tmp_path: Path) -> Path:
    shipped = packaged_path("fallback_storm")
    assert shipped is not None
    text = shipped.read_text()
    assert text.count("\n[runtime]\n") == 1
    path = tmp_path / "fallback_storm.toml"
    path.write_text(text.replace("\n[runtime]\n", '\n[runtime]\nprofiles = ["codex"]\n'))
    return path


def run(scenario: Path, out: Path) -> None:
    args = ["run", str(scenario), "--sessions", "4", "--policy", "streaming", "--no-report"]
    assert main([*args, "--out", str(out)]) == 0


def test_a_shipped_scenario_runs_under_codex(storm: Path, tmp_path: Path) -> None:
    run(storm, tmp_path / "a")
    run_json = json.loads((tmp_path / "a" / "run.json").read_text())
    assert run_json["metadata"]["extra"]["profiles"] == ["codex"]
    turns = pq.read_table(tmp_path / "a" / "turns.parquet").to_pylist()
    assert {row["profile"] for row in turns} == {"codex"}
    # Cuts are kept and retried (the session goes on), and strict pairing never had to act.
    outcomes = Counter(row["outcome"] for row in turns)
    assert outcomes["stream_error"] > 0 and outcomes["completed"] > 0
    assert pq.read_table(tmp_path / "a" / "repairs.parquet").num_rows == 0
    # Same scenario and seed, same rows.
    run(storm, tmp_path / "b")
    again = pq.read_table(tmp_path / "b" / "turns.parquet").to_pylist()
    assert [{**row, "run_id": None} for row in again] == [{**row, "run_id": None} for row in turns]
