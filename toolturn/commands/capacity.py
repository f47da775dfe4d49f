"""`toolturn capacity SCENARIO --slo 'ttfts.p99 < 5s' [--slo ...]`: the highest load meeting every
objective, per arm (recovery profile x executor policy) and per `[experiment]` key.

    toolturn capacity SCENARIO --slo OBJECTIVE [--slo ...] [-r/--replications N] [-n/--sessions N]
                          [-s/--seed N] [-j/--jobs N] [--tolerance REL] [--max-load L] [--json]
                          [-o/--out DIR [-f/--force]]

Objectives are toolturn.capacity.slo's (`ttfts.p99 < 5s`, `latency.p95 <= 30s`,
`status_per_1k_requests.529 < 10`); the search is toolturn.capacity.search's: the scenario's
own levels first (its sweep: the overload sweep whose saturation point is found), then doubling
and bisection of `load.concurrency` (closed loop) or `load.arrival_rate_per_s` (open loop), each
probe `--replications` seeds (default: the experiment's replications, else 2). A scenario's
`[experiment]` keys are searched one by one (`"model.profile" = ["haiku", "sonnet"]`: a capacity
per latency profile); its replications are the probes'. Prints, per key and arm, the capacity,
each objective's mean ± t half-width there (where no load meets them: at the least load probed),
the goodput there and the saturation point, then goodput against load for every probe (`*`
marks the capacity, `S` the saturation point); with `--json`, all of it as one JSON object;
with `--out DIR`, also DIR/capacity.json (the same object) and DIR/capacity.html
(toolturn.capacity.page: goodput against load with the capacity and the saturation point
marked), written atomically. A progress line per probe goes to stderr. Exit status: 0 done
(even when no load meets the objectives: the answer is "none"), 2 bad input (a malformed
objective, a metric no run has, a scenario without a load knob, an output folder in the way).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from toolturn.capacity.page import CAPACITY_FILE, write_capacity_folder
from toolturn.capacity.search import ArmCapacity, Probe, Search, knob_of, search_capacity
from toolturn.capacity.slo import Slo, parse_slo
from toolturn.errors import UserError
from toolturn.metrics.atomic import check_destination
from toolturn.metrics.display import Fitted, RowFormat
from toolturn.metrics.summary import arm_label
from toolturn.metrics.summary_table import output_console
from toolturn.scenario.loader import load_scenario, with_overrides
from toolturn.scenario.packaged import scenario_argument
from toolturn.termination import terminate_as_interrupt

DEFAULT_REPLICATIONS = 2


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "capacity",
        help="find the highest load meeting SLOs, per policy, by bisection with replications",
        description="Search the highest load (concurrency, or arrival rate) at which every "
        "objective holds, per recovery profile and executor policy (and [experiment] key); "
        "report goodput against load and the saturation point.",
    )
    parser.add_argument(
        "scenario",
        metavar="SCENARIO",
        type=scenario_argument,
        help="scenario TOML file, or a packaged scenario's name (default, overload, ...)",
    )
    parser.add_argument(
        "--slo",
        dest="slos",
        action="append",
        required=True,
        metavar="OBJECTIVE",
        help="an objective METRIC OP THRESHOLD, e.g. 'ttfts.p99 < 5s'; repeatable (all must hold)",
    )
    parser.add_argument(
        "-r",
        "--replications",
        type=int,
        help=f"seeds per probe (default: the experiment's, else {DEFAULT_REPLICATIONS})",
    )
    parser.add_argument("-n", "--sessions", type=int, help="sessions per probe")
    parser.add_argument("-s", "--seed", type=int, help="root seed (default: the scenario's)")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument(
        "--tolerance",
        type=float,
        default=0.05,
        help="open loop: stop when the bracket is this close relative to its low end (0.05)",
    )
    parser.add_argument("--max-load", type=float, help="the highest load to try")
    parser.add_argument("--json", action="store_true", help="print the answer as JSON")
    parser.add_argument(
        "-o",
        "--out",
        type=Path,
        help="also write DIR/capacity.json and DIR/capacity.html (goodput against load, "
        "capacity and saturation marked)",
    )
    parser.add_argument(
        "-f",
        "--force",
        action="store_true",
        help="replace an existing capacity folder (one with capacity.json; anything else is an "
        "error)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with terminate_as_interrupt():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    slos = [parse_slo(text) for text in args.slos]
    for flag, value, least in (
        ("--replications", args.replications, 1),
        ("--jobs", args.jobs, 1),
        ("--sessions", args.sessions, 1),
        ("--seed", args.seed, 0),
    ):
        if value is not None and value < least:
            raise UserError(f"{flag}: must be at least {least} (got {value})")
    if not 0 < args.tolerance < 1:
        raise UserError(f"--tolerance: must be between 0 and 1 (got {args.tolerance})")
    if args.max_load is not None and not args.max_load > 0:
        raise UserError(f"--max-load: must be above 0 (got {args.max_load})")
    scenario = with_overrides(load_scenario(args.scenario), seed=args.seed, sessions=args.sessions)
    knob_of(scenario)
    if args.out is not None:
        # Checked before searching: a bad place fails now, not after the work.
        check_destination(
            args.out, replace=args.force, kind="capacity folder", marker=CAPACITY_FILE
        )
    experiment = scenario.experiment
    keys = experiment.keys if experiment is not None else [()]
    replications = args.replications or (
        experiment.replications if experiment is not None else DEFAULT_REPLICATIONS
    )

    def said(key: str, load: float) -> None:
        where = f" {key}" if key else ""
        print(f"probing{where} at load {load:g} ({replications} replications)", file=sys.stderr)

    search = Search(
        slos=slos,
        replications=replications,
        jobs=args.jobs,
        tolerance=args.tolerance,
        max_load=args.max_load,
        on_probe=None if args.json else said,
    )
    results = search_capacity(scenario, keys, search)
    document = capacity_json(scenario.name, slos, results)
    if args.out is not None:
        page = write_capacity_folder(
            args.out, document, results, knob_of(scenario), replace=args.force
        )
        print(f"wrote {page}", file=sys.stderr)
    if args.json:
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
        return 0
    console = output_console()
    # Fitted: never cropped in a 100-column log (one record per row when too wide).
    console.print(Fitted(answer_table(slos, results, knob_of(scenario))))
    for result in results:
        console.print(Fitted(goodput_table(result)))
    return 0


def _load_text(load: float | None) -> str:
    return "none" if load is None else f"{load:g}"


def answer_table(slos: list[Slo], results: list[ArmCapacity], knob: str) -> Table:
    """Per key and arm: the capacity, each objective's value there, goodput, saturation."""
    table = Table(
        title=f"Capacity: the highest {knob} meeting every objective", title_justify="left"
    )
    keys = any(result.key for result in results)
    if keys:
        table.add_column("point")
    table.add_column("policy")
    table.add_column("capacity", justify="right")
    for slo in slos:
        table.add_column(escape(slo.text), justify="right")
    table.add_column("goodput (turns/s)", justify="right")
    table.add_column("saturation", justify="right")
    for result in results:
        # Where none meets, the least load probed shows how far off the objectives are.
        at = result.probe_at(result.capacity) or (result.probes[0] if result.probes else None)
        capacity = _load_text(result.capacity) + ("" if result.bounded else "+")
        cells = [escape(result.key)] if keys else []
        cells += [escape(arm_label(*result.arm)), capacity]
        cells += [_value(slo, at) for slo in slos]
        cells += [
            "-" if at is None else _interval_text(at.goodput.mean, at.goodput.low, at.goodput.high),
            _load_text(result.saturation),
        ]
        table.add_row(*cells)
    table.caption = (
        "values at the capacity (where none: at the least load probed), means over the "
        "replications ± the 95% t half-width; capacity '+': the highest load tried still met; "
        "saturation: the lowest load within 5% of the highest throughput probed"
    )
    return table


def _value(slo: Slo, probe: Probe | None) -> str:
    interval = None if probe is None else probe.values.get(slo.metric)
    if interval is None:
        return "-"
    unit = "ns" if slo.metric.split(".")[0].endswith("_ns") else ""
    shown = RowFormat(unit, [interval.mean])
    half = (
        None
        if interval.low is None or interval.high is None
        else (interval.high - interval.low) / 2
    )
    text = shown(interval.mean) + ("" if half is None else f" ± {shown(half)}")
    return f"{text} {shown.shown_unit}".strip()


def _interval_text(mean: float, low: float | None, high: float | None) -> str:
    shown = RowFormat("", [mean])
    if low is None or high is None:
        return shown(mean)
    return f"{shown(mean)} ± {shown((high - low) / 2)}"


def goodput_table(result: ArmCapacity) -> Table:
    """Goodput and throughput against load for every probe of one arm."""
    where = arm_label(*result.arm) + (f" · {result.key}" if result.key else "")
    table = Table(title=escape(f"Goodput against load: {where}"), title_justify="left")
    for name in ("load", "met", "goodput (turns/s)", "throughput (turns/s)", ""):
        table.add_column(name, justify="right")
    saturation = result.saturation
    for probe in result.probes:
        marks = ("*" if probe.load == result.capacity else "") + (
            "S" if probe.load == saturation else ""
        )
        table.add_row(
            f"{probe.load:g}",
            "yes" if probe.met else "no",
            _interval_text(probe.goodput.mean, probe.goodput.low, probe.goodput.high),
            _interval_text(probe.throughput.mean, probe.throughput.low, probe.throughput.high),
            marks,
        )
    return table


def capacity_json(name: str, slos: list[Slo], results: list[ArmCapacity]) -> dict[str, Any]:
    """Everything the tables show, for programs."""

    def interval(value: Any) -> dict[str, Any] | None:
        if value is None:
            return None
        return {"mean": value.mean, "ci_low": value.low, "ci_high": value.high, "n": value.n}

    return {
        "scenario": name,
        "slos": [
            {"text": s.text, "metric": s.metric, "op": s.op, "threshold": s.threshold} for s in slos
        ],
        "results": [
            {
                "point_key": r.key,
                "profile": r.arm[0],
                "policy": r.arm[1],
                "capacity": r.capacity,
                "bounded": r.bounded,
                "saturation": r.saturation,
                "probes": [
                    {
                        "load": p.load,
                        "met": p.met,
                        "goodput_turns_per_s": interval(p.goodput),
                        "throughput_turns_per_s": interval(p.throughput),
                        "values": {metric: interval(v) for metric, v in p.values.items()},
                    }
                    for p in r.probes
                ],
            }
            for r in results
        ],
    }
