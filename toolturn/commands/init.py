"""`toolturn init DIR`: write a starter scenario, a packaged one, into a folder to edit and run.

    toolturn init DIR [--scenario NAME] [-f/--force]

Writes DIR/NAME.toml (NAME `default` unless `--scenario` picks another packaged scenario, see
toolturn/scenario/packaged.py), creating DIR if needed, and prints the file written and the command
that runs it. An existing file is an error unless `--force`. Exit status: 0 written, 2 an
existing file, or a folder or file that could not be written.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any

from toolturn.errors import UserError, printable
from toolturn.scenario.packaged import packaged_names, packaged_path

DEFAULT_SCENARIO = "default"


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "init",
        help="write a starter scenario (a packaged one) into a folder",
        description="Write a packaged scenario into DIR as a starting point, and say how to "
        "run it.",
    )
    parser.add_argument("directory", metavar="DIR", type=Path, help="folder to write into")
    parser.add_argument(
        "--scenario", default=DEFAULT_SCENARIO, choices=packaged_names(), metavar="NAME",
        help=f"packaged scenario to copy (default {DEFAULT_SCENARIO}; one of "
        f"{', '.join(packaged_names())})",
    )
    parser.add_argument("-f", "--force", action="store_true", help="replace an existing file")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    source = packaged_path(args.scenario)
    if source is None:  # argparse's choices come from the same folder
        raise UserError(f"no packaged scenario {args.scenario!r}")
    target = args.directory / source.name
    if target.exists() and not args.force:
        raise UserError(f"{printable(str(target))}: exists (use --force to replace it)")
    try:
        args.directory.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
    except OSError as error:
        raise UserError(f"{printable(str(target))}: cannot write: {error.strerror}") from None
    print(f"wrote {printable(str(target))}")
    print(f"run it with: toolturn run {shlex.quote(str(target))}")
    return 0
