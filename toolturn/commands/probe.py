"""`toolturn probe [SUITE] -- COMMAND ARGS...`: run an agent once per probe case against `toolturn
serve` and print what it did about each fault.

    $ toolturn probe -- claude -p "Look at this project, then summarise it"
    $ toolturn probe scenarios/probes --case cut_after_tool_use -- python -m
    toolturn.probe.sdk_agent

SUITE is a folder with `suite.toml` (default `scenarios/probes`). Each case runs COMMAND in a
fresh working directory and HOME against its own server (`toolturn.probe.runner`); the scorecard
goes to stdout and, with each case's recording (`requests`, `tool_calls`, `recoveries` as
Parquet, and the server's log), to `--out` (default `results/probe`, replaced if it holds an
earlier probe). Exit status 0 when every case ran, whatever the agent did.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path
from typing import Any

from toolturn.errors import UserError
from toolturn.metrics.atomic import atomic_directory, check_destination
from toolturn.probe.runner import run_case
from toolturn.probe.scorecard import format_scorecard, score
from toolturn.probe.suite import DEFAULT_SUITE, load_suite
from toolturn.wire.record_files import write_recording

SCORECARD_FILE = "scorecard.json"


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "probe",
        help="run an agent command against every probe case and score its recovery",
        description="Run COMMAND once per case of a probe suite against toolturn serve (a free "
        "loopback port, a dummy key, a fresh working directory and HOME, a timeout) and print "
        "a recovery scorecard. Put the command after --.",
    )
    parser.add_argument("words", nargs=argparse.REMAINDER, metavar="[SUITE] -- COMMAND ARGS",
                        help="the suite folder (default scenarios/probes), --, the command")
    parser.add_argument("--out", default="results/probe", help="where the scorecard and "
                        "recordings go (default results/probe)")
    parser.add_argument("--case", action="append", default=None, metavar="NAME",
                        help="run only this case (repeatable)")
    parser.set_defaults(func=run)


def split_words(words: list[str]) -> tuple[Path, list[str]]:
    """SUITE and COMMAND from the words around `--`."""
    if "--" not in words:
        raise UserError("put the agent's command after --: toolturn probe [SUITE] -- COMMAND ARGS")
    cut = words.index("--")
    before, command = words[:cut], words[cut + 1:]
    if len(before) > 1:
        raise UserError(f"one suite folder before --, got {len(before)}: {before}")
    if not command:
        raise UserError("no command after --")
    # The command runs in a temporary folder: a relative path is the caller's, made absolute.
    found = shutil.which(command[0])
    if found is None:
        raise UserError(f"{command[0]}: no such command")
    if os.sep in command[0]:
        command = [str(Path(found).absolute()), *command[1:]]
    return (Path(before[0]) if before else DEFAULT_SUITE), command


def run(args: argparse.Namespace) -> int:
    folder, command = split_words(args.words)
    suite = load_suite(folder)
    cases = suite.cases
    if args.case:
        unknown = sorted(set(args.case) - {case.name for case in cases})
        if unknown:
            raise UserError(f"--case: no such case in {folder}: {', '.join(unknown)}")
        cases = tuple(case for case in cases if case.name in args.case)
    out = Path(args.out)
    check_destination(out, replace=True, kind="probe folder", marker=SCORECARD_FILE)
    rows = []
    with atomic_directory(out, replace=True) as staging:
        for case in cases:
            print(f"toolturn probe: {case.name} ...", flush=True)
            done = run_case(case, suite, command)
            rows.append(score(done))
            case_dir = staging / case.name
            case_dir.mkdir()
            write_recording(case_dir, done.tables, {
                "case": case.name, "checks": case.checks, "command": command,
                "exit_status": done.exit_status, "wall_s": round(done.wall_s, 3),
            })
            (case_dir / "server.log").write_text("\n".join(done.server_log) + "\n",
                                                 encoding="utf-8")
            (case_dir / "output.txt").write_text(done.output_tail, encoding="utf-8")
        (staging / SCORECARD_FILE).write_text(
            json.dumps({"suite": str(folder), "command": command, "cases": rows}, indent=2)
            + "\n", encoding="utf-8")
    print(format_scorecard(rows))
    print(f"toolturn probe: {len(rows)} cases; recordings in {out}")
    return 0
