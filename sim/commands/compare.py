"""`sim compare BASE NEW`: the exact gate on simulated metrics between two run folders.

Exit status 0 when nothing moved beyond its tolerance, 1 when something did, 2 for bad input
(a missing folder, runs of different scenarios, a malformed tolerance). A simulated metric that
is NaN or infinite in one run and not the same in the other fails whatever its tolerance.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from sim.metrics.reader import read_run
from sim.metrics.summary import arm_label
from sim.metrics.summary_table import display_unit, format_value, output_console
from sim.report.compare import MetricChange, compare_runs, parse_tolerances

EXIT_REGRESSION = 1


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="diff two run folders' metrics; exit 1 if one moved beyond its tolerance",
        description="Compare the summaries and row counts of two run folders of the same "
        "scenario. Every simulated metric must match exactly unless given a relative tolerance; "
        "wall-clock metrics are shown but never fail the comparison.",
    )
    parser.add_argument("base", metavar="BASE", type=Path, help="the reference run folder")
    parser.add_argument("new", metavar="NEW", type=Path, help="the run folder to check")
    parser.add_argument(
        "--tolerance",
        metavar="METRIC=REL",
        action="append",
        default=[],
        help="allowed relative change of a metric (a glob such as 'latency_ns.*' works), "
        "e.g. --tolerance throughput.turns_per_s=0.01; repeatable; default 0 (exact)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    tolerances = parse_tolerances(args.tolerance)
    base, new = read_run(args.base), read_run(args.new)
    changes = compare_runs(base, new, tolerances)
    console = output_console()
    if base.metadata.get("seed") != new.metadata.get("seed"):
        console.print(
            f"note: seeds differ ({base.metadata.get('seed')} vs {new.metadata.get('seed')})"
        )
    moved = [change for change in changes if change.moved]
    failed = [change for change in moved if change.beyond_tolerance]
    if moved:
        console.print(changes_table(moved, title=f"{args.base} -> {args.new}"))
    arms = len({(change.profile, change.policy) for change in changes})
    console.print(
        f"compared {len(changes)} metrics over {arms} policies: {len(moved)} moved, "
        f"{len(failed)} beyond tolerance"
    )
    return EXIT_REGRESSION if failed else 0


def changes_table(changes: list[MetricChange], title: str) -> Table:
    """The moved metrics with base and new values, relative change, tolerance and verdict."""
    table = Table(title=title)
    for name, justify in (
        ("policy", "left"),
        ("metric", "left"),
        ("unit", "left"),
        ("base", "right"),
        ("new", "right"),
        ("change", "right"),
        ("tolerance", "right"),
        ("verdict", "left"),
    ):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for change in changes:
        table.add_row(
            escape(arm_label(change.profile, change.policy)),
            change.metric,
            display_unit(change.unit),
            _shown(change.base, change.unit),
            _shown(change.new, change.unit),
            _relative(change),
            f"{change.tolerance:.2%}",
            _verdict(change),
            style="red" if change.beyond_tolerance else None,
        )
    return table


def _shown(value: float | None, unit: str) -> str:
    return "absent" if value is None else format_value(value, unit)


def _relative(change: MetricChange) -> str:
    if change.relative is not None:
        return f"{change.relative:+.3%}"
    if change.not_finite:
        return "not finite"
    return "new" if change.base is not None and change.base == 0 else "-"


def _verdict(change: MetricChange) -> str:
    if change.wall_clock:
        return "wall clock (not gated)"
    if not change.beyond_tolerance:
        return "within tolerance"
    return "FAIL (not a finite number)" if change.not_finite else "FAIL"
