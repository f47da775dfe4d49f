"""The packaged scenarios: `toolturn init DIR`, `toolturn run NAME`, and the wheel that ships them
(issue 14, section 5). The wheel test builds one with pip (about ten seconds) and runs its
`toolturn` alone."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from toolturn.cli import main
from toolturn.scenario.packaged import (
    PACKAGED_DIR,
    packaged_names,
    packaged_path,
    scenario_argument,
)

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios"


def test_the_packaged_folder_is_the_checkouts_scenarios() -> None:
    # One source: a link, not a copy that could drift.
    assert (ROOT / "toolturn" / "scenarios").is_symlink()
    assert PACKAGED_DIR.resolve() == SCENARIOS.resolve()
    assert packaged_names() == sorted(path.stem for path in SCENARIOS.glob("*.toml"))
    assert "default" in packaged_names()


def test_a_bare_name_finds_the_packaged_scenario_and_a_file_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert scenario_argument("default") == packaged_path("default")
    assert scenario_argument("default.toml") == packaged_path("default")
    (tmp_path / "default").write_text("x")
    assert scenario_argument("default") == Path("default")  # rule 1
    assert scenario_argument("missing") == Path("missing")  # rule 3: the loader reports it
    assert scenario_argument("sub/default") == Path("sub/default")  # not a bare name
    assert packaged_path("..") is None and packaged_path("probes/suite") is None


def test_init_writes_the_default_and_says_how_to_run_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "new" / "folder"
    assert main(["init", str(target)]) == 0
    written = target / "default.toml"
    assert written.read_bytes() == (SCENARIOS / "default.toml").read_bytes()
    out = capsys.readouterr().out
    assert f"wrote {written}\n" in out and f"run it with: toolturn run {written}\n" in out


def test_init_refuses_to_overwrite_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "overload.toml").write_text("mine")
    assert main(["init", str(tmp_path), "--scenario", "overload"]) == 2
    assert "exists (use --force to replace it)" in capsys.readouterr().err
    assert (tmp_path / "overload.toml").read_text() == "mine"
    assert main(["init", str(tmp_path), "--scenario", "overload", "--force"]) == 0
    assert (tmp_path / "overload.toml").read_bytes() == (SCENARIOS / "overload.toml").read_bytes()


def test_init_into_a_file_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("")
    assert main(["init", str(tmp_path / "file")]) == 2
    assert "cannot write" in capsys.readouterr().err


def test_run_by_name_uses_the_packaged_scenario(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    assert main(["run", "default", "--sessions", "2", "--no-report", "--out", str(out)]) == 0
    assert (out / "run.json").is_file()
    assert f"wrote {out}" in capsys.readouterr().out


def test_run_of_an_unknown_name_says_no_such_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["run", "nosuch", "--no-report"]) == 2
    assert "nosuch: no such file" in capsys.readouterr().err


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    into = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(into)],
        check=True, capture_output=True,
    )
    (found,) = into.glob("toolturn_sim-*.whl")
    return found


def test_the_wheel_ships_the_scenarios_as_the_checkout_has_them(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        shipped = {
            name.removeprefix("toolturn/scenarios/"): archive.read(name)
            for name in archive.namelist() if name.startswith("toolturn/scenarios/")
        }
    expected = {
        str(path.relative_to(SCENARIOS)): path.read_bytes()
        for path in SCENARIOS.rglob("*.toml")
    }
    assert shipped == expected


def test_the_wheels_sim_inits_and_runs_the_default(wheel: Path, tmp_path: Path) -> None:
    # The wheel unpacked alone first on the path (this venv gives the dependencies), run from a
    # folder with no checkout in it: its own scenarios, not the checkout's.
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    work = tmp_path / "work"
    work.mkdir()
    environment = dict(os.environ, PYTHONPATH=str(site))

    def sim(*arguments: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "toolturn", *arguments], cwd=work, env=environment,
            capture_output=True, text=True, check=True,
        )
        return done.stdout

    location = subprocess.run(
        [sys.executable, "-c", "import toolturn; print(toolturn.__file__)"], cwd=work,
        env=environment,
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    assert Path(location).is_relative_to(site)
    assert "run it with: toolturn run starter/default.toml" in sim("init", "starter")
    assert (work / "starter" / "default.toml").is_file()
    assert "wrote out" in sim("run", "default", "--sessions", "2", "--no-report", "--out", "out")
    assert (work / "out" / "run.json").is_file()
    # `toolturn probe`'s default suite is the wheel's own (issue 30), found from here too.
    suite = subprocess.run(
        [sys.executable, "-c", "from toolturn.probe.suite import PACKAGED_SUITE, load_suite; "
         "print(len(load_suite(PACKAGED_SUITE).cases), PACKAGED_SUITE)"], cwd=work,
        env=environment, capture_output=True, text=True, check=True,
    ).stdout.split()
    assert int(suite[0]) > 10 and Path(suite[1]).is_relative_to(site)


def test_the_wheel_is_toolturn_under_apache_2_with_both_script_names(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata,) = [name for name in names if name.endswith(".dist-info/METADATA")]
        text = archive.read(metadata).decode()
        (entry_points,) = [name for name in names if name.endswith(".dist-info/entry_points.txt")]
        scripts = archive.read(entry_points).decode()
    assert not any(name.startswith("sim/") for name in names), "no top-level `sim` package"
    assert "License-Expression: Apache-2.0" in text
    assert any(name.endswith("licenses/LICENSE") for name in names)
    assert "Author: toolturn-sim developers" in text
    assert "Classifier: Programming Language :: Python :: 3.13" in text
    assert "toolturn = toolturn.cli:console" in scripts
    assert "sim = toolturn.cli:console" in scripts
