"""`toolturn run`'s progress: bars with rate and time left on a terminal, a plain line now and then
elsewhere (a CI log), nothing with --quiet; and the short flags of the common options."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers.scenarios import TINY
from toolturn import progress
from toolturn.cli import main
from toolturn.progress import PlainLog, duration

PLAIN_LINE = re.compile(
    r"toolturn run: [\d,]+/[\d,]+ sessions \(\d+%\), [\d,.]+ sessions/s(, about .+ left)?"
)


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_plain_log_prints_a_line_per_interval_with_rate_and_time_left() -> None:
    clock, lines = Clock(), []
    log = PlainLog(2, 100, every_s=10, clock=clock, write=lines.append)
    clock.now += 4
    log(0, 40)  # within the first 10 s: nothing yet
    assert lines == []
    clock.now += 6
    log(0, 50)  # 50 of 200 in 10 s: 5 a second, 150 left, 30 s
    clock.now += 5
    log(1, 10)  # 5 s after the line: nothing
    clock.now += 15
    log(1, 70)  # 120 of 200 in 30 s: 4 a second, 80 left, 20 s
    assert lines == [
        "toolturn run: 50/200 sessions (25%), 5.0 sessions/s, about 30 s left",
        "toolturn run: 120/200 sessions (60%), 4.0 sessions/s, about 20 s left",
    ]
    assert all(PLAIN_LINE.fullmatch(line) for line in lines)


def test_the_plain_log_says_no_time_left_before_any_rate_or_after_the_end() -> None:
    clock, lines = Clock(), []
    log = PlainLog(1, 10, every_s=1, clock=clock, write=lines.append)
    clock.now += 2
    log(0, 0)
    clock.now += 2
    log(0, 10)
    assert lines == [
        "toolturn run: 0/10 sessions (0%), 0.0 sessions/s",
        "toolturn run: 10/10 sessions (100%), 2.5 sessions/s",
    ]


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0.4, "0 s"), (59.4, "59 s"), (65, "1 min 05 s"), (3599, "59 min 59 s"),
     (3725, "1 h 02 min"), (90000, "25 h 00 min")],
)
def test_time_left_is_shown_to_a_sensible_precision(seconds: float, shown: str) -> None:
    assert duration(seconds) == shown


def test_a_run_outside_a_terminal_logs_plain_lines(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(progress, "LOG_EVERY_S", 0.0)  # a line at every session finished
    assert main(["run", str(tiny), "--out", str(tmp_path / "run"), "--no-report"]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(PLAIN_LINE.fullmatch(line) for line in lines), lines
    assert lines[-1].startswith("toolturn run: 6/6 sessions (100%)")  # 3 sessions, 2 policies


def test_a_terminal_gets_bars_with_rate_and_time_left(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from rich.console import Console

    monkeypatch.setattr(Console, "is_terminal", property(lambda self: True))
    assert main(["run", str(tiny), "--out", str(tmp_path / "run"), "--no-report"]) == 0
    bars = capsys.readouterr().err
    assert "streaming" in bars and "serial" in bars and "all" in bars
    assert "3/3" in bars and "6/6" in bars
    assert "sessions/s" in bars and re.search(r"\d:\d\d:\d\d", bars)


def test_quiet_prints_no_progress_and_no_table_only_the_folders(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from rich.console import Console

    monkeypatch.setattr(Console, "is_terminal", property(lambda self: True))
    monkeypatch.setattr(progress, "LOG_EVERY_S", 0.0)
    out = tmp_path / "run"
    assert main(["run", str(tiny), "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr()
    assert printed.err == ""
    assert printed.out == f"wrote {out}\nwrote {out / 'report' / 'report.html'}\n"


def test_short_flags_of_the_common_options(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = ["run", str(tiny), "-s", "5", "-n", "2", "-p", "streaming", "-j", "1", "-o", str(out),
            "-q", "--no-report"]
    assert main(argv) == 0
    assert main([*argv, "-f"]) == 0
    overrides = json.loads((out / "run.json").read_text())["metadata"]["extra"]["overrides"]
    assert overrides == {"seed": 5, "sessions": 2, "policies": ["streaming"], "profiles": None}
    assert capsys.readouterr().out == f"wrote {out}\nwrote {out}\n"
    assert main(["compare", str(out), str(out), "-t", "throughput.*=0.1"]) == 0
