"""`toolturn fidelity SCENARIO`: how far is the simulator from real time on this scenario?

    toolturn fidelity scenarios/default.toml [--sessions N] [--seed S] [--speed X] [--policy P ...]
                 [--tolerance-median 0.05] [--tolerance-p95 0.10] [--tolerance-ms 1]
                 [--max-lag-ms 2] [--max-cpu 80] [--base-url URL] [--out DIR] [--force]

Runs the scenario in the simulator and live (`toolturn live`'s run) on the same seed, pairs each
live turn with its simulated twin (`toolturn.fidelity.pairing`), and prints per policy, for TTFTS,
start lag, turn latency, time to first event and requests per turn: the median and p95 of each side,
their relative error and the paired per-turn difference; then how many turns paired with the
same story, and what the real path adds per hop (`toolturn.fidelity.overhead`). Writes a folder
(`results/fidelity-<scenario>-seed<seed>-<UTC time>` unless `--out`) with `fidelity.json`,
`fidelity.png` (live against simulated, per metric) and both runs' folders (`simulated/`,
`live/`, for `toolturn report` and `toolturn compare`): the runs first, as soon as the live run
ends, then the comparison. `fidelity.json` holds the verdict and the pairing's counts (`paired`,
`same_story`, `sim_turns`, `live_turns`, and each turn without a twin or with another story).
Exit status:

- 0 within tolerance and every turn paired with the same story (a saturated live run too: it is
  said, but lateness only adds to the live side);
- otherwise, the first that applies: 3 a turn without a twin, or twins with another story
  (attempts, tool calls, outcome), saturated or not (a saturation is said beside it); 4 the
  live run could not keep up (`toolturn.fidelity.saturation`): its event loop's lateness p95
  passed `--max-lag-ms` (2) or its process `--max-cpu` (80) percent of a core, so its errors
  measure the harness; it says by how much and suggests a speed (or a number of sessions at
  once, the scenario's concurrency) that would fit; 1 a median beyond `--tolerance-median` or a
  p95 beyond `--tolerance-p95` (and more than `--tolerance-ms` apart);

2 bad input, 130 interrupted while the runs ran (nothing written).
"""

from __future__ import annotations

import argparse
import json
import math
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolturn.commands.live import (
    add_live_arguments,
    live_extra,
    live_scenario,
    live_settings,
    run_live_with_progress,
)
from toolturn.commands.run import check_out_folder, default_out_dir, run_metadata
from toolturn.engine.runner import run_scenario
from toolturn.errors import UserError
from toolturn.fidelity.saturation import Limits, Saturation
from toolturn.fidelity.settings import LiveSettings, Tolerances
from toolturn.metrics.atomic import atomic_directory
from toolturn.metrics.reader import read_run
from toolturn.metrics.writer import write_run_from_parts, write_run_from_rows
from toolturn.scenario.schema import Scenario
from toolturn.termination import terminate_as_interrupt

if TYPE_CHECKING:
    import pyarrow as pa

    from toolturn.engine.runner import RunResult
    from toolturn.fidelity.live_run import LiveRunResult
    from toolturn.fidelity.report import FidelityResult

EXIT_OK = 0
EXIT_BEYOND_TOLERANCE = 1
EXIT_UNPAIRED = 3
EXIT_SATURATED = 4
FIDELITY_FILE = "fidelity.json"
SIMULATED, LIVE = "simulated", "live"
DEFAULTS = Tolerances()
LIMITS = Limits()


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "fidelity",
        help="run a scenario simulated and live, pair the turns, report the error",
        description="Run a scenario in the simulator and live on the same seed, pair each live "
        "turn with its simulated twin and print the error per metric and per hop; exit 0 "
        "within the tolerances with every turn paired (on a saturated host too), 3 turns "
        "unpaired or with another story, 4 beyond the tolerances while the live run could not "
        "keep up, 1 beyond them otherwise.",
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
    parser.add_argument(
        "--max-lag-ms", type=float, default=LIMITS.lag_p95_ms,
        help="the live run could not keep up when its event loop's lateness p95 passes this "
        "many wall-clock ms (default 2): said always; exit 4 when the run is also beyond a "
        "tolerance with every turn paired",
    )
    parser.add_argument(
        "--max-cpu", type=float, default=LIMITS.cpu_percent,
        help="the live run could not keep up when its process passes this percentage of one "
        "core (default 80): said always; exit 4 when the run is also beyond a tolerance with "
        "every turn paired",
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


def _limits(args: argparse.Namespace) -> Limits:
    for option, value in (("--max-lag-ms", args.max_lag_ms), ("--max-cpu", args.max_cpu)):
        if not (math.isfinite(value) and value > 0):
            raise UserError(f"{option}: must be a positive number (got {value:g})")
    return Limits(args.max_lag_ms, args.max_cpu)


def fidelity_out_dir(scenario: Scenario, now: datetime) -> Path:
    simulated = default_out_dir(scenario, now)
    return simulated.with_name("fidelity-" + simulated.name.removeprefix("run-"))


def run(args: argparse.Namespace) -> int:
    with terminate_as_interrupt():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    scenario = live_scenario(args, "fidelity")
    settings = live_settings(args)
    settings = LiveSettings(settings.speed, settings.base_url, settings.api_key,
                            settings.timeout_s, sample_lag=True)
    tolerances = _tolerances(args)
    limits = _limits(args)
    out_dir: Path = args.out or fidelity_out_dir(scenario, datetime.now(UTC))
    check_out_folder(out_dir, force=args.force, kind="fidelity folder", marker=FIDELITY_FILE)
    simulated = run_scenario(scenario)
    live = run_live_with_progress(scenario, settings)
    # Both runs are on disk before anything compares them: a live run takes real time, and a
    # comparison that failed would otherwise take it along. They are written the one way every
    # run is (the engine's part files, `toolturn live`'s rows through them), and compared as
    # written.
    _write_runs(out_dir, args, scenario, settings, simulated, live)
    sim_tables = read_run(out_dir / SIMULATED).tables
    live_tables = read_run(out_dir / LIVE).tables
    result = _compare(scenario, settings, tolerances, limits, sim_tables, live_tables, live)
    from toolturn.fidelity.report import print_fidelity

    print_fidelity(result)
    _write_verdict(out_dir, result, sim_tables, live_tables)
    print(f"wrote {out_dir}")
    return _exit_status(result)


def _write_runs(out_dir: Path, args: argparse.Namespace, scenario: Scenario,
                settings: LiveSettings, simulated: RunResult, live: LiveRunResult) -> None:
    """Both run folders, in one step: the simulated run from its part files, the live run's
    rows through part files (`write_run_from_rows`), as `toolturn run` and `toolturn live`
    write theirs."""
    try:
        with atomic_directory(out_dir, replace=args.force) as staging:
            write_run_from_parts(staging / SIMULATED, simulated.parts_in_order(),
                                 run_metadata(SIMULATED, scenario, {}),
                                 points=simulated.point_columns(),
                                 events_per_wall_s=simulated.events_per_wall_s())
            live_units = [(unit.columns, unit.rows) for unit in live.results]
            live_metadata = run_metadata(LIVE, scenario, live_extra(scenario, args, settings))
            write_run_from_rows(staging / LIVE, live_units, live_metadata)
    except OSError as error:
        raise UserError(f"{out_dir}: cannot write the fidelity folder ({error})") from None


def _compare(scenario: Scenario, settings: LiveSettings, tolerances: Tolerances, limits: Limits,
             sim_tables: dict[str, pa.Table], live_tables: dict[str, pa.Table],
             live: LiveRunResult) -> FidelityResult:
    from toolturn.fidelity.overhead import cpu_hop, lag_hop, sdk_parsing_hop, table_hops
    from toolturn.fidelity.pairing import metric_errors
    from toolturn.fidelity.report import FidelityResult

    errors, pairing = metric_errors(sim_tables, live_tables)
    hops = table_hops(sim_tables, live_tables, settings.speed)
    lag = lag_hop(live.sampler) if live.sampler is not None else None
    cpu = cpu_hop(sum(unit.wall_s for unit in live.results),
                  sum(unit.cpu_s for unit in live.results))
    hops.extend([hop for hop in (lag, cpu) if hop is not None])
    hops.append(sdk_parsing_hop(scenario))
    saturation = Saturation(
        lag_p95_ms=math.nan if lag is None else lag.p95_ms, cpu_percent=cpu.median_ms,
        limits=limits, speed=settings.speed, sessions_at_once=_sessions_at_once(scenario),
    )
    return FidelityResult(errors, pairing, hops, settings.speed, tolerances, saturation)


def _sessions_at_once(scenario: Scenario) -> int | None:
    """A closed loop's largest number of sessions running at once (None for an open loop)."""
    load = scenario.load
    if load.mode != "closed":
        return None
    return min(load.sessions, max(int(level) for level in load.levels))


def _write_verdict(out_dir: Path, result: FidelityResult, sim_tables: dict[str, pa.Table],
                   live_tables: dict[str, pa.Table]) -> None:
    """fidelity.json and fidelity.png beside the runs, each whole or not at all (written under
    a hidden name, then renamed)."""
    from toolturn.fidelity.pairing import pair_tools, pair_turns
    from toolturn.fidelity.report import draw_fidelity

    turns, _ = pair_turns(sim_tables["turns"], live_tables["turns"])
    tools = pair_tools(sim_tables["tools"], live_tables["tools"])
    text = json.dumps(result.to_json(), indent=2, sort_keys=True) + "\n"
    figure, report = out_dir / ".partial-fidelity.png", out_dir / f".partial-{FIDELITY_FILE}"
    try:
        draw_fidelity(result, turns, tools, figure)
        report.write_text(text)
        os.replace(figure, out_dir / "fidelity.png")
        os.replace(report, out_dir / FIDELITY_FILE)
    except OSError as error:
        for partial in (figure, report):
            partial.unlink(missing_ok=True)
        raise UserError(f"{out_dir}: cannot write {FIDELITY_FILE} ({error}); both runs are "
                        "written there") from None


def _exit_status(result: FidelityResult) -> int:
    from toolturn.fidelity.report import BEYOND, SATURATED, UNPAIRED

    verdict, pairing = result.verdict, result.pairing
    if not pairing.complete:
        print(f"turns unpaired or with another story: {pairing.paired} of "
              f"{pairing.sim_turns} simulated and {pairing.live_turns} live paired, "
              f"{pairing.same_story} with the same story")
    if verdict == UNPAIRED:
        return EXIT_UNPAIRED
    if verdict == SATURATED:
        return EXIT_SATURATED
    if verdict == BEYOND:
        names = sorted({f"{error.policy} {error.metric}" for error in result.failures})
        print(f"beyond tolerance: {', '.join(names)}")
        return EXIT_BEYOND_TOLERANCE
    return EXIT_OK
