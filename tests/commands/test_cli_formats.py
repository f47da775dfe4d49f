"""What CI logs show (issue 29, section 2): piped tables never crop (a table too wide for the
log is one record per row), the run's headline wraps between its phrases only, and
`--format markdown` prints the same tables as Markdown on run, compare and probe (excluding
`--json`)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from toolturn.cli import main
from toolturn.commands import probe as probe_command
from toolturn.metrics.display import Fitted, Phrases
from toolturn.metrics.markdown import markdown
from toolturn.probe.runner import CaseRun
from toolturn.wire.recorder import Recorder


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two one-session runs of the default scenario on different seeds: most metrics move."""
    root = tmp_path_factory.mktemp("runs")
    runs = root / "base", root / "new"
    for seed, out in zip((1, 2), runs, strict=True):
        argv = ["run", "default", "-n", "1", "-s", str(seed), "--no-report", "-q"]
        assert main([*argv, "--out", str(out)]) == 0
    return runs


def test_piped_compare_shows_every_change_and_verdict(
    two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    base, new = two_runs
    capsys.readouterr()
    main(["compare", str(base), str(new), "--json"])
    document = json.loads(capsys.readouterr().out)
    moved = [change for change in document["changes"] if change["moved"]]
    assert moved
    main(["compare", str(base), str(new)])  # stdout is not a terminal: a 100-column log
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100
    joined = out.replace("\n  ", " ")  # a record's continuation lines
    records = re.findall(r"change (\S+), verdict (FAIL|within|not gated)", joined)
    assert len(records) == len(moved)
    assert "…" not in out


def test_a_table_that_fits_is_shown_as_a_table() -> None:
    table = Table()
    table.add_column("a")
    table.add_column("b", justify="right")
    table.add_row("x", "1")
    console = Console(width=40, record=True, color_system=None)
    console.print(Fitted(table))
    assert "┃ a ┃" in console.export_text()
    narrow = Console(width=7, record=True, color_system=None)
    narrow.print(Fitted(table))
    assert narrow.export_text() == "x: b 1\n"


def test_the_headline_wraps_between_phrases_only() -> None:
    sentence = Phrases(
        "streaming vs at_message_stop, median per turn: ",
        ["TTFTS -300 ms (52% of turns sooner)", "turn latency 0 ms (36% of turns sooner)"],
    )
    assert sentence.lines(100) == [
        "streaming vs at_message_stop, median per turn: TTFTS -300 ms (52% of turns sooner);",
        "  turn latency 0 ms (36% of turns sooner)",
    ]
    assert sentence.lines(50) == [
        "streaming vs at_message_stop, median per turn:",
        "  TTFTS -300 ms (52% of turns sooner);",
        "  turn latency 0 ms (36% of turns sooner)",
    ]
    assert sentence.lines(200) == [sentence.plain]


def test_a_piped_run_does_not_break_its_headline_mid_phrase(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "default", "-n", "2", "--no-report", "--out", str(tmp_path / "r")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("streaming vs at_message_stop, median per turn: TTFTS ")
    for line in lines[:2]:
        assert re.search(r"(TTFTS|turn latency) -?[\d,.]+ \S+ \(\d+% of turns sooner\)", line)


def _tables(text: str) -> list[list[str]]:
    """The Markdown tables of `text`, each as its lines."""
    found: list[list[str]] = []
    previous = ""
    for line in text.splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                found.append([])
            found[-1].append(line)
        previous = line
    return found


def test_run_format_markdown_prints_the_same_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "default", "-n", "2", "--no-report", "--out", str(tmp_path / "r"),
            "--format", "markdown"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "wrote" not in captured.out and f"wrote {tmp_path / 'r'}" in captured.err
    paired, summary = _tables(captured.out)
    assert paired[0].startswith("|   | TTFTS vs at_message_stop | turn latency vs at_message_stop")
    assert paired[1] == "| :--- | ---: | ---: | ---: | ---: |"
    assert summary[0] == "| metric | unit | streaming | at_message_stop | serial |"
    assert any(line.startswith("| TTFTS p50 | s | ") for line in summary)
    assert captured.out.startswith("**streaming vs at_message_stop, median per turn: TTFTS ")
    assert "**default: seed 20261130**" in captured.out
    assert "┃" not in captured.out and "│" not in captured.out


def test_compare_format_markdown_prints_every_moved_metric(
    two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    base, new = two_runs
    capsys.readouterr()
    main(["compare", str(base), str(new), "--json"])
    moved = sum(change["moved"] for change in json.loads(capsys.readouterr().out)["changes"])
    assert main(["compare", str(base), str(new), "--format", "markdown"]) == 1
    out = capsys.readouterr().out
    changes = _tables(out)[0]
    assert changes[0] == "| policy @ load | metric | base | new | change | verdict |"
    assert len(changes) == 2 + moved
    assert out.rstrip().endswith("beyond tolerance")


@pytest.mark.parametrize("command", ["run", "compare"])
def test_json_and_format_markdown_exclude_each_other(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [command, "default"] + (["other"] if command == "compare" else [])
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--json", "--format", "markdown"])
    assert stop.value.code == 2
    assert "argument --format: not allowed with argument --json" in capsys.readouterr().err


def test_markdown_escapes_pipes_and_line_breaks() -> None:
    table = Table(title=escape("a [b]"))  # titles are markup, as the commands give them
    table.add_column("x\ny")
    table.add_row("p|q\nr")
    assert markdown(table) == "**a [b]**\n\n| x y |\n| :--- |\n| p\\|q<br>r |\n"


def test_probe_format_markdown_keeps_stdout_to_the_scorecard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def ran(case: object, suite: object, command: list[str], protocol: str) -> CaseRun:
        # No request reached the server: the case fails (exit 1), its line after the table.
        return CaseRun(case, 0, 0.0, Recorder().tables(), [], "")  # type: ignore[arg-type]

    monkeypatch.setattr(probe_command, "run_case", ran)
    argv = ["probe", "--case", "two_calls_clean", "--out", str(tmp_path / "p"),
            "--format", "markdown", "--", sys.executable]
    assert main(argv) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].startswith("| case ") and lines[1].startswith("|---")
    assert lines[2].startswith("| two_calls_clean (FAILED) | 1 ")
    assert not any(line.startswith("toolturn probe:") for line in lines)
    assert "toolturn probe: two_calls_clean (run 1 of 1) ..." in captured.err
    assert "toolturn probe: 1 cases; recordings in" in captured.err
    assert "toolturn probe: 1 cases" in captured.err


def test_a_piped_run_of_six_arms_shows_every_arm_of_every_metric(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "default", "-n", "1", "--profile", "default,claude-code", "--no-report"]
    assert main([*argv, "--out", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100
    joined = out.replace("\n  ", " ")
    record = re.search(r"^TTFTS p50 · s: (.*)$", joined, re.MULTILINE)
    assert record is not None
    arms = re.findall(r"([a-z_]+(?: \[claude-code\])?) [\d.]+", record.group(1))
    assert arms == ["streaming", "at_message_stop", "serial", "streaming [claude-code]",
                    "at_message_stop [claude-code]", "serial [claude-code]"]
