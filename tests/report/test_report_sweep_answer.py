"""A sweep's answer (issue 29, section 4): a sweep whose levels could not differ says so in the
terminal and on the page; the page leads with the headline and the paired-by-load figure (its
layout in a browser: tests/browser/check_report.py); log axes carry rule 2's ticks; the toolbar
stays above the subplot titles."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolturn.cli import main
from toolturn.metrics import read_run
from toolturn.metrics.level_sameness import identical_levels
from toolturn.report.html import render_html
from toolturn.report.interactive import TOP_MARGIN, Interactive, draw_interactive, log_ticks

SAME = """
name = "same_levels"
seed = 11
[load]
mode = "closed"
sessions = 4
sweep = [2, 6]
[session]
think_time = { kind = "fixed", ms = 200 }
[model.script]
kind = "generated"
end_probability = 0.3
tool_calls = { kind = "uniform", low = 1, high = 3 }
"""
# The same with an endpoint that queues beyond two streams and slows with load: levels differ.
DIFFERENT = SAME.replace("same_levels", "different_levels").replace(
    "sweep = [2, 6]", "sweep = [1, 2, 4]"
) + "[model.endpoint]\ncapacity = 2\nlatency_growth = 0.5\n"
NOTE = "gave identical per-turn results"


def run(tmp_path: Path, text: str) -> tuple[Path, str]:
    """The run folder (without its report: matplotlib's exports take seconds) and its page."""
    scenario = tmp_path / "scenario.toml"
    scenario.write_text(text)
    out = tmp_path / "run"
    assert main(["run", str(scenario), "--out", str(out), "--no-report"]) == 0
    folder = read_run(out)
    return out, render_html(folder.metadata, folder.summary, draw_interactive(folder))


def test_a_sweep_whose_levels_cannot_differ_says_so_in_terminal_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, page = run(tmp_path, SAME)
    printed = capsys.readouterr().out.replace("\n", " ")
    assert "note: the 2 load levels (2, 6) " + NOTE in printed
    note = page.index(NOTE)
    assert note < page.index('class="plotly-graph-div"')
    assert identical_levels(read_run(out).summary) == [2.0, 6.0]


def test_a_sweep_whose_levels_differ_says_nothing_of_the_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, page = run(tmp_path, DIFFERENT)
    assert NOTE not in capsys.readouterr().out
    assert NOTE not in page
    # The answer leads: the identity folded into one line, then the lowest and highest level's
    # sentence with the count between, then the figure of the paired difference against load.
    identity = page.index('<details class="identity"><summary>run run · scenario different_levels')
    lowest = page.index("<li>load 1: streaming vs at_message_stop, median per turn: ")
    between = page.index("… 1 level between: in the figure below")
    highest = page.index("<li>load 4: streaming vs at_message_stop, median per turn: ")
    figure = page.index('id="paired-by-load"')
    assert identity < lowest < between < highest < figure < page.index("<h2>What early tool")
    figures = {f.id: f for f in draw_interactive(read_run(out)) if isinstance(f, Interactive)}
    axis = figures["paired-by-load"].figure.layout.xaxis
    assert axis.type == "log" and list(axis.ticktext) == ["1", "1.5", "2", "3", "5", "7"]
    assert all(f.figure.layout.margin.t == TOP_MARGIN for f in figures.values())


def test_log_ticks_are_whole_steps_of_each_decade() -> None:
    assert [f"{t:g}" for t in log_ticks(0.2, 20)] == ["0.1", "0.2", "0.5", "1", "2", "5", "10",
                                                       "20"]
    assert [f"{t:g}" for t in log_ticks(2, 8)] == ["1", "1.5", "2", "3", "5", "7", "10", "15"]
