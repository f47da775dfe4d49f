"""`toolturn probe [SUITE] -- COMMAND ARGS...`: run an agent against `toolturn serve` once per
probe case (or `--repeat N` times) and print what it did about each fault, beside what the
project's own `claude-code` profile does in the same case.

    $ toolturn probe -- claude -p "Look at this project, then summarise it"
    $ toolturn probe --repeat 5 --case cut_after_tool_use -- python -m toolturn.probe.sdk_agent
    $ toolturn probe --protocol openai-responses -- codex exec ...
    $ toolturn probe compare results/probe-old/scorecard.json results/probe/scorecard.json

SUITE is a folder with `suite.toml` (default: the suite shipped in the package,
`toolturn/scenarios/probes`). Each run runs COMMAND in a fresh working directory and HOME
against its own server (`toolturn.probe.runner`); a relative path in COMMAND (the program, or an
argument holding a slash that names a file or folder that exists here) is made absolute first.
The scorecard (`toolturn.probe.scorecard`) goes to stdout and, with each run's recording
(`requests`, `tool_calls`, `recoveries` as Parquet, the server's log, the command's stdout
whole as `stdout.txt` and the end of its stderr as `output.txt`), to `--out` (default
`results/probe`, replaced if it holds an earlier probe): `--out/CASE/`, or `--out/CASE/run-K/`
with `--repeat`. `--protocol` says which wire protocol the agent speaks (`anthropic`, the
default; `openai-responses`; `openai-chat`): the runner points that protocol's variables at the
server (`toolturn.probe.runner`), the cases and classes are the same, and the scorecard names
it (each run's `protocols` says what the agent really spoke). Exit status 0 when every case
ran, whatever the agent did; 1 when a case failed (the agent sent no request); 2 for bad input.

`compare` as the first word compares two scorecards (`toolturn.probe.compare`); a suite folder
named compare is written `./compare`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from toolturn.errors import UserError
from toolturn.metrics.atomic import atomic_directory, check_destination
from toolturn.options import FORMATS, Parser, reject_unknown
from toolturn.probe.compare import DEFAULT_TOLERANCE, run_compare
from toolturn.probe.profile_agent import profile_class
from toolturn.probe.runner import PROTOCOLS, CaseRun, run_case
from toolturn.probe.scorecard import case_entry, format_scorecard, score
from toolturn.probe.suite import PACKAGED_SUITE, ProbeCase, Suite, load_suite
from toolturn.wire.codecs import ANTHROPIC
from toolturn.wire.record_files import write_recording

SCORECARD_FILE = "scorecard.json"
COMPARE = "compare"
MAX_REPEAT = 1000


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "probe",
        help="run an agent command against every probe case and score its recovery",
        description="Run COMMAND once per case of a probe suite against toolturn serve (a free "
        "loopback port, a dummy key, a fresh working directory and HOME, a timeout) and print "
        "a recovery scorecard beside the claude-code profile's own classes. Put the command "
        "after --. `toolturn probe compare OLD.json NEW.json [--tolerance 0.2]` compares two "
        "scorecards.",
    )
    parser.add_argument("words", nargs=argparse.REMAINDER, metavar="[SUITE] -- COMMAND ARGS",
                        help="the suite folder (default: the packaged suite), --, the command")
    parser.add_argument("--out", default="results/probe", help="where the scorecard and "
                        "recordings go (default results/probe)")
    parser.add_argument("--case", action="append", default=None, metavar="NAME",
                        help="run only this case (repeatable)")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="run each case N times: races are rates (default 1)")
    parser.add_argument("--protocol", choices=PROTOCOLS, default=ANTHROPIC,
                        help="the wire protocol the agent speaks: sets OPENAI_BASE_URL and a "
                        "dummy OPENAI_API_KEY for the OpenAI ones (default anthropic: "
                        "ANTHROPIC_BASE_URL alone)")
    parser.add_argument("--format", choices=FORMATS, default="table",
                        help="table (the default) or markdown: the scorecard alone on stdout, "
                        "the progress lines on stderr (e.g. for a CI step summary)")
    parser.set_defaults(func=run)


def _absolute(word: str) -> str:
    """`word` made absolute if it looks like a path (it holds a slash: `./x`, `../x`, `a/b`)
    and names a file or folder that exists relative to here (the command runs elsewhere);
    `--opt=PATH` too. Options and other words are left alone: a prompt word such as
    `README.md` stays a word, even where a file of that name exists."""
    prefix, value = "", word
    if word.startswith("-"):
        name, equals, rest = word.partition("=")
        if not equals:
            return word
        prefix, value = name + "=", rest
    if "/" not in value or os.path.isabs(value) or not os.path.exists(value):
        return word
    return prefix + str(Path(value).absolute())


def _options_after_suite(args: argparse.Namespace, before: list[str]) -> list[str]:
    """Options written after SUITE (argparse hands them over as words) read into `args`; the
    words that are left."""
    parser = argparse.ArgumentParser(prog="toolturn probe", add_help=False, exit_on_error=False)
    parser.add_argument("--out", default=args.out)
    parser.add_argument("--case", action="append", default=args.case)
    parser.add_argument("--repeat", type=int, default=args.repeat)
    parser.add_argument("--protocol", choices=PROTOCOLS, default=args.protocol)
    try:
        found, rest = parser.parse_known_args(before)
    except argparse.ArgumentError as error:
        raise UserError(str(error)) from None
    args.out, args.case, args.repeat = found.out, found.case, found.repeat
    args.protocol = found.protocol
    return rest


def split_words(words: list[str], args: argparse.Namespace | None = None) -> tuple[
        Path, list[str]]:
    """SUITE and COMMAND from the words around `--` (and, given `args`, options among them)."""
    if "--" not in words:
        raise UserError("put the agent's command after --: toolturn probe [SUITE] -- COMMAND ARGS")
    cut = words.index("--")
    before, command = words[:cut], words[cut + 1:]
    if args is not None:
        before = _options_after_suite(args, before)
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
    command = [command[0], *map(_absolute, command[1:])]
    return (Path(before[0]) if before else PACKAGED_SUITE), command


def _compare(words: list[str]) -> int:
    parser = Parser(prog="toolturn probe compare", description="Compare two "
                                     "probe scorecards: exit 0 when every class's share of "
                                     "every case is within the tolerance, 1 naming the cases "
                                     "that moved.")
    parser.add_argument("old", type=Path, metavar="OLD.json")
    parser.add_argument("new", type=Path, metavar="NEW.json")
    parser.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE,
                        help=f"the largest change of a share that is not a move (default "
                        f"{DEFAULT_TOLERANCE})")
    try:
        args, unknown = parser.parse_known_args(words)
        if unknown:
            reject_unknown(parser, unknown)
    except SystemExit as stop:  # argparse's own exit: 2 for a bad word, 0 for --help
        return int(stop.code or 0)
    status, lines = run_compare(args.old, args.new, args.tolerance)
    print("\n".join(lines))
    return status


def _chosen(suite: Suite, folder: Path, names: list[str] | None) -> tuple[ProbeCase, ...]:
    if not names:
        return suite.cases
    unknown = sorted(set(names) - {case.name for case in suite.cases})
    if unknown:
        raise UserError(f"--case: no such case in {folder}: {', '.join(unknown)}")
    return tuple(case for case in suite.cases if case.name in names)


def _write_run(folder: Path, done: CaseRun, command: list[str]) -> None:
    folder.mkdir(parents=True)
    write_recording(folder, done.tables, {
        "case": done.case.name, "checks": done.case.checks, "command": command,
        "exit_status": done.exit_status, "wall_s": round(done.wall_s, 3),
    })
    (folder / "server.log").write_text("\n".join(done.server_log) + "\n", encoding="utf-8")
    (folder / "output.txt").write_text(done.output_tail, encoding="utf-8")
    (folder / "stdout.txt").write_text(done.stdout, encoding="utf-8")


def run(args: argparse.Namespace) -> int:
    if args.words[:1] == [COMPARE]:
        return _compare(args.words[1:])
    folder, command = split_words(args.words, args)
    if not 1 <= args.repeat <= MAX_REPEAT:
        raise UserError(f"--repeat: a number of runs from 1 to {MAX_REPEAT}, got {args.repeat}")
    suite = load_suite(folder)
    cases = _chosen(suite, folder, args.case)
    out = Path(args.out)
    check_destination(out, replace=True, kind="probe folder", marker=SCORECARD_FILE)
    entries = []
    # The scorecard is Markdown already: --format markdown keeps stdout to it alone.
    notes = sys.stderr if args.format == "markdown" else sys.stdout
    print(f"toolturn probe: {len(cases)} cases in {args.protocol}", flush=True, file=notes)
    with atomic_directory(out, replace=True) as staging:
        for case in cases:
            runs = []
            for number in range(1, args.repeat + 1):
                print(f"toolturn probe: {case.name} (run {number} of {args.repeat}) ...",
                      flush=True, file=notes)
                done = run_case(case, suite, command, args.protocol)
                runs.append(score(done))
                where = staging / case.name
                _write_run(where / f"run-{number}" if args.repeat > 1 else where, done, command)
            print(f"toolturn probe: {case.name}: the claude-code profile ...", flush=True,
                  file=notes)
            entries.append(case_entry(case.name, case.checks, runs, profile_class(case, suite),
                                      args.protocol))
        (staging / SCORECARD_FILE).write_text(json.dumps(
            {"suite": str(folder), "command": command, "protocol": args.protocol,
             "repeat": args.repeat, "cases": entries}, indent=2) + "\n", encoding="utf-8")
    print(format_scorecard(entries))
    failed = [entry["case"] for entry in entries if entry["failed"]]
    print(f"toolturn probe: {len(entries)} cases; recordings in {out}", file=notes)
    if failed:
        print(f"toolturn probe: {len(failed)} cases failed: {', '.join(failed)}", file=notes)
        return 1
    return 0
