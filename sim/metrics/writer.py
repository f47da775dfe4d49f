"""A run folder: the five tables, the summary and ``run.json``, written atomically.

Layout of ``<out_dir>/``::

    turns.parquet tools.parquet repairs.parquet requests.parquet sessions.parquet
    events.parquet    only when the run was traced (``sim run --trace``): one row per event
    summary.parquet   long form: policy, profile, metric, value, unit, wall_clock
    run.json          metadata, row counts and the summary, for people

Every Parquet file is zstd-compressed and carries the run metadata as JSON under the key-value
metadata key ``sim.run``. Output is a function of the input alone (no clock is read, rows are
sorted), so writing the same run twice gives byte-identical files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from sim.metrics.atomic import atomic_directory
from sim.metrics.provenance import git_commit, package_versions
from sim.metrics.schema import OPTIONAL_TABLES, TABLES
from sim.metrics.summary import (
    PERCENTILE_METHOD,
    Arm,
    SummaryRow,
    arm_label,
    summarize,
    summary_to_arrow,
)
from sim.metrics.tables import MetricsError

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
    events_per_wall_s: Mapping[Arm, float] | None = None,
    replace: bool = False,
) -> list[SummaryRow]:
    """Writes the run folder ``out_dir`` atomically and returns the summary it wrote.

    ``tables`` are the five run tables as built by ``RunCollector.tables()``, and ``events``
    (``schema.EVENTS``) when the run was traced; the summary is of the five alone.
    ``events_per_wall_s`` is the harness speed per (profile, policy) (see ``summarize``). An
    existing ``out_dir`` raises ``FileExistsError`` unless ``replace`` is true.
    """
    _check_tables(tables)
    run_tables = {spec.name: tables[spec.name] for spec in TABLES}
    summary = summarize(run_tables, events_per_wall_s=events_per_wall_s)
    metadata_json = metadata.to_json()
    key_value = {METADATA_KEY: json.dumps(metadata_json, sort_keys=True).encode()}
    with atomic_directory(Path(out_dir), replace=replace) as staging:
        written = [spec for spec in TABLES + OPTIONAL_TABLES if spec.name in tables]
        for spec in written:
            _write_parquet(staging / f"{spec.name}.parquet", tables[spec.name], key_value)
        _write_parquet(staging / SUMMARY_FILE, summary_to_arrow(summary), key_value)
        run_json = {
            "metadata": metadata_json,
            "row_counts": {spec.name: tables[spec.name].num_rows for spec in written},
            "percentile_method": f"numpy {PERCENTILE_METHOD!r}",
            "units": {row.metric: row.unit for row in summary},
            "wall_clock_metrics": sorted({row.metric for row in summary if row.wall_clock}),
            "summary": _by_policy(summary),
        }
        text = json.dumps(run_json, indent=2, allow_nan=False) + "\n"
        (staging / RUN_FILE).write_text(text, encoding="utf-8")
    return summary


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
        if not schema.equals(spec.schema):
            raise MetricsError(f"{spec.name}: schema differs from schema.{spec.name.upper()}")


def _write_parquet(path: Path, table: pa.Table, key_value: dict[bytes, bytes]) -> None:
    pq.write_table(table.replace_schema_metadata(key_value), path, compression=COMPRESSION)


def _by_policy(summary: list[SummaryRow]) -> dict[str, dict[str, float]]:
    """Metric values by arm, each named by `arm_label` (the policy alone under `default`)."""
    by_policy: dict[str, dict[str, float]] = {}
    for row in summary:
        by_policy.setdefault(arm_label(*row.arm), {})[row.metric] = row.value
    return by_policy
