"""`toolturn run SCENARIO`: simulate every executor policy of a scenario and write a run folder.

    toolturn run scenarios/default.toml [-s/--seed N] [-n/--sessions N] [-p/--policy P[,P]]
                                   [--profile R[,R]] [-j/--jobs N] [-o/--out DIR] [-f/--force]
                                   [-q/--quiet] [--trace] [--no-report] [--resume]
                                   [--json | --format table|markdown]
                                   [--backend local|dask|ray] [--address ADDR]

Shows its progress on stderr (toolturn/progress.py: bars with rate and time left on a terminal, a
plain line every 10 s elsewhere), then the summary table with the arms (recovery profile x
policy) side by side, then the folder written (with `--quiet`, no progress and no table: only
the folders written):
`results/run-<scenario>-seed<seed>-<UTC time>` unless `--out` names another, with its figures
and report.html in `report/` (unless `--no-report`). The scenario's name appears in the
default folder's name with only letters, digits, `.`, `_` and `-` kept (others become `_`) and
at most 64 characters. An existing folder
is an error unless `--force`, and `--force` replaces only a run folder (a folder with run.json).
The output location is checked before simulating. The simulations write their rows as they go
into a hidden sibling, `.<folder>.parts/`, turned into the run folder at the end and removed
(memory stays flat however many sessions run). With `--resume`, the simulations an interrupted
`--resume` run of the same `--out` finished are kept and only the others run (an interrupted
`--resume` run keeps its parts folder; any other run removes it). A simulation that fails does
not stop the others: the run ends without a run folder, naming each failed simulation (its arm,
load level and experiment point) with its error, and keeps the others' parts so that the same
command with `--out` and `--resume` runs only the failed ones. `--backend dask|ray` runs the
simulations on a Dask or Ray cluster (`toolturn.engine.backends`: one made here with `--jobs`
workers, or the one at `--address`), with the same files. With `--trace` the folder also
has `events.parquet`, a row per stream event fed to the runtime. With `--json` the summary is
printed as JSON (the same groups as run.json's "summary") and the other lines go to stderr;
with `--format markdown`, the same tables as Markdown (for a CI step summary), the other lines
on stderr too. A table too wide for the console is printed one record per row, never cropped
(toolturn.metrics.display.Fitted). `--policy` and `--profile` take a comma list or repeat.
Exit status: 0 done, 1 strict mode stopped the run (the message names seed and session) or
simulations failed (each named; the first one's traceback above the names) or a worker process
of `--jobs` died (killed, out of memory; "a worker process ended ..."), 2 bad
input or a folder that could not be written (a full disk: while drawing the report, the message
says the tables were written and how to draw the report), 130 interrupted (Ctrl-C or SIGTERM;
nothing is left half written, and an interrupt while drawing the report says that the run's
tables were written and how to draw it).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolturn.agents.arm import AgentArm, level_stats_line, write_agent_arm
from toolturn.agents.loading import agent_policy, load_agent
from toolturn.commands.report import draw_report
from toolturn.engine.backends import BACKENDS
from toolturn.engine.runner import RunResult, TasksFailed, WorkerLost, run_scenario, units_of
from toolturn.engine.strict import StrictModeStop
from toolturn.errors import UserError, printable
from toolturn.malloc import fix_mmap_threshold
from toolturn.metrics.atomic import check_destination, scratch_sibling
from toolturn.metrics.markdown import markdown
from toolturn.metrics.reader import read_run
from toolturn.metrics.summary_table import (
    print_summary,
    print_summary_json,
    summary_renderables,
)
from toolturn.metrics.writer import RUN_FILE, RunMetadata, write_run_from_parts
from toolturn.options import add_format_options, choices_help, comma_list
from toolturn.progress import progress_display
from toolturn.runtime.recovery import PROFILES
from toolturn.scenario.loader import load_scenario, with_overrides
from toolturn.scenario.packaged import scenario_argument
from toolturn.scenario.schema import ALL_POLICIES, Scenario
from toolturn.termination import terminate_as_interrupt

EXIT_OK = 0
EXIT_STRICT_STOP = 1
EXIT_TASKS_FAILED = 1
EXIT_WORKER_LOST = 1
RESULTS_DIR = Path("results")
# A scenario name may hold anything (separators, `..`, NUL, a thousand characters): the default
# folder keeps a bounded run of portable file-name characters from it.
_UNSAFE_IN_NAME = re.compile(r"[^A-Za-z0-9._-]")
NAME_IN_FOLDER_MAX = 64
# The hidden sibling of the run folder where its simulations write their rows as they go.
PARTS = "parts"


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help="simulate a scenario under every executor policy and write a run folder",
        description="Simulate a scenario: each executor policy (and load level) on the same "
        "random draws; print the summary side by side and write Parquet tables to a folder.",
    )
    add_scenario_arguments(parser)
    parser.add_argument(
        "--profile", dest="profiles", action="extend", type=comma_list(list(PROFILES)),
        metavar="PROFILE",
        help="recovery profiles to run, each under every policy (default: the scenario's): "
        f"{choices_help(list(PROFILES))}",
    )
    parser.add_argument(
        "-j", "--jobs", type=int, default=1,
        help="worker processes (default 1); with --backend dask or ray and no --address, the "
        "workers of the cluster made for the run",
    )
    parser.add_argument(
        "--backend", choices=BACKENDS, default="local",
        help="where the simulations run: this machine's processes (local, the default), a Dask "
        "cluster or a Ray cluster (the dask and ray extras)",
    )
    parser.add_argument(
        "--address", metavar="ADDR",
        help="the cluster to use with --backend dask (tcp://HOST:8786) or ray (HOST:PORT); "
        "its workers must see the run's folder. Default: a cluster made on this machine",
    )
    add_out_arguments(parser)
    parser.add_argument(
        "-q", "--quiet", action="store_true",
        help="no progress and no summary table: print only the folders written (and errors)",
    )
    parser.add_argument(
        "--trace", action="store_true",
        help="also write events.parquet, a row per stream event fed to the runtime (kept in "
        "memory until the run is written: memory grows with the run)",
    )
    parser.add_argument(
        "--resume", action="store_true",
        help="keep the finished simulations of an interrupted run of this --out (in its hidden "
        "parts folder) and run only the others; an interrupted --resume run keeps its parts",
    )
    add_format_options(
        parser,
        json_help="print the summary as JSON on stdout (the run.json summary; other lines go to "
        "stderr)",
    )
    add_no_report_option(parser)
    parser.add_argument(
        "--agent", metavar="MODULE:FUNCTION",
        help="also run your own asyncio agent (async def FUNCTION(session), MODULE on sys.path, "
        "the current folder included) on the same draws, in virtual time: an arm with policy "
        "agent:MODULE:FUNCTION (toolturn.agents)",
    )
    parser.set_defaults(func=run)


def add_scenario_arguments(parser: argparse.ArgumentParser, short: bool = True) -> None:
    """SCENARIO and the overrides of a command that runs it: --seed, --sessions, --policy (with
    -s, -n and -p where `short`; `toolturn live` and `toolturn fidelity` have no letters)."""
    parser.add_argument(
        "scenario", metavar="SCENARIO", type=scenario_argument,
        help="scenario TOML file, or a packaged scenario's name (default, overload, ...)",
    )
    parser.add_argument(*_names("-s", "--seed", short), type=int,
                        help="root seed (default: the scenario's)")
    parser.add_argument(*_names("-n", "--sessions", short), type=int,
                        help="sessions per load level (default: the scenario's)")
    parser.add_argument(
        *_names("-p", "--policy", short), dest="policies", action="extend",
        type=comma_list(ALL_POLICIES), metavar="POLICY",
        help=f"executor policies to run (default: the scenario's): {choices_help(ALL_POLICIES)}",
    )


def add_out_arguments(parser: argparse.ArgumentParser, short: bool = True) -> None:
    """--out and --force of a command that writes a run folder (-o and -f where `short`)."""
    parser.add_argument(*_names("-o", "--out", short), type=Path,
                        help="run folder to write (default: under results/)")
    parser.add_argument(
        *_names("-f", "--force", short), action="store_true",
        help="replace an existing run folder (a folder with run.json; anything else is an error)",
    )


def add_no_report_option(parser: argparse.ArgumentParser) -> None:
    """--no-report of a command that writes a run folder (`args.report` false with it)."""
    parser.add_argument(
        "--no-report", dest="report", action="store_false",
        help="skip the figures and report.html (toolturn report RUN_DIR draws them later)",
    )


def _names(letter: str, name: str, short: bool) -> tuple[str, ...]:
    return (letter, name) if short else (name,)


def default_out_dir(scenario: Scenario, now: datetime) -> Path:
    """`results/run-<scenario>-seed<seed>-<UTC yyyymmdd-HHMMSS>`, the scenario's name made safe
    for a file name (see the module docstring)."""
    stamp = now.astimezone(UTC).strftime("%Y%m%d-%H%M%S")
    name = _UNSAFE_IN_NAME.sub("_", scenario.name)[:NAME_IN_FOLDER_MAX]
    return RESULTS_DIR / f"run-{name}-seed{scenario.seed}-{stamp}"


def run_metadata(run_id: str, scenario: Scenario, extra: dict[str, Any]) -> RunMetadata:
    """A run folder's metadata: its id, the scenario's name, content hash and seed, and `extra`
    (what `toolturn run`, `toolturn live` and `toolturn fidelity` each add)."""
    return RunMetadata.collect(run_id=run_id, scenario=scenario.name,
                               scenario_sha256=scenario.content_hash, seed=scenario.seed,
                               extra=extra)


def run(args: argparse.Namespace) -> int:
    # Before the run's first large Arrow buffer (toolturn/malloc.py): assembling and summarising a
    # run folder then holds no more than its buffers.
    fix_mmap_threshold()
    with terminate_as_interrupt():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise UserError(f"--jobs: must be at least 1 (got {args.jobs})")
    if args.address is not None and args.backend == "local":
        raise UserError("--address: only with --backend dask or ray")
    if args.seed is not None and args.seed < 0:
        raise UserError(f"--seed: must not be negative (got {args.seed})")
    if args.sessions is not None and args.sessions < 1:
        raise UserError(f"--sessions: must be at least 1 (got {args.sessions})")
    scenario = with_overrides(
        load_scenario(args.scenario), seed=args.seed, sessions=args.sessions,
        policies=args.policies, profiles=args.profiles,
    )
    out_dir: Path = args.out or default_out_dir(scenario, datetime.now(UTC))
    check_out_folder(out_dir, force=args.force)
    # Failed simulations keep the others' parts for a --resume run, whatever this run was.
    keep: tuple[type[BaseException], ...] = (BaseException,) if args.resume else (TasksFailed,)
    try:
        with scratch_sibling(out_dir, PARTS, keep=keep) as parts:
            if not args.resume:
                _empty(parts)
            return _simulate_and_write(args, scenario, out_dir, parts)
    except TasksFailed as failed:
        _report_failures(failed, out_dir, parts)
        return EXIT_TASKS_FAILED
    except KeyboardInterrupt as interrupt:
        if str(interrupt):  # the run folder was written: the message says what is missing
            raise
        raise KeyboardInterrupt(_interrupted_note(args, out_dir, parts)) from None


def _interrupted_note(args: argparse.Namespace, out_dir: Path, parts: Path) -> str:
    """What an interrupt during the simulations left: with --resume, the finished simulations
    (and how to go on); without, nothing, and that --resume would have kept them."""
    again = resume_command(args, out_dir)
    if args.resume:
        return f"the finished simulations are kept in {parts}; `{again}` runs the others"
    return (
        "no simulation was kept; with --resume an interrupted run keeps its finished "
        f"simulations and the same command runs only the others (`{again}`)"
    )


def resume_command(args: argparse.Namespace, out_dir: Path) -> str:
    """The command to run again: the user's words as typed (their scenario argument and
    options: `-n 2`, `--backend dask`), `--out` when they gave none (the default folder's name
    holds the time it was chosen) and `--resume` when they did not give it."""
    words = list(args.command_line)
    if args.out is None:
        words += ["--out", str(out_dir)]
    if not args.resume:
        words.append("--resume")
    return f"toolturn {shlex.join(words)}"


def check_out_folder(
    out_dir: Path, *, force: bool, kind: str = "run folder", marker: str = RUN_FILE
) -> None:
    """`check_destination` for `--out`/`--force`, saying the truth once: --force is suggested
    only for a folder it would replace (one with `marker`), and anything else in the way is
    named as what it is."""
    if os.path.lexists(out_dir) and not force:
        if out_dir.is_dir() and not out_dir.is_symlink() and (out_dir / marker).is_file():
            raise UserError(f"{out_dir}: already exists (use --force to replace it)")
        what = "folder" if out_dir.is_dir() and not out_dir.is_symlink() else "file"
        raise UserError(
            f"{out_dir}: already exists and is not a {kind} (a {what} without {marker}), "
            "which --force never replaces: choose another --out"
        )
    check_destination(out_dir, replace=force, kind=kind, marker=marker)


def _report_failures(failed: TasksFailed, out_dir: Path, parts: Path) -> None:
    """The first failure's traceback (for a bug report), then every failed simulation on a line
    of its own, then what was kept and how to run only the failed ones."""
    first = failed.failures[0]
    print(f"toolturn run: traceback of {printable(first.label)}:", file=sys.stderr)
    print(first.traceback.rstrip("\n"), file=sys.stderr)
    for failure in failed.failures:
        print(printable(f"toolturn run: failed: {failure.label}: {failure.error}"), file=sys.stderr)
    print(
        printable(
            f"toolturn run: {len(failed.failures)} of {failed.tasks} tasks failed; no run "
            f"folder written; the others' rows are kept in {parts}: the same command with "
            f"--out {out_dir} --resume runs only the failed ones"
        ),
        file=sys.stderr,
    )


def _empty(folder: Path) -> None:
    # A parts folder left by an earlier run of this --out is not this run's (without --resume).
    for child in folder.iterdir():
        shutil.rmtree(child) if child.is_dir() else child.unlink()


def _simulate_and_write(
    args: argparse.Namespace, scenario: Scenario, out_dir: Path, parts: Path
) -> int:
    arm = _agent_arm(args, scenario)  # a bad --agent is refused before simulating
    try:
        result = _run_with_progress(scenario, args, parts)
        agent_parts = [] if arm is None else _run_agent_arm(arm, parts, args.quiet)
    except StrictModeStop as stop:
        print(printable(f"toolturn run: {stop}"), file=sys.stderr)
        print(
            printable(
                f"toolturn run: reproduce with: toolturn run {shlex.quote(str(args.scenario))} "
                f"--seed {stop.seed} --policy {stop.policy}"
                + ("" if stop.profile == "default" else f" --profile {stop.profile}")
            ),
            file=sys.stderr,
        )
        return EXIT_STRICT_STOP
    except WorkerLost as lost:
        # Not the disk's: a worker process died (what it printed, if anything, is above).
        print(printable(f"toolturn run: {lost}; no run folder written"), file=sys.stderr)
        return EXIT_WORKER_LOST
    except OSError as error:
        # The simulations write their rows as they go: a full disk shows here.
        raise UserError(f"{out_dir}: cannot write the run's rows ({error})") from None
    metadata = run_metadata(out_dir.name, scenario, run_extra(scenario, args, result))
    try:
        summary = write_run_from_parts(
            out_dir,
            [*result.parts_in_order(), *agent_parts],
            metadata,
            trace=args.trace,
            points=result.point_columns(),
            events_per_wall_s=result.events_per_wall_s(),
            replace=args.force,
        )
    except OSError as error:
        # Checked before simulating, but the place can change (or the disk fill) meanwhile.
        raise UserError(f"{out_dir}: cannot write the run folder ({error})") from None
    # With --json or --format markdown, stdout is the summary alone.
    notes = sys.stderr if args.json or args.format == "markdown" else sys.stdout
    title = f"{scenario.name}: seed {scenario.seed}"
    try:
        if args.json:
            print_summary_json(summary)
        elif args.quiet:
            pass
        elif args.format == "markdown":
            sys.stdout.write(markdown(summary_renderables(summary, title=title)))
        else:
            print_summary(summary, title=title)
        if result.pairing_violations:
            print(f"pairing violations in requests sent: {result.pairing_violations}", file=notes)
        print(f"wrote {out_dir}", file=notes)
        if args.report:
            page = draw_report(
                read_run(out_dir),
                note=f"; the run's tables were written to {out_dir} "
                f"(draw the report with: toolturn report {out_dir})",
            )
            print(f"wrote {page}", file=notes)
    except KeyboardInterrupt:
        if not args.report:
            raise
        # The folder is complete but without report/: say so, and how to draw it.
        raise KeyboardInterrupt(
            f"the run's tables were written to {out_dir} but not its report "
            f"(draw it with: toolturn report {out_dir})"
        ) from None
    return EXIT_OK


def run_extra(scenario: Scenario, args: argparse.Namespace, result: RunResult) -> dict[str, Any]:
    """What a run folder records besides the scenario's hash: the overrides and the run's shape
    (never wall-clock facts or the job count, so serial and parallel runs write the same files)."""
    load = scenario.load
    return {
        "scenario_file": str(args.scenario),
        "overrides": {
            "seed": args.seed, "sessions": args.sessions, "policies": args.policies,
            "profiles": args.profiles,
        },
        "policies": list(scenario.runtime.policies),
        "profiles": list(scenario.runtime.profiles),
        "sessions": load.sessions,
        "load_mode": load.mode,
        "load_levels": list(load.levels),
        "horizon_s": load.horizon_s,
        "pairing_violations": result.pairing_violations,
    }


def _agent_arm(args: argparse.Namespace, scenario: Scenario) -> AgentArm | None:
    if args.agent is None:
        return None
    if scenario.experiment is not None:
        raise UserError(f"--agent: not with an [experiment] scenario ({args.scenario}); run "
                        "the agent on one point's scenario")
    return AgentArm(scenario, load_agent(args.agent), agent_policy(args.agent))


def _run_agent_arm(arm: AgentArm, parts: Path, quiet: bool) -> list[tuple[Path, dict[str, Any]]]:
    folders, stats = write_agent_arm(arm, parts)
    if not quiet:
        for level, level_stats in enumerate(stats):
            print(f"toolturn run: {arm.policy}: {level_stats_line(level, level_stats)}",
                  file=sys.stderr)
    return folders


def _run_with_progress(scenario: Scenario, args: argparse.Namespace, parts: Path) -> RunResult:
    labels = [unit.label for unit in units_of(scenario)]
    with progress_display(labels, scenario.load.sessions, quiet=args.quiet) as progress:
        return run_scenario(
            scenario, jobs=args.jobs, progress=progress, trace=args.trace, parts=parts,
            backend=args.backend, address=args.address,
        )
