"""A run folder: the five tables, the summary and ``run.json``, written atomically.

Layout of ``<out_dir>/``::

    turns.parquet tools.parquet repairs.parquet requests.parquet sessions.parquet
    events.parquet    only when the run was traced (``toolturn run --trace``): one row per event
    summary.parquet   long form: policy, profile, versus, load_level, load, metric, value, unit,
                      wall_clock
    run.json          metadata, row counts and the summary, for people

A run's tables are written either from tables in memory (``write_run``) or from its units'
part files (``write_run_from_parts``, ``toolturn.metrics.parts``), with the same rows in the same
order and row groups of ``assemble.ROW_GROUP_ROWS`` rows. A driver that holds each unit's rows
(``toolturn live``) writes them through the part files too (``write_run_from_rows``): one path
from rows to a run folder, whoever made the rows. Every Parquet file is
zstd-compressed and carries the run metadata as JSON under the key-value
metadata key ``sim.run``, and each column its ``description`` and ``unit``
(``toolturn.metrics.columns``). Output is a function of the input alone (no clock is read, rows are
sorted), so writing the same run twice gives byte-identical files.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from toolturn.metrics.assemble import ROW_GROUP_ROWS, assemble_table
from toolturn.metrics.atomic import atomic_directory, scratch_sibling
from toolturn.metrics.columns import SUMMARY, described_schema
from toolturn.metrics.parts import Rows, UnitParts, part_files
from toolturn.metrics.percentiles import PERCENTILE_METHOD_TEXT
from toolturn.metrics.point_columns import with_point_columns
from toolturn.metrics.provenance import git_commit, package_versions
from toolturn.metrics.replications import replication_rows
from toolturn.metrics.schema import EVENTS, OPTIONAL_TABLES, TABLES
from toolturn.metrics.summary import (
    SummaryRow,
    UnitKey,
    summarize,
    summary_groups,
    summary_to_arrow,
)
from toolturn.metrics.summary_files import summarize_folder
from toolturn.metrics.tables import MetricsError

METADATA_KEY = b"sim.run"
SUMMARY_FILE = "summary.parquet"
RUN_FILE = "run.json"
COMPRESSION = "zstd"


@dataclass(frozen=True)
class RunMetadata:
    """What identifies a run and where it came from.

    ``scenario_sha256`` is the sha256 of the scenario file's bytes (``provenance.file_sha256``);
    ``extra`` holds anything else JSON-serialisable the caller wants recorded (policies, session
    count, a load sweep, a start time if one is wanted in the files).
    """

    run_id: str
    scenario: str
    scenario_sha256: str
    seed: int
    versions: Mapping[str, str | None]
    git_commit: str | None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def collect(
        cls,
        *,
        run_id: str,
        scenario: str,
        scenario_sha256: str,
        seed: int,
        extra: Mapping[str, Any] | None = None,
    ) -> RunMetadata:
        """Metadata with this process's package versions and the code's git commit filled in."""
        return cls(
            run_id=run_id,
            scenario=scenario,
            scenario_sha256=scenario_sha256,
            seed=seed,
            versions=package_versions(),
            git_commit=git_commit(),
            extra=dict(extra or {}),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "scenario": self.scenario,
            "scenario_sha256": self.scenario_sha256,
            "seed": int(self.seed),
            "versions": dict(self.versions),
            "git_commit": self.git_commit,
            "extra": dict(self.extra),
        }


def write_run(
    out_dir: Path,
    tables: Mapping[str, pa.Table],
    metadata: RunMetadata,
    *,
    events_per_wall_s: Mapping[UnitKey, float] | None = None,
    replace: bool = False,
) -> list[SummaryRow]:
    """Writes the run folder ``out_dir`` atomically and returns the summary it wrote.

    ``tables`` are the five run tables as built by ``RunCollector.tables()``, and ``events``
    (``schema.EVENTS``) when the run was traced; the summary is of the five alone.
    ``events_per_wall_s`` is the harness speed per (profile, policy, load_level, protocol)
    (see ``summarize``). An existing ``out_dir`` raises ``FileExistsError`` unless ``replace``
    is true.
    """
    _check_tables(tables)
    run_tables = {spec.name: tables[spec.name] for spec in TABLES}
    summary = summarize(run_tables, events_per_wall_s=events_per_wall_s)
    metadata_json = metadata.to_json()
    key_value = {METADATA_KEY: json.dumps(metadata_json, sort_keys=True).encode()}
    with atomic_directory(Path(out_dir), replace=replace) as staging:
        written = [spec for spec in TABLES + OPTIONAL_TABLES if spec.name in tables]
        for spec in written:
            path = staging / f"{spec.name}.parquet"
            _write_parquet(path, tables[spec.name], spec.name, key_value)
        row_counts = {spec.name: tables[spec.name].num_rows for spec in written}
        _write_summary(staging, summary, metadata_json, row_counts, key_value)
    return summary


def write_run_from_parts(
    out_dir: Path,
    parts: Sequence[tuple[Path, Mapping[str, Any]]],
    metadata: RunMetadata,
    *,
    trace: bool = False,
    points: Sequence[tuple[int, int, str]] | None = None,
    events_per_wall_s: Mapping[UnitKey, float] | None = None,
    replace: bool = False,
) -> list[SummaryRow]:
    """Writes the run folder ``out_dir`` atomically from its units' part folders (``parts``, in
    the tables' order: ``toolturn.metrics.assemble``, each with its point's column values) and
    returns the summary, computed from the written tables arm by arm
    (``toolturn.metrics.summary_files``): memory holds one row group per table, never the run. The
    folder is what ``write_run`` writes for the same rows.

    With ``points`` (the (point, replication, point_key) of each point of a run of several), the
    tables have the point columns (``toolturn.metrics.point_columns``) and the summary is what
    ``summarize`` gives for them: each point's rows in turn, in point order, then the rows over
    each key's replications (``events_per_wall_s`` is then left out: it is keyed by simulation,
    not by point)."""
    metadata_json = metadata.to_json()
    key_value = {METADATA_KEY: json.dumps(metadata_json, sort_keys=True).encode()}
    run_wide = {"run_id": metadata.run_id, "scenario": metadata.scenario, "seed": metadata.seed}
    written = TABLES + OPTIONAL_TABLES if trace else TABLES
    if points is not None:
        written = tuple(with_point_columns(spec) for spec in written)
    with atomic_directory(Path(out_dir), replace=replace) as staging:
        row_counts = {}
        for spec in written:
            files = [
                (part, {**run_wide, **values})
                for folder, values in parts
                for part in part_files(Path(folder), spec.name)
            ]
            path = staging / f"{spec.name}.parquet"
            row_counts[spec.name] = assemble_table(path, spec, files, key_value)
        if points is None:
            summary = summarize_folder(staging, events_per_wall_s=events_per_wall_s)
        else:
            summary = [
                dataclasses.replace(row, point=point, replication=replication, point_key=key)
                for point, replication, key in points
                for row in summarize_folder(staging, point=point)
            ]
            summary += replication_rows(summary)
        _write_summary(staging, summary, metadata_json, row_counts, key_value)
    return summary


def write_run_from_rows(
    out_dir: Path,
    units: Sequence[tuple[Mapping[str, Any], Rows]],
    metadata: RunMetadata,
    *,
    events_per_wall_s: Mapping[UnitKey, float] | None = None,
    replace: bool = False,
) -> list[SummaryRow]:
    """Writes the run folder ``out_dir`` from the rows of its units (each one simulation's
    columns, ``schema.UNIT_COLUMNS``, and its rows by table and column, without the columns
    assembly adds: ``toolturn.metrics.row_columns``), through part files in a hidden sibling
    (``toolturn.metrics.parts``) and ``write_run_from_parts``: the folder ``write_run`` writes
    for the same rows. A unit without rows adds none."""
    kept = [(columns, rows) for columns, rows in units if rows["sessions"]["session_id"]]
    with scratch_sibling(Path(out_dir), "parts") as scratch:
        parts: list[tuple[Path, Mapping[str, Any]]] = []
        # In the tables' order (profile, policy, load_level), as the engine's units are.
        for number, (columns, rows) in enumerate(sorted(kept, key=lambda item: _unit_key(
                item[0]))):
            unit = UnitParts(scratch / f"unit{number}", trace=EVENTS.name in rows)
            unit.add_session(0, rows)  # the unit's rows as one batch: sorted whole
            unit.close()
            parts.append((unit.folder, columns))
        return write_run_from_parts(out_dir, parts, metadata, trace=any(
            EVENTS.name in rows for _, rows in units), events_per_wall_s=events_per_wall_s,
            replace=replace)


def _unit_key(columns: Mapping[str, Any]) -> tuple[str, str, int]:
    return (str(columns["profile"]), str(columns["policy"]), int(columns["load_level"]))


def _write_summary(
    staging: Path,
    summary: list[SummaryRow],
    metadata_json: dict[str, Any],
    row_counts: dict[str, int],
    key_value: dict[bytes, bytes],
) -> None:
    _write_parquet(staging / SUMMARY_FILE, summary_to_arrow(summary), SUMMARY, key_value)
    run_json = {
        "metadata": metadata_json,
        "row_counts": row_counts,
        "percentile_method": PERCENTILE_METHOD_TEXT,
        "units": {row.metric: row.unit for row in summary},
        "wall_clock_metrics": sorted({row.metric for row in summary if row.wall_clock}),
        "summary": summary_groups(summary),
    }
    text = json.dumps(run_json, indent=2, allow_nan=False) + "\n"
    (staging / RUN_FILE).write_text(text, encoding="utf-8")


def _check_tables(tables: Mapping[str, pa.Table]) -> None:
    expected = {spec.name for spec in TABLES}
    optional = {spec.name for spec in OPTIONAL_TABLES}
    if not expected <= set(tables) <= expected | optional:
        raise MetricsError(
            f"run tables must be exactly {sorted(expected)} (and optionally {sorted(optional)}), "
            f"got {sorted(tables)}"
        )
    for spec in TABLES + OPTIONAL_TABLES:
        if spec.name not in tables:
            continue
        schema = tables[spec.name].schema.remove_metadata()
        if not (schema.equals(spec.schema) or schema.equals(with_point_columns(spec).schema)):
            raise MetricsError(f"{spec.name}: schema differs from schema.{spec.name.upper()}")


def _write_parquet(
    path: Path, table: pa.Table, name: str, key_value: dict[bytes, bytes]
) -> None:
    # Each column carries its description and unit (toolturn.metrics.columns; `toolturn schema`).
    schema = described_schema(name, table.schema).with_metadata(key_value)
    pq.write_table(
        table.cast(schema), path, compression=COMPRESSION, row_group_size=ROW_GROUP_ROWS
    )
