"""The table and column reference: every run table's columns, from the specs `toolturn schema`
prints and the Parquet files carry (`toolturn.metrics.columns`), with their Arrow type, whether
they can be null, their unit and meaning, and each table's sort key."""

from __future__ import annotations

import pyarrow as pa

from toolturn.metrics.columns import all_specs, describe, described_schema
from toolturn.metrics.point_columns import POINT_FIELDS
from toolturn.metrics.schema import TableSpec
from toolturn.reference.markdown import GENERATED, code, table
from toolturn.wire import recording

HEADER = ("column", "type", "null", "unit", "meaning")
# What each file is, in a line: the specs name the columns, not the table's purpose.
PURPOSE = {
    "turns": "One row per turn: a request (and its retries) and the tools it ran.",
    "tools": "One row per tool call.",
    "repairs": "One row per change the API-boundary repair made to a request.",
    "requests": "One row per request sent (each attempt).",
    "sessions": "One row per session.",
    "events": "One row per stream event the runtime was fed; only with `toolturn run --trace`.",
    "summary": "Long form: one row per simulation (arm at one load level) and metric; rows "
    "with `versus` set are paired differences.",
    "recording.requests": "A `toolturn serve --record` folder: one row per request that reached "
    "a model endpoint (or was refused there).",
    "recording.tool_calls": "A recording: one row per tool call the server sent, with the "
    "request that brought its result back.",
    "recording.recoveries": "A recording: one row per request a fault was injected into, with "
    "what the session's next request did.",
}


def type_name(data_type: pa.DataType) -> str:
    """An Arrow type as `toolturn schema` shows it (a dictionary-encoded string: a category)."""
    if pa.types.is_dictionary(data_type):
        return f"category ({data_type.value_type})"
    return str(data_type)


def _rows(schema: pa.Schema) -> list[list[str]]:
    rows = []
    for field in schema:
        metadata = field.metadata or {}
        rows.append([
            code(field.name), type_name(field.type), "yes" if field.nullable else "",
            metadata.get(b"unit", b"").decode(), metadata.get(b"description", b"").decode(),
        ])
    return rows


def _section(spec: TableSpec, name: str, schema: pa.Schema, then: str) -> list[str]:
    lines = ["", f"## {name}", "", PURPOSE.get(name, ""), ""]
    if spec.sort_key:
        lines += ["Rows are sorted by " + ", ".join(code(c) for c in spec.sort_key) + then, ""]
    return lines + table(HEADER, _rows(schema))


def render() -> str:
    """The table reference page."""
    lines = [
        GENERATED, "", "# Tables and columns", "",
        "The Parquet files of a run folder (`toolturn run`, `toolturn live`), as `toolturn "
        "schema` prints them; each file carries these descriptions and units as its fields' "
        "metadata. Times and durations are `int64` nanoseconds of simulated time from the "
        "run's start; categories are dictionary-encoded strings. Every table joins one to one "
        "to `sessions` on (`profile`, `policy`, `load_level`, `session_id`).",
        "",
        "A run of several experiment points adds these columns to every table, after the "
        "run-wide ones, and sorts its rows by `point` first:",
        "",
    ]
    point_rows = [
        [code(f.name), type_name(f.type), "yes" if f.nullable else "",
         describe("turns", f.name)[1], describe("turns", f.name)[0]]
        for f in POINT_FIELDS
    ]
    lines += table(HEADER, point_rows)
    for spec in all_specs():
        lines += _section(spec, spec.name, described_schema(spec.name, spec.schema),
                          ", then by every other column.")
    lines += ["", "The tables of a `toolturn serve --record` folder follow (`toolturn schema "
              "recording.requests`, ...): times are the server's monotonic nanoseconds from the "
              "recording's start."]
    for spec in recording.TABLES:  # their schemas carry their descriptions
        lines += _section(spec, recording.PREFIX + spec.name, spec.schema,
                          " (as `toolturn.wire.record_files.read_table` reads them).")
    return "\n".join(lines) + "\n"
