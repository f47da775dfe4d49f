"""`toolturn compare` of two runs of experiment points: point by point (each row keyed by its
point's key and replication), and runs of different points refused."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tests.helpers.experiment_tables import experiment_tables
from tests.helpers.metrics_support import metadata
from toolturn.cli import main
from toolturn.metrics import read_run, write_run
from toolturn.report.compare import compare_runs, paired_between
from toolturn.scenario.loader import load_scenario

SCENARIO = """
name = "points"
seed = 5
[load]
mode = "closed"
sessions = 2
concurrency = 1
[runtime]
policies = ["streaming", "serial"]
[experiment]
replications = 2
[experiment.grid]
"load.concurrency" = [1, 2]
"""


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pa.Table]:
    path = tmp_path_factory.mktemp("s") / "s.toml"
    path.write_text(SCENARIO)
    return experiment_tables(load_scenario(path))


def write(folder: Path, tables: dict[str, pa.Table]) -> Path:
    write_run(folder, tables, metadata("points"))
    return folder


@pytest.fixture(scope="module")
def base(tables: dict[str, pa.Table], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(tmp_path_factory.mktemp("compare") / "base", tables)


def slower_at(tables: dict[str, pa.Table], point: int) -> dict[str, pa.Table]:
    """The tables with every turn of one point 1 ns slower."""
    turns = tables["turns"]
    at = pc.equal(turns["point"], point)
    latency = pc.if_else(at, pc.add(turns["latency_ns"], 1), turns["latency_ns"])
    index = turns.schema.get_field_index("latency_ns")
    return {**tables, "turns": turns.set_column(index, turns.schema.field(index), latency)}


def test_a_run_of_points_reads_back_with_its_point_columns(base: Path) -> None:
    run = read_run(base)
    assert {"point", "replication", "point_key"} <= set(run.tables["turns"].column_names)
    assert {row.point_key for row in run.summary} == {"load.concurrency=1", "load.concurrency=2"}


def test_identical_runs_of_points_pass(
    base: Path, tables: dict[str, pa.Table], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", str(base), str(write(tmp_path / "new", tables))]) == 0
    assert "over 2 policies, 2 point keys and 1 load level: 0 moved" in capsys.readouterr().out


def test_a_change_at_one_point_is_named_by_its_point(
    base: Path, tables: dict[str, pa.Table], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = write(tmp_path / "new", slower_at(tables, 1))
    changes = compare_runs(read_run(base), read_run(new))
    moved = [change for change in changes if change.moved]
    assert moved
    # Point 1 is replication 1 of the first key: its own rows and its key's rows over the
    # replications move; the other key's do not.
    assert {(c.point_key, c.replication) for c in moved} <= {
        ("load.concurrency=1", 1),
        ("load.concurrency=1", None),
    }
    assert ("load.concurrency=1", 1) in {(c.point_key, c.replication) for c in moved}
    assert main(["compare", str(base), str(new)]) == 1
    out = capsys.readouterr().out
    assert "{load.concurrency=1 #1}" in out and "{load.concurrency=1 mean}" in out
    assert "load.concurrency=2" not in out.split("Paired per turn")[0]
    pairings = paired_between(read_run(base), read_run(new))
    moved_pairings = [p for p in pairings if p.stats.pairs and p.stats.mean]
    assert {(p.point_key, p.replication, p.column) for p in moved_pairings} == {
        ("load.concurrency=1", 1, "latency_ns")
    }
    assert all(p.stats.mean == 1.0 for p in moved_pairings)


def test_the_json_names_each_changes_point(
    base: Path, tables: dict[str, pa.Table], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = write(tmp_path / "new", slower_at(tables, 1))
    assert main(["compare", str(base), str(new), "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    moved = [c for c in document["changes"] if c["moved"]]
    assert {c["point_key"] for c in moved} == {"load.concurrency=1"}
    assert {c["replication"] for c in moved} == {1, None}


def test_runs_of_other_points_are_refused(
    base: Path, tables: dict[str, pa.Table], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    renamed = {
        name: table.set_column(
            table.schema.get_field_index("point_key"),
            table.schema.field("point_key"),  # the field as written (not nullable)
            pc.replace_substring(table["point_key"], "=2", "=3"),
        )
        for name, table in tables.items()
    }
    new = write(tmp_path / "new", renamed)
    assert main(["compare", str(base), str(new)]) == 2
    err = capsys.readouterr().err
    assert "points" in err and "load.concurrency=3" in err and "Traceback" not in err


def test_the_compare_page_names_each_rows_point(
    base: Path, tables: dict[str, pa.Table], tmp_path: Path
) -> None:
    new = write(tmp_path / "new", slower_at(tables, 1))
    assert main(["report", str(base), str(new)]) == 0
    page = (tmp_path / "compare-base-new" / "compare.html").read_text(encoding="utf-8")
    assert "{load.concurrency=1 #1}" in page and "{load.concurrency=1 mean}" in page
