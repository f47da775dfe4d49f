"""`toolturn run`: the folder, the table, the exit statuses."""

from __future__ import annotations

import errno
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.helpers.scenarios import TINY
from toolturn.cli import main
from toolturn.commands import run as run_command
from toolturn.commands.run import default_out_dir
from toolturn.metrics.schema import TABLES
from toolturn.scenario.loader import load_scenario
from toolturn.scenario.schema import Scenario

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
    assert "TTFTS p50" in printed and "streaming" in printed and "serial" in printed
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
    groups = {(group["policy"], group["versus"]): group for group in run_json["summary"]}
    assert set(groups) == {("streaming", "serial"), ("streaming", None), ("serial", None)}
    assert groups["streaming", None]["metrics"]["harness.events_per_wall_s"] > 0


def test_overrides_reach_the_run(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", str(tiny), "--out", str(out), "--seed", "4", "--sessions", "2", "--no-report"]
    args += ["--policy", "at_message_stop"]
    assert main(args) == 0
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["metadata"]["seed"] == 4
    assert run_json["row_counts"]["sessions"] == 2
    assert [group["policy"] for group in run_json["summary"]] == ["at_message_stop"]
    assert run_json["metadata"]["extra"]["overrides"] == {
        "seed": 4, "sessions": 2, "policies": ["at_message_stop"], "profiles": None,
    }


def test_profiles_run_side_by_side_on_the_same_draws(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ["run", str(tiny), "--out", str(out), "--no-report", "--policy", "streaming"]
    assert main([*args, "--profile", "default", "--profile", "claude-code"]) == 0
    printed = capsys.readouterr().out
    assert "streaming [claude-code]" in printed
    run_json = json.loads((out / "run.json").read_text())
    arms = {(group["profile"], group["policy"]) for group in run_json["summary"]}
    assert sorted(arms) == [("claude-code", "streaming"), ("default", "streaming")]
    assert run_json["metadata"]["extra"]["profiles"] == ["default", "claude-code"]
    for spec in TABLES:
        table = pq.read_table(out / f"{spec.name}.parquet")
        assert "profile" in table.column_names, spec.name
        if spec.name != "repairs":  # none: the runtime needs no repair
            assert set(table["profile"].to_pylist()) == {"default", "claude-code"}, spec.name
    # Common random numbers: the same sessions arrive at the same times under both profiles.
    sessions = pq.read_table(out / "sessions.parquet").to_pylist()
    arrivals = {
        profile: [(r["session_id"], r["arrival_ns"]) for r in sessions if r["profile"] == profile]
        for profile in ("default", "claude-code")
    }
    assert arrivals["default"] == arrivals["claude-code"]
    with pytest.raises(SystemExit) as exited:
        main([*args, "--profile", "nope", "--force"])
    assert exited.value.code == 2
    assert "--profile: invalid choice: 'nope'" in capsys.readouterr().err


def test_the_report_shows_every_arm_side_by_side(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["run", str(tiny), "--out", str(out), "--profile", "default,claude-code"]) == 0
    page = (out / "report" / "report.html").read_text()
    # The summary table's heads (the paired tables come before it).
    heads = re.findall(r"<th>([^<]*)</th>", page[page.index("<th>metric</th>"):])
    assert heads[:6] == [
        "metric", "unit", "streaming", "serial", "streaming [claude-code]", "serial [claude-code]"
    ]
    assert (out / "report" / "ttfts_cdf.png").is_file()
    # A paired table per profile's policies, then per arm against the default profile.
    assert re.findall(r"<h4>([^<]*)</h4>", page) == [
        "streaming minus serial", "streaming [claude-code] minus serial",
        "streaming [claude-code] minus default", "serial [claude-code] minus default",
    ]


def test_an_existing_folder_is_an_error_unless_forced(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main(["run", str(tiny), "--out", str(out)]) == 0
    assert (out / "report").is_dir()
    assert main(["run", str(tiny), "--out", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["run", str(tiny), "--out", str(out), "--force", "--no-report"]) == 0
    assert (out / "turns.parquet").is_file()
    assert not (out / "report").exists()


@pytest.fixture
def no_simulation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Output locations must be refused before simulating: a simulation here fails the test."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("simulated before checking the output location")

    monkeypatch.setattr(run_command, "_run_with_progress", refuse)


def one_line_naming(capsys: pytest.CaptureFixture[str], path: Path | str) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}: " in err and "Traceback" not in err
    return err


@pytest.mark.usefixtures("no_simulation")
@pytest.mark.parametrize("make", ["folder of notes", "empty folder", "file", "link to a run"])
def test_force_replaces_nothing_but_a_run_folder(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], make: str
) -> None:
    out = tmp_path / "out"
    if make == "folder of notes":
        out.mkdir()
        (out / "notes.txt").write_text("mine")
    elif make == "empty folder":
        out.mkdir()
    elif make == "file":
        out.write_text("mine")
    else:
        (tmp_path / "run").mkdir()
        (tmp_path / "run" / "run.json").write_text("{}")
        out.symlink_to(tmp_path / "run")
    before = sorted(tmp_path.rglob("*"))
    assert main(["run", str(tiny), "--out", str(out), "--force"]) == 2
    err = one_line_naming(capsys, out)
    assert "only a run folder is replaced" in err
    assert sorted(tmp_path.rglob("*")) == before  # untouched, and no hidden sibling left
    if make == "folder of notes":
        assert (out / "notes.txt").read_text() == "mine"


@pytest.mark.usefixtures("no_simulation")
@pytest.mark.parametrize("out", [".", "..", "/"])
def test_force_refuses_the_current_parent_and_root_folders(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], out: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.json").write_text("{}")  # even a folder that looks like a run
    assert main(["run", str(tiny), "--out", out, "--force"]) == 2
    assert "name the folder itself" in one_line_naming(capsys, out)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run.json", "tiny.toml"]


@pytest.mark.usefixtures("no_simulation")
@pytest.mark.parametrize(
    ("make", "reason"),
    [
        ("under a file", "Not a directory"),
        ("deep under a file", "Not a directory"),
        ("name too long", "File name too long"),
        ("parent name too long", "File name too long"),
    ],
)
def test_an_unwritable_output_location_is_refused_before_simulating(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], make: str, reason: str
) -> None:
    (tmp_path / "afile").write_text("mine")
    out = {
        "under a file": tmp_path / "afile" / "sub",
        "deep under a file": tmp_path / "afile" / "a" / "b",
        "name too long": tmp_path / ("x" * 250),
        "parent name too long": tmp_path / ("x" * 300) / "run",
    }[make]
    before = sorted(tmp_path.rglob("*"))
    assert main(["run", str(tiny), "--out", str(out)]) == 2
    assert f"cannot write there ({reason})" in one_line_naming(capsys, out)
    assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.usefixtures("no_simulation")
@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_place_where_nothing_can_be_made_is_refused(
    tiny: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(tiny), "--out", "/proc/x/run"]) == 2
    one_line_naming(capsys, "/proc/x/run")


def test_missing_parents_are_made_for_the_run_and_removed_if_it_fails(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "a" / "b" / "run"

    def interrupted(*args: object, **kwargs: object) -> None:
        # Rows are written as they come, into the run folder's hidden parts sibling.
        assert sorted(path.name for path in (tmp_path / "a" / "b").iterdir()) == [".run.parts"]
        raise KeyboardInterrupt

    monkeypatch.setattr(run_command, "_run_with_progress", interrupted)
    assert main(["run", str(tiny), "--out", str(out)]) == 130
    assert list(tmp_path.iterdir()) == [tmp_path / "tiny.toml"]
    monkeypatch.undo()
    assert main(["run", str(tiny), "--out", str(out), "--no-report"]) == 0
    assert (out / "run.json").is_file()


def test_a_failed_write_is_one_line_and_leaves_nothing(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(run_command, "write_run_from_parts", full)
    out = tmp_path / "run"
    assert main(["run", str(tiny), "--out", str(out)]) == 2
    assert "No space left on device" in one_line_naming(capsys, out)
    assert list(tmp_path.iterdir()) == [tiny]  # no run folder, no parts folder


def test_a_failed_write_of_the_rows_while_simulating_is_one_line_and_leaves_nothing(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from toolturn.metrics.parts import UnitParts

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(UnitParts, "close", full)
    out = tmp_path / "run"
    assert main(["run", str(tiny), "--out", str(out)]) == 2
    assert "No space left on device" in one_line_naming(capsys, out)
    assert list(tmp_path.iterdir()) == [tiny]


def test_ctrl_c_while_drawing_the_report_says_what_was_written(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from toolturn.report import writer

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(writer, "write_report", interrupted)
    out = tmp_path / "run"
    assert main(["run", str(tiny), "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert err == (
        f"toolturn run: interrupted: the run's tables were written to {out} but not its report "
        f"(draw it with: toolturn report {out})\n"
    )
    assert (out / "run.json").is_file() and not (out / "report").exists()


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


@pytest.mark.usefixtures("damaged_resume")
def test_strict_stop_exits_1_naming_seed_and_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "strict.toml"
    path.write_text(STRICT)
    assert main(["run", str(path), "--out", str(tmp_path / "run")]) == 1
    err = capsys.readouterr().err
    assert "seed 9" in err and "session " in err
    assert f"toolturn run {path} --seed 9 --policy streaming" in err
    assert not (tmp_path / "run").exists()


def test_default_folder_name(tiny: Path) -> None:
    when = datetime(2026, 11, 30, 12, 5, 9, tzinfo=UTC)
    expected = Path("results/run-tiny-seed9-20261130-120509")
    assert default_out_dir(load_scenario(tiny), when) == expected


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("../../escaped", ".._.._escaped"),
        ("a/b", "a_b"),
        ("a\\b", "a_b"),
        ("nul\0x", "nul_x"),
        ("ünï😀 x\ny", "_n___x_y"),
        ("x" * 300, "x" * 64),
    ],
)
def test_the_default_folder_name_is_made_safe_from_the_scenario_name(
    tiny: Path, name: str, shown: str
) -> None:
    scenario: Scenario = load_scenario(tiny).model_copy(update={"name": name})
    out = default_out_dir(scenario, datetime(2026, 11, 30, 12, 5, 9, tzinfo=UTC))
    assert out == Path(f"results/run-{shown}-seed9-20261130-120509")
    assert re.fullmatch(r"[A-Za-z0-9._-]+", out.name)


def test_a_scenario_name_never_leads_outside_results(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    escaping = tmp_path / "work" / "escaping.toml"
    escaping.parent.mkdir()
    escaping.write_text(tiny.read_text().replace('name = "tiny"', 'name = "../../escaped"'))
    monkeypatch.chdir(escaping.parent)
    assert main(["run", str(escaping), "--no-report"]) == 0
    (written,) = (escaping.parent / "results").iterdir()
    assert written.name.startswith("run-.._.._escaped-seed9-")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["tiny.toml", "work"]


def test_a_terminal_gets_a_progress_bar_per_policy(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from rich.console import Console

    monkeypatch.setattr(Console, "is_terminal", property(lambda self: True))
    assert main(["run", str(tiny), "--out", str(tmp_path / "run")]) == 0
    bar = capsys.readouterr().err
    assert "streaming" in bar and "serial" in bar and "3/3" in bar
