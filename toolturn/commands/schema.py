"""`toolturn schema [TABLE | FILE.parquet]`: the columns of the run tables and of the serve
recording's, with their type, whether they can be null, their unit and what they mean.

Without an argument every table (turns, tools, repairs, requests, sessions, events, summary, then
the recording's: recording.requests, recording.tool_calls, recording.recoveries); with a table's
name that table; with a Parquet file of a run folder or a recording, the descriptions that file
carries (each column's key-value metadata). Exit status 2 for an unknown table or unreadable file.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from rich.table import Table

from toolturn.errors import UserError
from toolturn.metrics.columns import all_specs, described_schema
from toolturn.metrics.summary_table import output_console
from toolturn.wire import recording


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "schema",
        help="describe the columns of the run tables (or of a Parquet file)",
        description="Print each column of the run tables: type, nullable, unit, meaning.",
    )
    parser.add_argument(
        "what", metavar="TABLE|FILE", nargs="?",
        help="a table name (turns, tools, repairs, requests, sessions, events, summary; "
        "recording.requests, recording.tool_calls, recording.recoveries of toolturn serve "
        "--record) or a Parquet file written by either; default: every table",
    )
    parser.set_defaults(func=run)


def described_schemas() -> dict[str, pa.Schema]:
    """Every table's schema with its columns' descriptions and units, by the name it goes by."""
    schemas = {spec.name: described_schema(spec.name, spec.schema) for spec in all_specs()}
    schemas.update((recording.PREFIX + spec.name, spec.schema) for spec in recording.TABLES)
    return schemas


def run(args: argparse.Namespace) -> int:
    schemas = described_schemas()
    console = output_console()
    if args.what is None:
        chosen = list(schemas.items())
    elif args.what in schemas:
        chosen = [(args.what, schemas[args.what])]
    elif args.what.endswith(".parquet"):
        path = Path(args.what)
        try:
            chosen = [(str(path), pq.read_schema(path))]
        except (OSError, pa.ArrowException) as error:
            raise UserError(f"{path}: unreadable Parquet ({error})") from None
    else:
        raise UserError(
            f"{args.what!r}: not a table ({', '.join(schemas)}) nor a .parquet file"
        )
    for name, schema in chosen:
        console.print(schema_table(name, schema))
    return 0


def schema_table(name: str, schema: pa.Schema) -> Table:
    table = Table(title=name, title_justify="left")
    table.add_column("column", no_wrap=True)
    table.add_column("type")
    table.add_column("null", no_wrap=True)
    table.add_column("unit", no_wrap=True)
    table.add_column("meaning")
    for field in schema:
        metadata = field.metadata or {}
        type_ = str(field.type)
        if pa.types.is_dictionary(field.type):
            type_ = f"category ({field.type.value_type})"
        table.add_row(
            field.name,
            type_,
            "yes" if field.nullable else "",
            metadata.get(b"unit", b"").decode(),
            metadata.get(b"description", b"").decode(),
        )
    return table
