"""`toolturn fidelity SCENARIO`: how far is the simulator from real time on this scenario?

    toolturn fidelity scenarios/default.toml [--sessions N] [--seed S] [--speed X] [--policy P ...]
                 [--tolerance-median 0.05] [--tolerance-p95 0.10] [--tolerance-ms 1]
                 [--base-url URL] [--out DIR] [--force]

Runs the scenario in the simulator and live (`toolturn live`'s run) on the same seed, pairs each
live turn with its simulated twin (`toolturn.fidelity.pairing`), and prints per policy, for TTFTS,
start lag, turn latency, time to first event and requests per turn: the median and p95 of each side,
their relative error and the paired per-turn difference; then how many turns paired with the
same story, and what the real path adds per hop (`toolturn.fidelity.overhead`). Writes a folder
(`results/fidelity-<scenario>-seed<seed>-<UTC time>` unless `--out`) with `fidelity.json`,
`fidelity.png` (live against simulated, per metric) and both runs' folders (`simulated/`,
`live/`, for `toolturn report` and `toolturn compare`). Exit status: 0 within tolerance, 1 a median
beyond `--tolerance-median` or a p95 beyond `--tolerance-p95` (and more than `--tolerance-ms`
apart), 2 bad input, 130 interrupted (nothing written).
"""

from __future__ import annotations

import argparse
import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolturn.commands.live import (
    add_live_arguments,
    live_extra,
    live_scenario,
    live_settings,
    run_live_with_progress,
)
from toolturn.commands.run import check_out_folder, default_out_dir
from toolturn.engine.runner import run_scenario
from toolturn.errors import UserError
from toolturn.fidelity.settings import LiveSettings, Tolerances
from toolturn.metrics.atomic import atomic_directory
from toolturn.metrics.writer import RunMetadata, write_run
from toolturn.scenario.schema import Scenario
from toolturn.termination import terminate_as_interrupt

EXIT_OK = 0
EXIT_BEYOND_TOLERANCE = 1
FIDELITY_FILE = "fidelity.json"
DEFAULTS = Tolerances()


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "fidelity",
        help="run a scenario simulated and live, pair the turns, report the error",
        description="Run a scenario in the simulator and live on the same seed, pair each live "
        "turn with its simulated twin and print the error per metric and per hop; exit 1 "
        "beyond the tolerances.",
    )
    add_live_arguments(parser)
    parser.add_argument("--tolerance-median", type=float, default=DEFAULTS.median,
                        help="largest relative error of a median (default 0.05)")
    parser.add_argument("--tolerance-p95", type=float, default=DEFAULTS.p95,
                        help="largest relative error of a p95 (default 0.10)")
    parser.add_argument(
        "--tolerance-ms", type=float, default=DEFAULTS.absolute_ms,
        help="values at most this many ms apart (scenario time) pass whatever their relative "
        "error, e.g. a start lag of 0 (default 1)",
    )
    parser.add_argument("--out", type=Path, help="folder to write (default: under results/)")
    parser.add_argument("--force", action="store_true",
                        help="replace an existing fidelity folder (one with fidelity.json)")
    parser.set_defaults(func=run)


def _tolerances(args: argparse.Namespace) -> Tolerances:
    for name in ("tolerance_median", "tolerance_p95", "tolerance_ms"):
        value = getattr(args, name)
        if not (math.isfinite(value) and value >= 0):
            option = "--" + name.replace("_", "-")
            raise UserError(f"{option}: must be a number at least 0 (got {value:g})")
    return Tolerances(args.tolerance_median, args.tolerance_p95, args.tolerance_ms)


def fidelity_out_dir(scenario: Scenario, now: datetime) -> Path:
    simulated = default_out_dir(scenario, now)
    return simulated.with_name("fidelity-" + simulated.name.removeprefix("run-"))


def run(args: argparse.Namespace) -> int:
    with terminate_as_interrupt():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from toolturn.fidelity.overhead import cpu_hop, lag_hop, sdk_parsing_hop, table_hops
    from toolturn.fidelity.pairing import metric_errors, pair_tools, pair_turns
    from toolturn.fidelity.report import FidelityResult, draw_fidelity, print_fidelity

    scenario = live_scenario(args, "fidelity")
    settings = live_settings(args)
    settings = LiveSettings(settings.speed, settings.base_url, settings.api_key,
                            settings.timeout_s, sample_lag=True)
    tolerances = _tolerances(args)
    out_dir: Path = args.out or fidelity_out_dir(scenario, datetime.now(UTC))
    check_out_folder(out_dir, force=args.force, kind="fidelity folder", marker=FIDELITY_FILE)
    simulated = run_scenario(scenario)
    sim_tables = simulated.tables("simulated")
    live = run_live_with_progress(scenario, settings)
    live_tables = live.collector("live").tables()
    errors, pairing = metric_errors(sim_tables, live_tables)
    hops = table_hops(sim_tables, live_tables, settings.speed)
    if live.sampler is not None:
        hops.append(lag_hop(live.sampler))
    hops.append(cpu_hop(sum(unit.wall_s for unit in live.results),
                        sum(unit.cpu_s for unit in live.results)))
    hops.append(sdk_parsing_hop(scenario))
    result = FidelityResult(errors, pairing, hops, settings.speed, tolerances)
    print_fidelity(result)
    turns, _ = pair_turns(sim_tables["turns"], live_tables["turns"])
    tools = pair_tools(sim_tables["tools"], live_tables["tools"])
    extra = live_extra(scenario, args, settings)
    try:
        with atomic_directory(out_dir, replace=args.force) as staging:
            for name, tables in (("simulated", sim_tables), ("live", live_tables)):
                metadata = RunMetadata.collect(
                    run_id=name, scenario=scenario.name, scenario_sha256=scenario.content_hash,
                    seed=scenario.seed, extra=extra if name == "live" else {},
                )
                write_run(staging / name, tables, metadata)
            (staging / FIDELITY_FILE).write_text(
                json.dumps(result.to_json(), indent=2, sort_keys=True) + "\n"
            )
            draw_fidelity(result, turns, tools, staging / "fidelity.png")
    except OSError as error:
        raise UserError(f"{out_dir}: cannot write the fidelity folder ({error})") from None
    print(f"wrote {out_dir}")
    if not result.passed:
        names = sorted({f"{error.policy} {error.metric}" for error in result.failures})
        print(f"beyond tolerance: {', '.join(names)}")
        return EXIT_BEYOND_TOLERANCE
    return EXIT_OK
