"""`toolturn compare BASE NEW`: the exact gate on simulated metrics between two run folders.

Exit status 0 when nothing moved beyond its tolerance, 1 when something did, 2 for bad input
(a missing folder, runs of different scenarios, or of different sessions, policies or load
levels, a malformed tolerance). Every metric is compared per load level. A simulated metric
that is NaN or infinite in one run and not the same in the other fails whatever its tolerance.
For runs of the same seed it also shows, per policy and level, the per-turn difference new minus
base of TTFTS and turn latency (when any turn moved). `--json` prints all of it as one JSON
object instead of tables, `--format markdown` the same tables as Markdown; a table too wide for
the console (a 100-column CI log) is printed one record per row, never cropped. Runs of
experiment points compare point by point: each row names its point's key and replication
(`streaming @ 4 {load.concurrency=4 #1}`; `{... mean}` for the rows over a key's replications).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from toolturn.metrics.display import Fitted, RowFormat, metric_label
from toolturn.metrics.markdown import markdown
from toolturn.metrics.reader import read_run
from toolturn.metrics.summary_table import output_console
from toolturn.options import add_format_options
from toolturn.report.compare import (
    MetricChange,
    RunPairing,
    compare_runs,
    paired_between,
    parse_tolerances,
)

EXIT_REGRESSION = 1


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="diff two run folders' metrics; exit 1 if one moved beyond its tolerance",
        description="Compare the summaries and row counts of two run folders of the same "
        "scenario, sessions, policies and load levels, level by level. Every simulated metric "
        "must match exactly unless given a relative tolerance; wall-clock metrics are shown but "
        "never fail the comparison.",
    )
    parser.add_argument("base", metavar="BASE", type=Path, help="the reference run folder")
    parser.add_argument("new", metavar="NEW", type=Path, help="the run folder to check")
    parser.add_argument(
        "-t", "--tolerance",
        metavar="METRIC=REL",
        action="append",
        default=[],
        help="allowed relative change of a metric (a glob such as 'latency_ns.*' works), "
        "e.g. --tolerance throughput.turns_per_s=0.01; repeatable; default 0 (exact)",
    )
    add_format_options(parser, json_help="print the comparison as one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    tolerances = parse_tolerances(args.tolerance)
    base, new = read_run(args.base), read_run(args.new)
    changes = compare_runs(base, new, tolerances)
    pairings = paired_between(base, new)
    moved = [change for change in changes if change.moved]
    failed = [change for change in moved if change.beyond_tolerance]
    if args.json:
        document = comparison_json(args.base, args.new, changes, pairings)
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
        return EXIT_REGRESSION if failed else 0
    parts: list[RenderableType] = []
    if base.metadata.get("seed") != new.metadata.get("seed"):
        parts.append(Text(
            f"note: seeds differ ({base.metadata.get('seed')} vs {new.metadata.get('seed')}); "
            "turns are not paired"
        ))
    if moved:
        parts.append(Text(f"{args.base} -> {args.new}", no_wrap=True, overflow="ignore"))
        parts.append(Fitted(changes_table(moved)))
    if any(_turns_moved(pairing) for pairing in pairings):
        parts.append(Fitted(pairings_table(pairings)))
    arms = len({(change.protocol, change.profile, change.policy) for change in changes})
    levels = len({change.load_level for change in changes})
    keys = {change.point_key for change in changes if change.point_key is not None}
    points = f", {len(keys)} point key{'s' if len(keys) != 1 else ''}" if keys else ""
    parts.append(Text(
        f"compared {len(changes)} metrics over {arms} policies{points} and {levels} load "
        f"level{'s' if levels != 1 else ''}: {len(moved)} moved, {len(failed)} beyond tolerance"
    ))
    if args.format == "markdown":
        sys.stdout.write(markdown(Group(*parts)))
    else:
        console = output_console()
        for part in parts:
            console.print(part)
    return EXIT_REGRESSION if failed else 0


def comparison_json(
    base: Path, new: Path, changes: list[MetricChange], pairings: list[RunPairing]
) -> dict[str, Any]:
    """Everything the tables show, for programs: every metric compared, and the turn pairing."""
    split = _split(changes)
    return {
        "base": str(base),
        "new": str(new),
        "compared": len(changes),
        "moved": sum(change.moved for change in changes),
        "beyond_tolerance": sum(change.beyond_tolerance for change in changes),
        "changes": [
            {
                **_point_json(change.point_key, change.replication),
                **_protocol_json(change.protocol, split),
                "profile": change.profile,
                "policy": change.policy,
                "versus": change.versus,
                "load_level": change.load_level,
                "load": change.load,
                "metric": change.metric,
                "unit": change.unit,
                "base": _finite(change.base),
                "new": _finite(change.new),
                "relative": change.relative,
                "tolerance": change.tolerance,
                "wall_clock": change.wall_clock,
                "moved": change.moved,
                "beyond_tolerance": change.beyond_tolerance,
            }
            for change in changes
        ],
        "paired_new_minus_base": [
            {
                **_point_json(pairing.point_key, pairing.replication),
                **_protocol_json(pairing.protocol, split),
                "profile": pairing.profile,
                "policy": pairing.policy,
                "load_level": pairing.load_level,
                "load": pairing.load,
                "column": pairing.column,
                **pairing.stats.as_dict(),
            }
            for pairing in pairings
        ],
    }


def _point_json(point_key: str | None, replication: int | None) -> dict[str, Any]:
    # Only runs of experiment points have these fields: a plain run's JSON is as it was.
    if point_key is None:
        return {}
    return {"point_key": point_key, "replication": replication}


def _split(changes: list[MetricChange]) -> bool:
    """Whether the runs are of several wire protocols: then every row names its protocol."""
    return len({change.protocol for change in changes}) > 1


def _protocol_json(protocol: str, split: bool) -> dict[str, Any]:
    # Only runs of several protocols have the field: a run of one protocol's JSON is as it was.
    return {"protocol": protocol} if split else {}


def _finite(value: float | None) -> float | str | None:
    # JSON has no NaN or infinity: such a value is given as its name.
    return value if value is None or math.isfinite(value) else str(value)


def changes_table(changes: list[MetricChange]) -> Table:
    """The moved metrics with base and new values (with their unit), relative change, the
    tolerance (a column only when one was given) and the verdict."""
    # No title: the caller prints the two folders on their own line (as the title, a long path
    # would widen the table to its length and squeeze the values).
    table = Table()
    tolerances = any(change.tolerance for change in changes)
    split = _split(changes)
    table.add_column("policy @ load", no_wrap=True)
    table.add_column("metric", no_wrap=True)
    for name in ("base", "new", "change") + (("tolerance",) if tolerances else ()):
        table.add_column(name, justify="right", min_width=8)
    table.add_column("verdict")
    for change in changes:
        shown = RowFormat(change.unit, [v for v in (change.base, change.new) if v is not None])
        unit = f" {shown.shown_unit}"
        cells = [
            escape(change.where(split)),
            metric_label(change.metric),
            "absent" if change.base is None else shown(change.base) + unit,
            "absent" if change.new is None else shown(change.new) + unit,
            _relative(change),
        ]
        if tolerances:
            cells.append(f"{change.tolerance:.2%}")
        table.add_row(
            *cells, _verdict(change), style="red" if change.beyond_tolerance else None
        )
    return table


def _turns_moved(pairing: RunPairing) -> bool:
    stats = pairing.stats
    return bool(stats.pairs) and (stats.mean != 0 or stats.median != 0)


def pairings_table(pairings: list[RunPairing]) -> Table:
    """Per simulation and measure, the per-turn difference new minus base."""
    table = Table(title="Paired per turn: new minus base (same seed)", title_justify="left")
    split = len({pairing.protocol for pairing in pairings}) > 1
    for name in ("policy @ load", "measure", "median", "p90", "mean", "sooner", "pairs"):
        table.add_column(name, justify="left" if name in ("policy @ load", "measure") else "right")
    for pairing in pairings:
        table.add_row(
            escape(pairing.where(split)),
            *pairing.cells(),
        )
    return table


def _relative(change: MetricChange) -> str:
    if change.relative is not None:
        return f"{change.relative:+.2%}"
    if change.not_finite:
        return "not finite"
    return "new" if change.base is not None and change.base == 0 else "-"


def _verdict(change: MetricChange) -> str:
    if change.wall_clock:
        return "not gated"
    if not change.beyond_tolerance:
        return "within"
    return "FAIL (not finite)" if change.not_finite else "FAIL"
