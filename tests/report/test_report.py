"""`toolturn report`: figures and page written atomically into RUN_DIR/report/;
bad input exits 2."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.metrics_support import collect, handmade_rows, metadata, turn
from toolturn.cli import main
from toolturn.metrics import read_run, write_run
from toolturn.report.plots import concurrency_steps
from toolturn.report.writer import write_report

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
ALWAYS_DRAWN = {
    "ttfts_cdf.png",
    "latency_cdf.png",
    "start_lag.png",
    "repairs_synthetic.png",
    "tool_concurrency.png",
}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run folder with its report drawn once (drawing takes about a second)."""
    folder = tmp_path_factory.mktemp("report") / "run"
    write_run(folder, collect(handmade_rows()).tables(), metadata())
    write_report(read_run(folder))
    return folder


def test_report_draws_the_figures_and_a_page_that_shows_them(run_dir: Path) -> None:
    page = run_dir / "report" / "report.html"
    drawn = {path.name for path in page.parent.glob("*.png")}
    assert drawn == ALWAYS_DRAWN
    for name in drawn:
        data = (page.parent / name).read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > 5_000
    assert {path.name for path in page.parent.glob("*.svg")} == {
        name.replace(".png", ".svg") for name in drawn
    }
    html = page.read_text()
    # Self-contained: plotly's script inline, nothing loaded from elsewhere; the static
    # exports are only linked.
    assert not re.findall(r'<(?:img|script)[^>]+src=', html)
    assert set(re.findall(r'<a href="([^"]+\.png)"', html)) == drawn
    assert "did not sweep load" in html
    assert "turn latency p90" in html and "2.00" in html
    assert "handmade" in html


def test_a_load_sweep_adds_its_figure(tmp_path: Path) -> None:
    rows = handmade_rows() + [
        (
            "turns",
            turn("streaming", 9, 0, 0, None, 10**9, load=float(index + 1), load_level=index + 1),
        )
        for index in range(2)
    ]
    write_run(tmp_path / "run", collect(rows).tables(), metadata())
    page = write_report(read_run(tmp_path / "run"))
    assert (page.parent / "load_sweep.png").stat().st_size > 5_000
    assert 'id="load-sweep"' in page.read_text()


def test_report_again_replaces_the_old_one_whole(run_dir: Path) -> None:
    (run_dir / "report" / "stale.png").write_bytes(b"old")
    write_report(read_run(run_dir))
    assert not (run_dir / "report" / "stale.png").exists()
    assert sorted(p.name for p in run_dir.iterdir() if p.name.startswith(".")) == []


def test_command_writes_the_report_and_prints_the_summary(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "streaming" in out and "turn latency p50" in out
    assert f"wrote {run_dir / 'report' / 'report.html'}" in out


@pytest.mark.parametrize("make", ["missing", "empty"])
def test_command_rejects_a_missing_or_wrong_folder_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: str
) -> None:
    target = tmp_path / "run"
    if make == "empty":
        target.mkdir()
    assert main(["report", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("toolturn report: error: ")
    assert not (target / "report").exists()


@pytest.mark.parametrize("make", ["file", "folder without report.html"])
def test_command_replaces_nothing_but_a_report_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: str
) -> None:
    run = tmp_path / "run"
    write_run(run, collect(handmade_rows()).tables(), metadata())
    report = run / "report"
    if make == "file":
        report.write_text("mine")
    else:
        report.mkdir()
        (report / "notes.txt").write_text("mine")
    before = sorted(run.rglob("*"))
    assert main(["report", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{report}: not a" in err
    assert "only a report folder is replaced" in err
    assert sorted(run.rglob("*")) == before  # untouched, and no hidden sibling left


def test_concurrency_counts_ends_before_starts_at_the_same_instant() -> None:
    starts = np.array([0, 10, 10, 30])
    ends = np.array([10, 20, 40, 35])
    times, running = concurrency_steps(starts, ends)
    assert times.tolist() == [0, 10, 20, 30, 35, 40]
    assert running.tolist() == [1, 2, 1, 2, 1, 0]
