"""The console script's end: a Ctrl-C after the command has done its work, while the process
ends, is reported as any other interrupt (status 130, one line), never a silent death by the
signal; `python -m toolturn` is the same script; the exit statuses are in `--help`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from toolturn.cli import main

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "default.toml"

# Run the console script the way `python -m toolturn.cli` does, after importing a module that
# makes the end of the process slow or interrupted (what a busy machine or an unlucky Ctrl-C does).
LAUNCH = (
    "import {module}, runpy; "
    "runpy.run_module('toolturn.cli', run_name='__main__', alter_sys=True)"
)

# Python unloads modules at its teardown, after it has given SIGINT back its default action:
# this module's object then holds the teardown open for a while, as numpy, pyarrow and
# matplotlib do for a fraction of a second.
SLOW_TEARDOWN = """
import os, sys, time

class Slow:
    def __del__(self, write=os.write, sleep=time.sleep):
        write(2, b"tearing down\\n")
        sleep(3)

held = Slow()
"""

# An exit function that is interrupted: the Ctrl-C comes after the command, before the end.
INTERRUPTED_EXIT = """
import atexit, os, signal
atexit.register(lambda: os.kill(os.getpid(), signal.SIGINT))
"""


def launch(tmp_path: Path, module: str, *argv: str) -> subprocess.Popen[str]:
    (tmp_path / f"{module}.py").write_text(
        SLOW_TEARDOWN if module == "slow_teardown" else INTERRUPTED_EXIT
    )
    return subprocess.Popen(
        [sys.executable, "-c", LAUNCH.format(module=module), *argv],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"},
    )


def test_a_ctrl_c_as_the_process_ends_is_not_a_silent_death(tmp_path: Path) -> None:
    process = launch(tmp_path, "slow_teardown", "validate", str(SCENARIO))
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith(f"{SCENARIO}: ok (")  # the command is done
        process.send_signal(signal.SIGINT)  # while the process ends (or once it has ended)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode != -signal.SIGINT, "killed by SIGINT without a word"
    # The process was gone before the signal came, or it says it was interrupted: in the command
    # (it was returning) or after it.
    assert (process.returncode, err) in {
        (0, ""), (130, "toolturn validate: interrupted\n"), (130, "toolturn: interrupted\n")
    }
    assert out == ""


def test_an_interrupt_after_the_command_exits_130_with_one_line(tmp_path: Path) -> None:
    process = launch(tmp_path, "interrupted_exit", "validate", str(SCENARIO))
    out, err = process.communicate(timeout=60)
    assert (process.returncode, err) == (130, "toolturn: interrupted\n")
    assert out.startswith(f"{SCENARIO}: ok (")


def test_python_dash_m_toolturn_is_the_console_script() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "toolturn", "validate", str(SCENARIO)],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.startswith(f"{SCENARIO}: ok (")


def test_help_lists_the_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    epilog = capsys.readouterr().out.split("exit status:\n", 1)[1]
    for status in ("0", "1", "2", "130", "141"):
        assert f"\n  {status} " in f"\n{epilog}"


def test_a_usage_error_ends_the_same_way_with_status_2() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "toolturn", "run"], capture_output=True, text=True, cwd=ROOT,
        timeout=60,
    )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.endswith("error: the following arguments are required: SCENARIO\n")
