"""Run folders: files and metadata, pandas and pyarrow readers, byte identity, atomic writes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from tests.helpers.metrics_support import collect, handmade_rows, handmade_tables, metadata
from toolturn.errors import UserError
from toolturn.metrics import MetricsError, RunMetadata, read_run, write_run
from toolturn.metrics import writer as writer_module
from toolturn.metrics.provenance import file_sha256, git_commit, package_versions
from toolturn.metrics.schema import SUMMARY_SCHEMA, TABLES

FILES = sorted([f"{spec.name}.parquet" for spec in TABLES] + ["summary.parquet", "run.json"])


def test_folder_holds_every_table_the_summary_and_run_json(tmp_path: Path) -> None:
    summary = write_run(tmp_path / "run", handmade_tables(), metadata())
    assert sorted(path.name for path in (tmp_path / "run").iterdir()) == FILES
    run_json = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run_json["metadata"]["scenario"] == "handmade"
    assert run_json["row_counts"]["tools"] == 6
    groups = {(g["policy"], g["versus"]): g for g in run_json["summary"]}
    assert groups["streaming", None]["metrics"]["latency_ns.p50"] == 300
    assert groups["streaming", None]["load_level"] == 0
    assert groups["streaming", "serial"]["metrics"]["paired.latency_ns.median"] == 100 - 10**9
    assert run_json["units"]["latency_ns.p50"] == "ns"
    assert len(summary) == sum(len(group["metrics"]) for group in run_json["summary"])
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run"]


def test_every_parquet_file_carries_the_run_metadata_and_is_zstd(tmp_path: Path) -> None:
    write_run(tmp_path / "run", handmade_tables(), metadata(sha256="ab" * 32))
    for name in [name for name in FILES if name.endswith(".parquet")]:
        path = tmp_path / "run" / name
        recorded = json.loads(pq.read_schema(path).metadata[b"sim.run"])
        assert recorded["scenario"] == "handmade"
        assert recorded["scenario_sha256"] == "ab" * 32
        assert recorded["seed"] == 7
        assert recorded["run_id"] == "run-1"
        assert set(recorded["versions"]) == {"sim", "numpy", "pyarrow", "simpy", "anthropic"}
        assert "git_commit" in recorded
        assert pq.ParquetFile(path).metadata.row_group(0).column(0).compression == "ZSTD"


def test_pyarrow_reads_back_the_exact_schemas(tmp_path: Path) -> None:
    write_run(tmp_path / "run", handmade_tables(), metadata())
    for spec in TABLES:
        table = pq.read_table(tmp_path / "run" / f"{spec.name}.parquet")
        assert table.schema.remove_metadata().equals(spec.schema)
    summary = pq.read_table(tmp_path / "run" / "summary.parquet")
    assert summary.schema.remove_metadata().equals(SUMMARY_SCHEMA)


def test_pandas_reads_categories_and_integer_nanoseconds(tmp_path: Path) -> None:
    write_run(tmp_path / "run", handmade_tables(), metadata())
    turns = pd.read_parquet(tmp_path / "run" / "turns.parquet")
    assert turns["policy"].dtype == "category"
    assert turns["latency_ns"].dtype == "int64"
    nullable = pd.read_parquet(tmp_path / "run" / "turns.parquet", dtype_backend="numpy_nullable")
    assert nullable["ttfts_ns"].dtype == "Int64"
    assert nullable["ttfts_ns"].isna().sum() == 1
    summary = pd.read_parquet(tmp_path / "run" / "summary.parquet")
    assert list(summary.columns) == [
        "policy", "profile", "protocol", "versus", "load_level", "load", "metric", "value", "unit",
        "wall_clock",
    ]


def test_same_rows_give_byte_identical_folders_in_any_order(tmp_path: Path) -> None:
    write_run(tmp_path / "a", handmade_tables(), metadata())
    write_run(tmp_path / "b", collect(list(reversed(handmade_rows()))).tables(), metadata())
    for name in FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_a_failure_mid_write_leaves_nothing_at_the_destination(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written: list[Path] = []
    real = writer_module._write_parquet

    def fail_on_third(path: Path, *args: object) -> None:
        if len(written) == 2:
            raise OSError("disk full")
        written.append(path)
        real(path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(writer_module, "_write_parquet", fail_on_third)
    with pytest.raises(OSError, match="disk full"):
        write_run(tmp_path / "run", handmade_tables(), metadata())
    assert len(written) == 2
    assert list(tmp_path.iterdir()) == []


def test_a_failed_replacement_keeps_the_old_folder_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_run(tmp_path / "run", handmade_tables(), metadata())
    before = {name: (tmp_path / "run" / name).read_bytes() for name in FILES}

    def fail(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(writer_module, "_write_parquet", fail)
    with pytest.raises(OSError):
        write_run(tmp_path / "run", handmade_tables(), metadata("other"), replace=True)
    assert {name: (tmp_path / "run" / name).read_bytes() for name in FILES} == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run"]


def test_replace_swaps_in_the_new_folder(tmp_path: Path) -> None:
    write_run(tmp_path / "run", handmade_tables(), metadata())
    write_run(tmp_path / "run", handmade_tables(), metadata("other"), replace=True)
    assert read_run(tmp_path / "run").metadata["scenario"] == "other"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run"]


def test_an_existing_folder_is_not_overwritten_by_default(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    with pytest.raises(FileExistsError):
        write_run(tmp_path / "run", handmade_tables(), metadata())


def test_tables_of_another_schema_are_refused(tmp_path: Path) -> None:
    tables = handmade_tables()
    tables["turns"] = tables["turns"].drop_columns(["load"])
    with pytest.raises(MetricsError, match=r"^turns: schema differs"):
        write_run(tmp_path / "run", tables, metadata())
    del tables["turns"]
    with pytest.raises(MetricsError, match="exactly"):
        write_run(tmp_path / "run", tables, metadata())


def test_read_run_gives_back_tables_summary_and_metadata(tmp_path: Path) -> None:
    summary = write_run(tmp_path / "run", handmade_tables(), metadata())
    run = read_run(tmp_path / "run")
    assert run.summary == summary
    assert run.metadata == metadata().to_json()
    assert run.tables["tools"].num_rows == 6


@pytest.mark.parametrize("damage", ["missing", "file", "empty", "no_turns", "bad_parquet"])
def test_read_run_refuses_what_is_not_a_run_folder(tmp_path: Path, damage: str) -> None:
    target = tmp_path / "run"
    if damage == "file":
        target.write_text("x")
    elif damage == "empty":
        target.mkdir()
    elif damage in {"no_turns", "bad_parquet"}:
        write_run(target, handmade_tables(), metadata())
        if damage == "no_turns":
            (target / "turns.parquet").unlink()
        else:
            (target / "turns.parquet").write_bytes(b"not parquet")
    with pytest.raises(UserError, match=str(target)):
        read_run(target)


def test_collected_metadata_records_versions_and_this_checkout(tmp_path: Path) -> None:
    recorded = RunMetadata.collect(run_id="r", scenario="s", scenario_sha256="x", seed=1)
    assert recorded.versions == package_versions()
    assert recorded.versions["pyarrow"] is not None
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parents[1],
        check=False,
    ).stdout.strip()
    assert recorded.git_commit == (head or None)


def test_git_commit_is_none_outside_a_repository(tmp_path: Path) -> None:
    assert git_commit(tmp_path) is None


def test_file_sha256_hashes_the_bytes(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_bytes(b"abc")
    expected = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert file_sha256(tmp_path / "s.toml") == expected
