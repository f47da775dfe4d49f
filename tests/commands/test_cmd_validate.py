"""`toolturn validate`: output and exit status, and every shipped scenario is valid."""

from pathlib import Path

import pytest

from toolturn.cli import main
from toolturn.scenario.loader import load_scenario

SCENARIOS = sorted((Path(__file__).parents[2] / "scenarios").glob("*.toml"))
GOOD = """
name = "good"
seed = 1
[load]
mode = "closed"
sessions = 4
concurrency = 2
[runtime]
policies = ["streaming", "serial"]
"""


def test_the_required_scenarios_are_shipped() -> None:
    names = {path.stem for path in SCENARIOS}
    assert {
        "default",
        "interrupt_storm",
        "fallback_storm",
        "overload",
        "fine_grained_tools",
    } <= names


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.name)
def test_shipped_scenario_validates(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().out.startswith(f"{path}: ok (")


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.name)
def test_shipped_scenario_says_what_it_is_for(path: Path) -> None:
    assert path.read_text().startswith("# ")
    assert load_scenario(path).description


def test_ok_line_names_the_scenario_tools_and_policies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "good.toml"
    path.write_text(GOOD)
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: ok (good, 8 tools, policies streaming, serial)\n"


def test_every_file_is_checked_and_any_error_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good, bad, absent = tmp_path / "good.toml", tmp_path / "bad.toml", tmp_path / "absent.toml"
    good.write_text(GOOD)
    bad.write_text(GOOD.replace("sessions = 4", "sessions = -1"))
    assert main(["validate", str(bad), str(absent), str(good)]) == 2
    captured = capsys.readouterr()
    assert captured.out == f"{good}: ok (good, 8 tools, policies streaming, serial)\n"
    assert captured.err.splitlines() == [
        f"{bad}: load.sessions: should be greater than or equal to 1 (got -1)",
        f"{absent}: no such file",
    ]
    assert "Traceback" not in captured.err


def test_no_file_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as info:
        main(["validate"])
    assert info.value.code == 2
