"""Reading a run folder back, with one-line errors for anything that is not a run folder."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from toolturn.errors import UserError
from toolturn.metrics.schema import (
    EVENTS,
    EXPERIMENT_COLUMNS,
    POINT_SUMMARY_SCHEMA,
    SUMMARY_SCHEMA,
    TABLES,
)
from toolturn.metrics.summary import SummaryRow, summary_from_arrow
from toolturn.metrics.writer import RUN_FILE, SUMMARY_FILE

if TYPE_CHECKING:  # pandas is imported by `frame` alone: most readers of a run never need it
    import pandas as pd


__all__ = ["RunFolder", "read_run"]


@dataclass(frozen=True)
class RunFolder:
    """A run folder's contents: metadata (from ``run.json``), the five tables and the summary,
    and the event trace (``events.parquet``) when the run was traced, else None."""

    path: Path
    metadata: dict[str, Any]
    tables: dict[str, pa.Table]
    summary: list[SummaryRow]
    events: pa.Table | None = None

    def frame(self, name: str) -> pd.DataFrame:
        """Table `name` (one of the five, or ``events`` of a traced run) as a pandas
        DataFrame whose integer columns stay integers where they can be null
        (`toolturn.metrics.frames`)."""
        table = self.events if name == EVENTS.name else self.tables.get(name)
        if table is None:
            known = [*self.tables, *([EVENTS.name] if self.events is not None else [])]
            raise UserError(f"{self.path}: no table {name!r} (it has {', '.join(known)})")
        from toolturn.metrics.frames import table_frame

        return table_frame(table)


def read_run(run_dir: Path) -> RunFolder:
    """Reads a run folder (``toolturn.metrics.writer``); raises ``UserError`` naming what is
    wrong."""
    run_dir = Path(run_dir)
    if not run_dir.exists():
        raise UserError(f"{run_dir}: no such run folder")
    if not run_dir.is_dir():
        raise UserError(f"{run_dir}: not a folder")
    tables = {
        spec.name: _read_table(run_dir, f"{spec.name}.parquet", spec.schema) for spec in TABLES
    }
    summary = summary_from_arrow(
        _read_table(run_dir, SUMMARY_FILE, SUMMARY_SCHEMA, POINT_SUMMARY_SCHEMA)
    )
    events_name = f"{EVENTS.name}.parquet"
    events = (
        _read_table(run_dir, events_name, EVENTS.schema)
        if (run_dir / events_name).is_file()
        else None
    )
    run_json = _require(run_dir, RUN_FILE)
    try:
        metadata = json.loads(run_json.read_text(encoding="utf-8"))["metadata"]
    except RecursionError:
        # json's parser recurses per level: 100,000 nested brackets exhaust the stack.
        reason = "nesting too deep"
        raise UserError(f"{run_json}: not a run.json written by toolturn ({reason})") from None
    except (ValueError, KeyError, TypeError) as error:
        raise UserError(f"{run_json}: not a run.json written by toolturn ({error})") from error
    _check_metadata(run_json, metadata)
    return RunFolder(
        path=run_dir, metadata=metadata, tables=tables, summary=summary, events=events
    )


def _check_metadata(run_json: Path, metadata: Any) -> None:
    # Reports and comparisons look fields up in these: a hand-edited file must fail here, named.
    if not isinstance(metadata, dict):
        raise UserError(f"{run_json}: field metadata must be an object, not {_json_kind(metadata)}")
    versions = metadata.get("versions")
    if versions is not None and not isinstance(versions, dict):
        raise UserError(
            f"{run_json}: field metadata.versions must be an object, not {_json_kind(versions)}"
        )


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a string" if isinstance(value, str) else "an array"


def _require(run_dir: Path, name: str) -> Path:
    path = run_dir / name
    if not path.is_file():
        raise UserError(f"{run_dir}: not a run folder (no {name})")
    return path


def _read_table(
    run_dir: Path, name: str, schema: pa.Schema, points_schema: pa.Schema | None = None
) -> pa.Table:
    """The table, whose columns must be `schema`'s: as they are, or for a run of several
    experiment points, `points_schema` (by default `schema` with ``EXPERIMENT_COLUMNS``)."""
    path = _require(run_dir, name)
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as error:
        raise UserError(f"{path}: unreadable Parquet ({error})") from error
    table = _with_later_columns(table, schema)
    found = table.schema.remove_metadata()
    if not (found.equals(schema) or _of_points(found, schema, points_schema)):
        raise UserError(
            f"{path}: columns differ from this version of toolturn; write the run again"
        )
    return table


# Columns added to the tables since runs were first written, with the value every row of an older
# run had: such a run reads as this version's (a baseline stays comparable without a rerun).
LATER_COLUMNS: dict[str, Any] = {"protocol": "anthropic", "misfires": 0, "misfired": False,
                                 "error_type": None, "error_message": None}


def _with_later_columns(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """`table` with each of `LATER_COLUMNS` it lacks and `schema` has, at `schema`'s place."""
    for position, field in enumerate(schema):
        if field.name in LATER_COLUMNS and field.name not in table.column_names:
            value = pa.array([LATER_COLUMNS[field.name]] * table.num_rows,
                             type=field.type.value_type if pa.types.is_dictionary(field.type)
                             else field.type)
            if pa.types.is_dictionary(field.type):
                value = value.dictionary_encode()
            table = table.add_column(min(position, table.num_columns), field, value)
    return table


def _of_points(found: pa.Schema, schema: pa.Schema, points_schema: pa.Schema | None) -> bool:
    if points_schema is not None:
        return bool(found.equals(points_schema))
    if not set(EXPERIMENT_COLUMNS) <= set(found.names):
        return False
    rest = pa.schema([field for field in found if field.name not in EXPERIMENT_COLUMNS])
    return bool(rest.equals(schema))
