"""`sim validate FILE...`: check scenario files without running them.

Prints `FILE: ok (<name>, N tools, policies a, b)` for each good file and the error for each bad
one (every file is checked), and exits 2 if any file was bad.
"""

from __future__ import annotations

import argparse
from typing import Any

from sim.errors import UserError, print_error, printable
from sim.scenario.loader import load_scenario
from sim.scenario.schema import Scenario

EXIT_OK = 0
EXIT_BAD_INPUT = 2


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check scenario files without running them",
        description="Check scenario files: TOML syntax, unknown keys, types, ranges, "
        "cross-references.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="scenario TOML files")
    parser.set_defaults(func=run)


def summary(scenario: Scenario) -> str:
    """The one-line description of a valid scenario."""
    tools = len(scenario.tool_specs)
    return (
        f"{scenario.name}, {tools} tool{'s' if tools != 1 else ''}, "
        f"policies {', '.join(scenario.runtime.policies)}"
    )


def run(args: argparse.Namespace) -> int:
    status = EXIT_OK
    for file in args.files:
        try:
            scenario = load_scenario(file)
        except UserError as error:
            print_error(error)
            status = EXIT_BAD_INPUT
        else:
            # The file's name and the scenario's come from the user: printable, as errors are.
            print(printable(f"{file}: ok ({summary(scenario)})"))
    return status
