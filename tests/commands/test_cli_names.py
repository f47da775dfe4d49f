"""Names that work everywhere (issue 29, section 3): packaged scenario names in every command
that takes a scenario, the near name of a misspelt one, the command's own usage for a misspelt
flag (a nested verb's, `traces stats`, too), options of several values that never take the
positional after them, the truth once about an `--out` in the way, and what an interrupted run
without `--resume` lost."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from toolturn.cli import build_parser, main
from toolturn.commands import run as run_command
from toolturn.scenario.packaged import packaged_path

DEFAULT = packaged_path("default")


@pytest.mark.parametrize("command", ["run", "validate", "serve", "live", "fidelity", "capacity"])
def test_every_command_that_takes_a_scenario_takes_a_packaged_name(command: str) -> None:
    argv = [command, "default"] + (["--slo", "ttfts.p99 < 5s"] if command == "capacity" else [])
    args = build_parser(argv).parse_args(argv)
    given = args.files[0] if command == "validate" else args.scenario
    from toolturn.scenario.packaged import resolved

    assert DEFAULT is not None and Path(resolved(str(given))) == DEFAULT


def test_validate_checks_a_packaged_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "overload"]) == 0
    assert "overload.toml: ok (overload," in capsys.readouterr().out


@pytest.mark.parametrize("command", ["run", "live", "serve"])
def test_a_misspelt_name_suggests_the_near_one_with_the_commands_usage(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        main([command, "defualt"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: toolturn {command} ")
    assert "defualt: no such file or packaged scenario; did you mean default?" in err


def test_validate_names_the_near_name_and_checks_the_other_files(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["validate", "overlaod", "default"]) == 2
    captured = capsys.readouterr()
    assert "did you mean overload?" in captured.err
    assert "default.toml: ok" in captured.out


def test_a_name_far_from_every_packaged_one_is_still_a_missing_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["run", "nosuch", "--no-report"]) == 2
    assert "did you mean" not in capsys.readouterr().err


def test_a_misspelt_flag_prints_the_subcommands_usage_and_the_near_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["run", "default", "--sesions", "3"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: toolturn run ")
    assert err.endswith("toolturn run: error: unrecognized argument: --sesions "
                        "(did you mean --sessions?)\n")


def test_a_misspelt_flag_before_the_scenario_is_the_problem_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # argparse takes `3` for the scenario and leaves `default` over: neither is the mistake.
    with pytest.raises(SystemExit) as stop:
        main(["run", "--sesions", "3", "default"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: toolturn run ")
    assert err.endswith("toolturn run: error: unrecognized argument: --sesions "
                        "(did you mean --sessions?)\n")


@pytest.mark.parametrize(
    ("argv", "usage", "near"),
    [
        (["traces", "stats", "--jsn", "x"], "toolturn traces stats",
         "--jsn (did you mean --json?)"),
        (["traces", "replay", "x", "--seeed=3"], "toolturn traces replay",
         "--seeed=3 (did you mean --seed?)"),
        (["traces", "calibrate", "x", "-o", "y", "--nme", "z"], "toolturn traces calibrate",
         "--nme (did you mean --name?)"),
        (["probe", "compare", "--tolerence", "0.3", "a", "b"], "toolturn probe compare",
         "--tolerence (did you mean --tolerance?)"),
        # The misspelling is the cause of a missing required option: it is what is named.
        (["capacity", "default", "--sol", "ttfts.p99 < 5s"], "toolturn capacity",
         "--sol (did you mean --slo?)"),
        (["traces", "calibrate", "x", "--ouptut", "y.toml"], "toolturn traces calibrate",
         "--ouptut (did you mean --output?)"),
    ],
)
def test_a_misspelt_flag_of_a_nested_verb_prints_the_verbs_usage_and_the_near_flag(
    argv: list[str], usage: str, near: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        status = main(argv)
    except SystemExit as stop:
        status = int(stop.code or 0)
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: {usage} [-h]")
    assert err.endswith(f"{usage}: error: unrecognized argument: {near}\n")


def test_an_unknown_flag_near_no_option_is_listed_without_a_guess(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Every long option starts with `--`: that alone is not nearness (`--bogus` is not `--out`).
    with pytest.raises(SystemExit):
        main(["traces", "stats", "x", "--bogus"])
    err = capsys.readouterr().err
    assert err.startswith("usage: toolturn traces stats ")
    assert err.endswith("toolturn traces stats: error: unrecognized arguments: --bogus\n")


def test_a_policy_before_the_scenario_leaves_the_scenario_alone() -> None:
    argv = ["run", "-p", "streaming", "default"]
    args = build_parser(argv).parse_args(argv)
    assert args.policies == ["streaming"] and args.scenario == DEFAULT
    argv = ["run", "-p", "streaming,serial", "--profile", "default", "-p", "at_message_stop", "x"]
    args = build_parser(argv).parse_args(argv)
    assert args.policies == ["streaming", "serial", "at_message_stop"]
    assert args.profiles == ["default"]
    argv = ["live", "--policy", "serial", "default"]
    assert build_parser(argv).parse_args(argv).policies == ["serial"]


@pytest.mark.parametrize("value", ["streaming,bogus", "streaming,"])
def test_a_bad_item_of_a_comma_list_is_a_usage_error_naming_it(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["run", "-p", value, "default"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "argument -p/--policy: invalid choice: " in err
    assert "'bogus'" in err if "bogus" in value else "an empty name" in err


def test_out_on_a_folder_that_is_not_a_run_says_so_once_without_suggesting_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    assert main(["run", "default", "-n", "1", "--no-report", "--out", str(mine)]) == 2
    err = capsys.readouterr().err
    assert "--force" in err and "use --force" not in err
    assert "not a run folder" in err and "choose another --out" in err
    assert (mine / "notes.txt").read_text() == "keep"


def test_out_on_a_run_folder_suggests_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "run.json").write_text("{}")
    assert main(["run", "default", "-n", "1", "--no-report", "--out", str(run_dir)]) == 2
    assert "already exists (use --force to replace it)" in capsys.readouterr().err


@pytest.mark.parametrize("resume", [False, True])
def test_an_interrupted_run_says_what_resume_keeps(
    resume: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(run_command, "run_scenario", interrupted)
    out = tmp_path / "run"
    argv = ["run", "default", "-n", "1", "-j", "2", "--no-report", "--out", str(out)]
    assert main(argv + (["--resume"] if resume else [])) == 130
    err = capsys.readouterr().err
    # The command as the user typed it (the packaged name, their options), then --resume.
    again = f"`toolturn run default -n 1 -j 2 --no-report --out {out} --resume`"
    if resume:
        assert "the finished simulations are kept in" in err
        assert f"{again} runs the others" in err
    else:
        assert "no simulation was kept; with --resume an interrupted run keeps its finished" in err
        assert f"the same command runs only the others ({again})" in err
    assert not out.exists()


def test_the_resume_hint_names_the_default_folder_the_run_chose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(run_command, "run_scenario", interrupted)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "overload", "--sessions=1", "-p", "streaming,serial"]) == 130
    err = capsys.readouterr().err
    found = re.search(r"\(`(toolturn run .*)`\)$", err.strip())
    assert found is not None, err
    words = shlex.split(found.group(1))
    assert words[:7] == ["toolturn", "run", "overload", "--sessions=1", "-p", "streaming,serial",
                         "--out"]
    assert re.fullmatch(r"results/run-overload-seed\d+-\d{8}-\d{6}", words[7])
    assert words[8:] == ["--resume"]
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())
