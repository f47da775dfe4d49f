"""The report page on a small real sweep: one self-contained file that answers what early tool
start buys at each load (issue 14, section 3). The page in a real browser: `make report-check`."""

from __future__ import annotations

import base64
import csv
import io
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from toolturn.cli import main
from toolturn.metrics import read_run
from toolturn.metrics.summary import summary_groups
from toolturn.report.interactive import Interactive, _coinciding, draw_interactive
from toolturn.report.writer import write_report

SWEEP = """
name = "page_sweep"
seed = 4
[load]
mode = "open"
sessions = 8
sweep = [0.5, 2.0]
horizon_s = 600
[model.script]
kind = "generated"
end_probability = 0.4
tool_calls = { kind = "uniform", low = 1, high = 3 }
[model.endpoint]
capacity = 2
overflow = "refuse"
refuse_status = 529
retry_after_ms = 500
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("page")
    (folder / "sweep.toml").write_text(SWEEP)
    assert main(["run", str(folder / "sweep.toml"), "--out", str(folder / "run")]) == 0
    return folder / "run"


@pytest.fixture(scope="module")
def html(run_dir: Path) -> str:
    return (run_dir / "report" / "report.html").read_text(encoding="utf-8")


def test_the_page_leads_with_the_paired_answer_per_load(html: str) -> None:
    first_figure = html.index('class="plotly-graph-div"')
    for load in ("0.5", "2"):
        sentence = f"load {load}: streaming vs at_message_stop, median per turn: TTFTS -"
        assert html.index(sentence) < first_figure
    assert html.index('id="paired-by-load"') < html.index('id="ttfts-cdf"')
    assert "What early tool start buys, at each load" in html


def test_one_file_with_every_figure_inline(html: str) -> None:
    assert not re.findall(r"<(?:img|script|link)[^>]+(?:src|href)=", html)
    assert "Plotly.newPlot" in html and len(html) > 3_000_000  # plotly.js itself, inline
    ids = re.findall(r'<div id="([^"]+)" class="plotly-graph-div"', html)
    assert ids == [
        "paired-by-load", "paired-cdf", "ttfts-cdf", "latency-cdf", "start-lag-cdf",
        "load-sweep", "tool-concurrency",
    ] or ids[-1] == "rates"


def test_the_sweep_table_has_error_and_refusal_rates_per_level(html: str) -> None:
    table = html[html.index("<h3>Per load level</h3>"):]
    table = table[: table.index("</table>")]
    assert "turns not completed" in table and "HTTP 529 /1k req" in table
    assert len(re.findall(r"<tr><td>0.5</td>", table)) == 3
    assert len(re.findall(r"<tr><td>2</td>", table)) == 3


def test_the_summary_downloads_are_the_summary(run_dir: Path, html: str) -> None:
    run = read_run(run_dir)
    links = r'download="summary\.(csv|json)" href="data:[^;]+;base64,([^"]+)"'
    data = dict(re.findall(links, html))
    rows = list(csv.DictReader(io.StringIO(base64.b64decode(data["csv"]).decode())))
    assert len(rows) == len(run.summary)
    assert {(r["policy"], r["load_level"], r["metric"]) for r in rows} == {
        (r.policy, str(r.load_level), r.metric) for r in run.summary
    }
    assert json.loads(base64.b64decode(data["json"])) == summary_groups(run.summary)


def test_coinciding_curves_are_drawn_once_and_said(run_dir: Path, html: str) -> None:
    # Both wait for message_stop and start the first call then: their TTFTS are the same.
    assert "at_message_stop and serial coincide exactly at load 0.5" in html
    figures = {f.id: f for f in draw_interactive(read_run(run_dir)) if isinstance(f, Interactive)}
    names = [trace.name for trace in figures["ttfts-cdf"].figure.data if trace.showlegend is None]
    assert any("at_message_stop = serial @ 0.5" in name for name in names)
    groups = _coinciding({"a": np.array([1, 2]), "b": np.array([2, 1]), "c": np.array([1, 3])})
    assert groups == [["a", "b"], ["c"]]


def test_concurrency_is_one_panel_per_policy_and_level_and_axes_have_units(run_dir: Path) -> None:
    figures = {f.id: f for f in draw_interactive(read_run(run_dir)) if isinstance(f, Interactive)}
    panels = figures["tool-concurrency"].figure.layout.annotations
    assert [a.text for a in panels] == [
        f"{policy} @ {load}" for load in ("0.5", "2") for policy in
        ("streaming", "at_message_stop", "serial")
    ]
    for figure in figures.values():
        titles = [
            figure.figure.layout[name].title.text
            for name in figure.figure.layout
            if name.startswith(("xaxis", "yaxis")) and figure.figure.layout[name].title.text
        ]
        assert titles, figure.id
        # Every axis names its unit, or is a fraction (no unit).
        assert all("(" in t or t.startswith("fraction") for t in titles), (figure.id, titles)


def test_log_axes_label_enough_ticks(run_dir: Path) -> None:
    figures = {f.id: f for f in draw_interactive(read_run(run_dir)) if isinstance(f, Interactive)}
    axis = figures["ttfts-cdf"].figure.layout.xaxis
    assert axis.type == "log" and len(axis.tickvals) >= 4


def test_the_same_run_gives_the_same_page(run_dir: Path, html: str) -> None:
    before = {p.name: p.read_bytes() for p in (run_dir / "report").iterdir()}
    write_report(read_run(run_dir))
    after = {p.name: p.read_bytes() for p in (run_dir / "report").iterdir()}
    assert before == after and html.encode() == after["report.html"]


def test_sim_report_base_new_writes_a_compare_page(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = tmp_path / "new"
    shutil.copytree(run_dir, new)
    files_before = sorted(path.relative_to(new) for path in new.rglob("*"))
    assert main(["report", str(run_dir), str(new)]) == 0
    # Beside NEW, named for both; the run folder is not changed (issue 29, section 4).
    page_path = tmp_path / f"compare-{run_dir.name}-new" / "compare.html"
    assert f"wrote {page_path}" in capsys.readouterr().out
    assert sorted(path.relative_to(new) for path in new.rglob("*")) == files_before
    page = page_path.read_text(encoding="utf-8")
    assert "simulated metrics within tolerance (exact)" in page
    assert 'id="compare-cdf"' in page and not re.findall(r"<(?:img|script)[^>]+src=", page)
    # Per turn, per policy and level: every difference zero for the same run.
    assert page.count("<td>streaming @ 0.5</td><td>TTFTS</td><td>0 ms</td>") == 1
    capsys.readouterr()
    other = tmp_path / "other"
    (tmp_path / "sweep.toml").write_text(SWEEP)
    args = ["run", str(tmp_path / "sweep.toml"), "--out", str(other), "--no-report"]
    assert main([*args, "--sessions", "3"]) == 0
    capsys.readouterr()
    assert main(["report", str(run_dir), str(other)]) == 2
    assert "sessions [3] differ from" in capsys.readouterr().err
    assert not (tmp_path / f"compare-{run_dir.name}-other").exists()


def test_report_base_new_writes_to_out_and_replaces_only_a_compare_folder(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "pages" / "cmp"
    assert main(["report", str(run_dir), str(run_dir), "--out", str(out)]) == 0
    assert (out / "compare.html").is_file()
    assert main(["report", str(run_dir), str(run_dir), "--out", str(out)]) == 0  # replaced
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    capsys.readouterr()
    assert main(["report", str(run_dir), str(run_dir), "--out", str(mine)]) == 2
    assert "not a compare folder" in capsys.readouterr().err
    assert main(["report", str(run_dir), str(run_dir), "--out", str(run_dir / "cmp")]) == 2
    assert "inside the run folder" in capsys.readouterr().err
    assert not (run_dir / "cmp").exists()
    assert main(["report", str(run_dir), "--out", str(out)]) == 2
    assert "--out: only with two run folders" in capsys.readouterr().err
