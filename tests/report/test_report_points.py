"""The summary and the report of a run of experiment points: per key, the arms side by side over
the replications (mean ± the t interval's half-width), the policy difference marked beyond or
within its interval, the intervals drawn, the other figures of the first point alone."""

from __future__ import annotations

import base64
import csv
import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from tests.helpers.experiment_tables import SCENARIO, experiment_tables
from tests.helpers.metrics_support import metadata
from toolturn.cli import main
from toolturn.metrics import read_run, write_run
from toolturn.metrics.summary_table import print_summary
from toolturn.report.points import first_point
from toolturn.scenario.loader import load_scenario


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("points")
    (folder / "s.toml").write_text(SCENARIO)
    tables = experiment_tables(load_scenario(folder / "s.toml"))
    write_run(folder / "run", tables, metadata("replicated"))
    return folder / "run"


def test_the_terminal_summary_is_one_table_per_key(run_dir: Path) -> None:
    console = Console(record=True, width=120)
    print_summary(read_run(run_dir).summary, console=console)
    text = console.export_text()
    assert text.count("Experiment · ") == 2
    assert "Experiment · load.concurrency=1 (3 replications)" in text
    assert "streaming − serial" in text
    ttfts = next(line for line in text.splitlines() if "TTFTS p50" in line)
    assert "±" in ttfts and ttfts.rstrip(" │").endswith("beyond")
    tail = next(line for line in text.splitlines() if "turn latency p99 " in line)
    assert tail.rstrip(" │").endswith("within")


def test_the_report_shows_each_key_and_draws_the_intervals(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(run_dir)]) == 0
    assert "Experiment · load.concurrency=3" in capsys.readouterr().out
    html = (run_dir / "report" / "report.html").read_text(encoding="utf-8")
    assert "<h2>Experiment points</h2>" in html and "Student-t" in html
    assert "<h3>load.concurrency=1 (3 replications)</h3>" in html
    assert re.search(r'<td class="value beyond">-[0-9.]+ ± [0-9.]+ \(beyond\)</td>', html)
    assert '<td class="value within">' in html
    for metric in ("ttfts_ns-p99", "latency_ns-p95", "throughput-turns_per_s"):
        assert f'id="points-{metric}"' in html
    assert '"error_y":{"array":' in html.replace(" ", "")
    assert "Figures of the first point" in html
    # The downloadable CSV keeps the point columns and the intervals.
    data = re.search(r'href="data:text/csv;base64,([^"]+)"', html)
    assert data is not None
    rows = list(csv.DictReader(io.StringIO(base64.b64decode(data.group(1)).decode())))
    assert {"point", "replication", "point_key", "ci_low", "ci_high"} <= set(rows[0])
    assert {row["point_key"] for row in rows} == {"load.concurrency=1", "load.concurrency=3"}


def test_the_figures_are_of_the_first_point_alone(run_dir: Path) -> None:
    run = read_run(run_dir)
    first = first_point(run)
    assert "point" not in first.tables["turns"].column_names
    points = run.tables["turns"]["point"].to_pylist()
    assert first.tables["turns"].num_rows == points.count(0) > 0
    assert first.summary and all(row.point_key is None for row in first.summary)
    assert len(first.summary) < len(run.summary)
