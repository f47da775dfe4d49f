"""The console script's own behaviour: discovery, version, bad-input exit status, a reader gone
away, an interrupt while starting."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolturn import cli
from toolturn.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "default.toml"


def test_version_flag_prints_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert "toolturn" in capsys.readouterr().out


def test_missing_command_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args([])
    assert exit_info.value.code == 2


def test_a_reader_gone_away_ends_quietly_with_status_141() -> None:
    # As in `toolturn validate ... | head -0`: the pipe's reading end is closed before sim writes.
    reading, writing = os.pipe()
    os.close(reading)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "toolturn.cli", "validate", str(SCENARIO)],
            stdout=writing, stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=60,
        )
    finally:
        os.close(writing)
    assert (result.returncode, result.stderr) == (141, "")


def test_ctrl_c_while_loading_the_commands_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(argv: list[str] | None = None) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert main(["run", "x.toml"]) == 130
    assert capsys.readouterr().err == "toolturn: interrupted\n"
