"""`toolturn schema [TABLE | FILE.parquet]`: the columns of the run tables, with their type, whether
they can be null, their unit and what they mean.

Without an argument every table (turns, tools, repairs, requests, sessions, events, summary);
with a table's name that table; with a Parquet file of a run folder, the descriptions that file
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


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "schema",
        help="describe the columns of the run tables (or of a Parquet file)",
        description="Print each column of the run tables: type, nullable, unit, meaning.",
    )
    parser.add_argument(
        "what", metavar="TABLE|FILE", nargs="?",
        help="a table name (turns, tools, repairs, requests, sessions, events, summary) or a "
        "Parquet file written by toolturn run; default: every table",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    specs = {spec.name: spec for spec in all_specs()}
    console = output_console()
    if args.what is None:
        chosen = [(name, described_schema(name, spec.schema)) for name, spec in specs.items()]
    elif args.what in specs:
        chosen = [(args.what, described_schema(args.what, specs[args.what].schema))]
    elif args.what.endswith(".parquet"):
        path = Path(args.what)
        try:
            chosen = [(str(path), pq.read_schema(path))]
        except (OSError, pa.ArrowException) as error:
            raise UserError(f"{path}: unreadable Parquet ({error})") from None
    else:
        raise UserError(
            f"{args.what!r}: not a table ({', '.join(specs)}) nor a .parquet file"
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
