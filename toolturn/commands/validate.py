"""`toolturn validate FILE...`: check scenario files without running them.

Prints `FILE: ok (<name>, N tools, policies a, b)` for each good file and the error for each bad
one (every file is checked), and exits 2 if any file was bad. A file with `[experiment]` is good
when every point's scenario is; its line adds the points (`, 8 points: 4 keys x 2 replications`)
and one line per key follows:

    FILE: ok (sweep, 8 tools, policies streaming, serial, 8 points: 4 keys x 2 replications)
      point load.concurrency=4;model.profile="haiku"
"""

from __future__ import annotations

import argparse
from typing import Any

from toolturn.errors import UserError, print_error, printable
from toolturn.experiment.points import Point, points_of, settings_text
from toolturn.scenario.loader import load_scenario
from toolturn.scenario.packaged import misspelt, resolved
from toolturn.scenario.schema import Scenario

EXIT_OK = 0
EXIT_BAD_INPUT = 2


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check scenario files without running them",
        description="Check scenario files: TOML syntax, unknown keys, types, ranges, "
        "cross-references.",
    )
    parser.add_argument(
        "files", nargs="+", metavar="FILE",
        help="scenario TOML files, or packaged scenarios' names (default, overload, ...)",
    )
    parser.set_defaults(func=run)


def summary(scenario: Scenario) -> str:
    """The one-line description of a valid scenario."""
    tools = len(scenario.tool_specs)
    return (
        f"{scenario.name}, {tools} tool{'s' if tools != 1 else ''}, "
        f"policies {', '.join(scenario.runtime.policies)}"
    )


def points_summary(scenario: Scenario, points: list[Point]) -> str:
    """`, N points: K keys x R replications` for an experiment; empty for a plain scenario."""
    if scenario.experiment is None:
        return ""
    replications = scenario.experiment.replications
    keys = len(points) // replications
    return (
        f", {len(points)} point{'s' if len(points) != 1 else ''}: {keys} "
        f"key{'s' if keys != 1 else ''} x {replications} "
        f"replication{'s' if replications != 1 else ''}"
    )


def run(args: argparse.Namespace) -> int:
    status = EXIT_OK
    for text in args.files:
        file = resolved(text)
        try:
            # A near miss of a packaged name is this file's error: the others are still checked.
            message = misspelt(text)
            if message is not None:
                raise UserError(message)
            scenario = load_scenario(file)
            points = points_of(scenario, source=str(file))
        except UserError as error:
            print_error(error)
            status = EXIT_BAD_INPUT
        else:
            # The file's name and the scenario's come from the user: printable, as errors are.
            print(printable(f"{file}: ok ({summary(scenario)}{points_summary(scenario, points)})"))
            if scenario.experiment is not None:
                for point in points:
                    if point.replication == 0 and point.key:
                        print(printable(f"  point {settings_text(point.key)}"))
    return status
