"""What an error echoes of the user's input reaches stderr quoted and escaped: a name or a
value holding a newline, a carriage return or a terminal escape sequence never makes a message
span lines or reach the terminal raw, in any command (toolturn/errors.py, rules 1 and 2)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolturn.cli import main
from toolturn.errors import UserError, printable, quoted

# A newline, a carriage return, ESC [2J (clear the screen), OSC 0 (set the window's title), a
# Unicode line separator and a right-to-left override.
NASTY = "a\nb\rc\x1b[2J\x1b]0;owned\x07\u2028\u202e"
ESCAPED = r"a\nb\rc\x1b[2J\x1b]0;owned\x07\u2028\u202e"
UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e]")


def stderr_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    err = capsys.readouterr().err
    assert err.endswith("\n")
    lines = err[:-1].split("\n")
    assert not any(UNPRINTABLE.search(line) for line in lines), lines
    return lines


def test_printable_escapes_what_a_terminal_would_act_on() -> None:
    assert printable(NASTY) == ESCAPED
    assert printable("plain, ünï 😀 text") == "plain, ünï 😀 text"
    assert quoted('say "\\hi"\n') == r'"say \"\\hi\"\n"'


def test_a_user_errors_lines_are_each_printable() -> None:
    error = UserError(f"{NASTY}: 2 errors", details=[f"x: {NASTY}", "y: fine"])
    assert error.lines() == [f"{ESCAPED}: 2 errors", f"  x: {ESCAPED}", "  y: fine"]
    assert str(error) == f"{NASTY}: 2 errors\n  x: {NASTY}\n  y: fine"


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "{path}"],
        ["run", "{path}"],
        ["report", "{path}"],
        ["compare", "{path}", "{path}"],
        ["accumulate", "{path}"],
        ["repair", "{path}"],
        ["serve", "{path}"],
    ],
    ids=lambda argv: argv[0],
)
def test_a_file_name_is_echoed_escaped_in_one_line(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(tmp_path / f"{NASTY}.toml")  # absent: each command says so, naming it
    assert main([part.format(path=path) for part in argv]) == 2
    (line,) = stderr_lines(capsys)
    assert printable(path) in line


def test_a_key_from_a_scenario_file_is_quoted_and_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "keys.toml"
    path.write_text('name = "x"\n"\\u001b[31mred\\nline" = 1\n', encoding="utf-8")
    assert main(["validate", str(path)]) == 2
    lines = stderr_lines(capsys)
    assert lines[0] == f"{path}: 3 errors"
    assert r'  "\x1b[31mred\nline": unknown key' in lines[1]
    assert lines[2:] == ["  load: required, but missing", "  seed: required, but missing"]


def test_a_line_from_a_stream_file_is_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "stream.sse"
    path.write_bytes(b'event: x\ndata: {"type": "\x1b]0;owned\x07"}\n\n')
    assert main(["accumulate", str(path)]) == 2
    (line,) = stderr_lines(capsys)
    assert line.startswith(f"toolturn accumulate: error: {path}: line 2: ")
    assert r"\x1b]0;owned\x07" in line


def test_an_unknown_argument_is_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["validate", "x.toml", f"--{NASTY}"])
    assert exit_info.value.code == 2
    # The command's usage (issue 29, section 3), then the error.
    *usage, line = stderr_lines(capsys)
    assert usage[0].startswith("usage: toolturn validate ")
    assert line == f"toolturn validate: error: unrecognized arguments: --{ESCAPED}"


def test_a_valid_scenarios_names_are_printable_on_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "named.toml"
    text = (Path(__file__).parents[2] / "scenarios" / "default.toml").read_text()
    named = re.sub(r'(?m)^name = ".*"$', lambda _: 'name = "x\\u001b[31my"', text, count=1)
    path.write_text(named)
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{path}: ok (x\\x1b[31my, ") and "\x1b" not in out
