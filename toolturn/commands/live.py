"""`toolturn live SCENARIO`: run a scenario's sessions for real and write a run folder like
`toolturn run`'s.

    toolturn live scenarios/default.toml [--sessions N] [--seed S] [--speed X] [--policy P ...]
                                    [--base-url URL] [--out DIR] [--force] [--no-report]

The same loops, simulated user, tool plans and load as `toolturn run`, on asyncio over the official
SDK, in real time divided by `--speed`, against an embedded `toolturn serve` of the scenario on a
free loopback port (or `--base-url`: then a non-loopback URL needs `ANTHROPIC_API_KEY` in the
environment; a loopback one gets a dummy key). Units (policy, load level) run one after another;
a progress bar per unit on a terminal. The folder has the same tables and schemas as `toolturn
run`'s, times in the scenario's scale (wall clock times the speed), so `toolturn report` and
`toolturn compare` read it; it is `results/live-<scenario>-seed<seed>-<UTC time>` unless `--out`.
Without a terminal, a line on stderr says when it starts and when each unit is done. Exit status: 0
done, 2 bad input, 130 interrupted (Ctrl-C or SIGTERM: nothing is written).
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import math
import os
import signal
import sys
from collections.abc import Coroutine
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from toolturn.commands.run import (
    add_no_report_option,
    add_out_arguments,
    add_scenario_arguments,
    check_out_folder,
    default_out_dir,
    run_metadata,
)
from toolturn.engine.runner import units_of
from toolturn.errors import UserError
from toolturn.fidelity.settings import LOOPBACK_KEY, LiveSettings
from toolturn.metrics.reader import read_run
from toolturn.metrics.summary_table import print_summary
from toolturn.metrics.writer import write_run_from_rows
from toolturn.scenario.loader import (
    load_scenario,
    unmodelled_live,
    with_overrides,
    without_session_faults,
)
from toolturn.scenario.schema import Scenario
from toolturn.termination import terminate_as_interrupt

if TYPE_CHECKING:
    from toolturn.fidelity.live_run import LiveRunResult

EXIT_OK = 0
T = TypeVar("T")
API_KEY_VARIABLE = "ANTHROPIC_API_KEY"


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "live",
        help="run a scenario's sessions for real over the SDK and write a run folder",
        description="Run a scenario live: the same loops, simulated user and tools as "
        "toolturn run, "
        "in real time over the official SDK against an embedded toolturn serve (or --base-url); "
        "writes the same tables as toolturn run.",
    )
    add_live_arguments(parser)
    add_out_arguments(parser, short=False)
    add_no_report_option(parser)
    parser.set_defaults(func=run)


def add_live_arguments(parser: argparse.ArgumentParser) -> None:
    """The options `toolturn live` and `toolturn fidelity` share."""
    add_scenario_arguments(parser, short=False)
    parser.add_argument(
        "--speed", type=float, default=1.0,
        help="divide every delay by this: 10 runs ten times faster than the scenario's time "
        "(default 1)",
    )
    parser.add_argument(
        "--base-url",
        help="an Anthropic-compatible endpoint instead of the embedded toolturn serve "
        f"(a non-loopback one needs {API_KEY_VARIABLE})",
    )


def live_scenario(args: argparse.Namespace, command: str = "live") -> Scenario:
    """The scenario with the command line's overrides, its options checked, and without the
    session faults a live run cannot make (a warning on stderr says so when it had any)."""
    if not (math.isfinite(args.speed) and args.speed > 0):
        raise UserError(f"--speed: must be a positive number (got {args.speed:g})")
    if args.seed is not None and args.seed < 0:
        raise UserError(f"--seed: must not be negative (got {args.seed})")
    if args.sessions is not None and args.sessions < 1:
        raise UserError(f"--sessions: must be at least 1 (got {args.sessions})")
    scenario = with_overrides(
        load_scenario(args.scenario), seed=args.seed, sessions=args.sessions, policies=args.policies
    )
    ignored = unmodelled_live(scenario)
    if not ignored:
        return scenario
    who = "both twins run" if command == "fidelity" else "its sessions run"
    print(f"toolturn {command}: warning: {' and '.join(ignored)} not applied: a live run does not "
          f"crash, rewind or compact its sessions, so {who} without them",
          file=sys.stderr, flush=True)
    return without_session_faults(scenario)



def live_settings(args: argparse.Namespace, environ: dict[str, str] | None = None) -> LiveSettings:
    """The speed and the endpoint; a real key only for a non-loopback `--base-url`."""
    if args.base_url is None:
        return LiveSettings(speed=args.speed)
    parts = urlsplit(args.base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"--base-url: not an http(s) URL: {args.base_url!r}")
    if _is_loopback(parts.hostname):
        return LiveSettings(speed=args.speed, base_url=args.base_url, api_key=LOOPBACK_KEY)
    key = (os.environ if environ is None else environ).get(API_KEY_VARIABLE)
    if not key:
        raise UserError(f"--base-url {args.base_url}: not loopback, so {API_KEY_VARIABLE} "
                        "must hold the API key")
    return LiveSettings(speed=args.speed, base_url=args.base_url, api_key=key)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run(args: argparse.Namespace) -> int:
    with terminate_as_interrupt():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    scenario = live_scenario(args)
    settings = live_settings(args)
    out_dir: Path = args.out or live_out_dir(scenario, datetime.now(UTC))
    check_out_folder(out_dir, force=args.force)
    result = run_live_with_progress(scenario, settings)
    metadata = run_metadata(out_dir.name, scenario, live_extra(scenario, args, settings))
    try:
        units = [(unit.columns, unit.rows) for unit in result.results]
        summary = write_run_from_rows(out_dir, units, metadata, replace=args.force)
    except OSError as error:
        raise UserError(f"{out_dir}: cannot write the run folder ({error})") from None
    print_summary(summary, title=f"{scenario.name} live at speed {settings.speed:g}: "
                  f"seed {scenario.seed}")
    print(f"wrote {out_dir}")
    if args.report:
        from toolturn.report.writer import write_report

        print(f"wrote {write_report(read_run(out_dir))}")
    return EXIT_OK


def live_out_dir(scenario: Scenario, now: datetime) -> Path:
    """`results/live-<scenario>-seed<seed>-<UTC time>`: `toolturn run`'s name with `live-`."""
    simulated = default_out_dir(scenario, now)
    return simulated.with_name("live-" + simulated.name.removeprefix("run-"))


def live_extra(
    scenario: Scenario, args: argparse.Namespace, settings: LiveSettings
) -> dict[str, Any]:
    load = scenario.load
    return {
        "scenario_file": str(args.scenario),
        "overrides": {"seed": args.seed, "sessions": args.sessions, "policies": args.policies},
        "policies": list(scenario.runtime.policies),
        "sessions": load.sessions,
        "load_mode": load.mode,
        "load_levels": list(load.levels),
        "horizon_s": load.horizon_s,
        "live": {
            "speed": settings.speed,
            "base_url": settings.base_url or "embedded toolturn serve",
        },
    }


def run_interruptible(work: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(work)`, a SIGTERM handled as asyncio handles Ctrl-C: the main task is
    cancelled (every session with it, in order), then KeyboardInterrupt is raised. (A Python
    handler raising KeyboardInterrupt would raise it inside whichever task runs, which dies with
    it unseen.) The handler in place before is back afterwards."""
    interrupted = False
    previous = signal.getsignal(signal.SIGTERM)

    async def main() -> T:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()

        def stop() -> None:
            nonlocal interrupted
            interrupted = True
            task.cancel()

        loop.add_signal_handler(signal.SIGTERM, stop)
        try:
            return await work
        finally:
            loop.remove_signal_handler(signal.SIGTERM)

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        if interrupted:
            raise KeyboardInterrupt from None
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_live_with_progress(scenario: Scenario, settings: LiveSettings) -> LiveRunResult:
    """The live run, with a progress bar per unit on a terminal (else a line per unit)."""
    # Imported here: the SDK takes seconds to load, and every other command would wait for it.
    from toolturn.fidelity.live_run import run_live

    console = Console(stderr=True)
    units = units_of(scenario)
    where = settings.base_url or "an embedded toolturn serve"
    print(f"toolturn live: {scenario.name}, {len(units)} units of "
          f"{scenario.load.sessions} sessions "
          f"at speed {settings.speed:g} against {where}", file=sys.stderr, flush=True)
    if not console.is_terminal:

        def done(index: int, finished: int) -> None:
            if finished == scenario.load.sessions:
                print(f"toolturn live: {units[index].label}: {finished} sessions done",
                      file=sys.stderr, flush=True)

        return run_interruptible(run_live(scenario, settings, progress=done))
    columns = (
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()
    )
    with Progress(*columns, console=console, transient=True) as bar:
        tasks = [bar.add_task(f"live {unit.label}", total=scenario.load.sessions)
                 for unit in units]

        def advance(index: int, finished: int) -> None:
            bar.update(tasks[index], completed=finished)

        return run_interruptible(run_live(scenario, settings, progress=advance))
