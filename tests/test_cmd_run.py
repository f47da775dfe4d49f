"""`sim run`: the folder, the table, the exit statuses."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sim.cli import main
from sim.commands.run import default_out_dir
from sim.metrics.schema import TABLES
from sim.scenario.loader import load_scenario

TINY = """
name = "tiny"
seed = 9
[load]
mode = "closed"
sessions = 3
concurrency = 2
[session]
think_time = { kind = "fixed", ms = 100 }
[runtime]
policies = ["streaming", "serial"]
[model.script]
kind = "generated"
end_probability = 0.0
max_turns = 3  # two turns of tool calls, then the answer: whatever the draws
tool_mix = { Read = 1, Grep = 1 }
"""

STRICT = TINY.replace(
    'policies = ["streaming", "serial"]', 'policies = ["streaming"]\nstrict = true'
) + """
[model.faults]
duplicate_tool_id = 1.0
"""


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


def test_run_writes_the_folder_and_prints_the_table(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main(["run", str(tiny), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "ttfts_ns.p50" in printed and "streaming" in printed and "serial" in printed
    assert f"wrote {out}\n" in printed
    assert printed.rstrip().endswith(f"wrote {out / 'report' / 'report.html'}")
    assert (out / "report" / "report.html").is_file()
    assert list((out / "report").glob("*.png"))
    for spec in TABLES:
        assert (out / f"{spec.name}.parquet").is_file()
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["metadata"]["run_id"] == "run"
    assert run_json["metadata"]["seed"] == 9
    assert run_json["row_counts"]["sessions"] == 6  # 3 sessions x 2 policies
    assert set(run_json["summary"]) == {"streaming", "serial"}
    assert run_json["summary"]["streaming"]["harness.events_per_wall_s"] > 0


def test_overrides_reach_the_run(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", str(tiny), "--out", str(out), "--seed", "4", "--sessions", "2", "--no-report"]
    args += ["--policy", "at_message_stop"]
    assert main(args) == 0
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["metadata"]["seed"] == 4
    assert run_json["row_counts"]["sessions"] == 2
    assert list(run_json["summary"]) == ["at_message_stop"]
    assert run_json["metadata"]["extra"]["overrides"] == {
        "seed": 4, "sessions": 2, "policies": ["at_message_stop"]
    }


def test_an_existing_folder_is_an_error_unless_forced(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    out.mkdir()
    assert main(["run", str(tiny), "--out", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["run", str(tiny), "--out", str(out), "--force", "--no-report"]) == 0
    assert (out / "turns.parquet").is_file()
    assert not (out / "report").exists()


def test_a_bad_scenario_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(TINY.replace("sessions = 3", "sessions = 0"))
    assert main(["run", str(bad), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sessions" in err
    assert not (tmp_path / "run").exists()
    assert main(["run", str(tmp_path / "absent.toml")]) == 2


def test_strict_stop_exits_1_naming_seed_and_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "strict.toml"
    path.write_text(STRICT)
    assert main(["run", str(path), "--out", str(tmp_path / "run")]) == 1
    err = capsys.readouterr().err
    assert "seed 9" in err and "session " in err
    assert f"sim run {path} --seed 9 --policy streaming" in err
    assert not (tmp_path / "run").exists()


def test_default_folder_name(tiny: Path) -> None:
    when = datetime(2026, 11, 30, 12, 5, 9, tzinfo=UTC)
    expected = Path("results/run-tiny-seed9-20261130-120509")
    assert default_out_dir(load_scenario(tiny), when) == expected


def test_a_terminal_gets_a_progress_bar_per_policy(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from rich.console import Console

    monkeypatch.setattr(Console, "is_terminal", property(lambda self: True))
    assert main(["run", str(tiny), "--out", str(tmp_path / "run")]) == 0
    bar = capsys.readouterr().err
    assert "streaming" in bar and "serial" in bar and "3/3" in bar
