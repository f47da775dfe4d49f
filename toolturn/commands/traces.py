"""`toolturn traces stats|calibrate|replay LOGS...`: agent session logs in, answers out.

LOGS are Claude Code session files (`~/.claude/projects/<project>/<session>.jsonl`), Messages API
request logs (JSONL), or folders holding them (searched for `*.jsonl`). Each line that cannot be
read is printed to stderr with its file and line number and skipped; a summary line says how many.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from toolturn.errors import UserError
from toolturn.limits import MAX_SEED
from toolturn.scenario.loader import load_scenario
from toolturn.scenario.packaged import scenario_argument
from toolturn.traces.calibrate import calibrated_scenario
from toolturn.traces.replay import replay_session
from toolturn.traces.sources import Logs, read_logs
from toolturn.traces.stats import trace_stats
from toolturn.traces.tables import write_tables


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "traces",
        help="agent session logs in: stats, a calibrated scenario, replays through the simulator",
        description="Read Claude Code session logs or Messages API request logs and answer from "
        "them: stats, a scenario calibrated on them, a replay of each session under every policy.",
    )
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    stats = verbs.add_parser(
        "stats", help="sessions, tool calls, durations, think time, tokens, errors, repairs"
    )
    stats.add_argument("logs", nargs="+", metavar="LOGS", help="log files or folders")
    stats.add_argument("--json", action="store_true", help="print one JSON object instead")
    stats.add_argument("--out", metavar="DIR", help="also write the Parquet tables to DIR")
    stats.add_argument("--force", action="store_true", help="replace DIR if it exists")
    stats.set_defaults(func=run_stats)
    calibrate = verbs.add_parser(
        "calibrate", help="write a scenario whose distributions come from the logs"
    )
    calibrate.add_argument("logs", nargs="+", metavar="LOGS", help="log files or folders")
    calibrate.add_argument("-o", "--output", required=True, metavar="FILE",
                           help="the scenario TOML to write; - for stdout")
    calibrate.add_argument("--name", default="calibrated", help="the scenario's name")
    calibrate.add_argument("--seed", type=int, default=1, help="the scenario's root seed")
    calibrate.add_argument("--force", action="store_true", help="replace FILE if it exists")
    calibrate.set_defaults(func=run_calibrate)
    replay = verbs.add_parser(
        "replay", help="run each logged session as an explicit script under every policy"
    )
    replay.add_argument("logs", nargs="+", metavar="LOGS", help="log files or folders")
    replay.add_argument("--scenario", metavar="SCENARIO", type=scenario_argument,
                        help="a scenario TOML file, or a packaged scenario's name (default, "
                        "overload, ...): take the model (latency, faults), runtime, user and "
                        "load from it")
    replay.add_argument("--seed", type=int, default=1,
                        help="root seed without --scenario (default 1)")
    replay.add_argument("--json", action="store_true", help="print one JSON object instead")
    replay.set_defaults(func=run_replay)


def report_skipped(logs: Logs) -> None:
    for line in logs.skipped.lines:
        print(line, file=sys.stderr)
    if logs.skipped.lines:
        print(f"toolturn traces: {logs.skipped.summary()}", file=sys.stderr)


def run_stats(args: argparse.Namespace) -> int:
    logs = read_logs(args.logs)
    report_skipped(logs)
    figures = trace_stats(logs)
    if args.out:
        try:
            write_tables(logs, Path(args.out), replace=args.force)
        except (FileExistsError, NotADirectoryError) as error:
            raise UserError(f"--out: {error} (use --force to replace it)") from None
        except OSError as error:  # a full disk, a read-only place: nothing is left half-written
            raise UserError(f"--out: {args.out}: cannot write the tables "
                            f"({error.strerror or error})") from None
    if args.json:
        print(json.dumps(figures, indent=2, ensure_ascii=False))
    else:
        print(stats_table(figures))
    return 0


def run_calibrate(args: argparse.Namespace) -> int:
    if not 0 <= args.seed <= MAX_SEED:
        raise UserError(f"--seed: must be 0 to {MAX_SEED} (got {args.seed})")
    logs = read_logs(args.logs)
    report_skipped(logs)
    text = calibrated_scenario(logs, args.name, args.seed)
    if args.output == "-":
        print(text, end="")
        return 0
    destination = Path(args.output)
    if destination.exists() and not args.force:
        raise UserError(f"-o: {destination}: already exists (use --force to replace it)")
    write_text_atomically(destination, text)
    print(f"toolturn traces calibrate: wrote {destination} ({len(logs.sessions)} sessions)",
          file=sys.stderr)
    return 0


def write_text_atomically(destination: Path, text: str) -> None:
    """Write beside the destination, then rename: a failure leaves no half-written scenario."""
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
        staging = destination.with_name(f".{destination.name}.partial-{os.getpid()}")
        try:
            staging.write_text(text, encoding="utf-8")
            os.replace(staging, destination)
        finally:
            staging.unlink(missing_ok=True)
    except OSError as error:
        raise UserError(f"-o: {destination}: cannot write: {error.strerror or error}") from None


def run_replay(args: argparse.Namespace) -> int:
    if not 0 <= args.seed <= MAX_SEED:
        raise UserError(f"--seed: must be 0 to {MAX_SEED} (got {args.seed})")
    base = load_scenario(args.scenario) if args.scenario else None
    logs = read_logs(args.logs)
    report_skipped(logs)
    main = [s for s in logs.sessions if not s.sidechain and any(st.blocks for st in s.steps)]
    if not main:
        raise UserError("the logs hold no session with a model response to replay")
    reports = [replay_session(session, base, args.seed) for session in main]
    if args.json:
        print(json.dumps({"sessions": reports, "skipped_lines": len(logs.skipped)}, indent=2))
    else:
        print(replay_table(reports))
    return 0


def replay_table(reports: list[dict[str, Any]]) -> str:
    lines = []
    for report in reports:
        lines.append(f"{report['session']} ({report['logged_tool_calls']} logged tool calls)")
        if "error" in report:
            lines.append(f"  {report['error']}")
            continue
        width = max([18, *(len(arm) + 2 for arm in report["policies"])])
        lines.append(
            f"  {'policy':<{width}}{'turns':>6}{'TTFTS p50 ms':>14}{'turn p50 ms':>13}"
            f"{'span ms':>12}{'synthetic':>11}{'repairs':>9}"
        )
        for policy, o in report["policies"].items():
            lines.append(
                f"  {policy:<{width}}{o['turns']:>6}{_num(o['ttfts_ms_p50']):>14}"
                f"{_num(o['turn_latency_ms_p50']):>13}{_num(o['session_span_ms']):>12}"
                f"{o['synthetic_results']:>11}{o['repairs']:>9}"
            )
        for policy, o in report["policies"].items():
            if set(o["turn_outcomes"]) - {"completed"}:
                shown = ", ".join(f"{k} {n}" for k, n in o["turn_outcomes"].items())
                lines.append(f"  {policy}: turn outcomes {shown}")
        for baseline, saved in report.get("early_start_saved_ms", {}).items():
            lines.append(f"  early start saved {_num(saved)} ms against {baseline}")
    return "\n".join(lines)


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _dist(d: dict[str, Any], digits: int = 1) -> str:
    if not d["n"]:
        return "-"
    return (
        f"mean {_num(d['mean'], digits)}  p50 {_num(d['p50'], digits)}  "
        f"p90 {_num(d['p90'], digits)}  p99 {_num(d['p99'], digits)}  max {_num(d['max'], digits)}"
        f"  (n {d['n']})"
    )


def stats_table(f: dict[str, Any]) -> str:
    lines = [
        f"files {f['files']}  sessions {f['sessions']} ({f['sidechain_sessions']} sub-agent)  "
        f"prompts {f['prompts']}  requests {f['requests']} "
        f"({f['requests_without_response']} without a logged response)  "
        f"tool calls {f['tool_calls']}  "
        f"API errors {f['api_errors']}  skipped lines {f['skipped_lines']['count']}",
        "",
        f"{'tool calls per step':<28}{_dist(f['tool_calls_per_step'], 2)}",
        f"{'parallel share':<28}{_num(f['parallel_share'], 3)}",
        f"{'steps per session':<28}{_dist(f['steps_per_session'])}",
        f"{'think time ms':<28}{_dist(f['think_time_ms'])}",
        f"{'output tokens / response':<28}{_dist(f['output_tokens_per_response'])}",
        f"{'first block delay ms':<28}{_dist(f['first_block_delay_ms'])}",
        "",
        f"{'tool':<24}{'calls':>7}{'errors':>8}{'p50 ms':>11}{'p90 ms':>11}{'max ms':>11}",
    ]
    for name, calls in f["tool_calls_by_tool"].items():
        durations = f["tool_duration_ms_by_tool"].get(name, {"p50": None, "p90": None, "max": None})
        errors = f["tool_errors_by_tool"].get(name, 0)
        lines.append(
            f"{name:<24}{calls:>7}{errors:>8}{_num(durations['p50']):>11}{_num(durations['p90']):>11}"
            f"{_num(durations['max']):>11}"
        )
    if len(f["by_file"]) > 1:
        lines.append("")
        lines.append(f"{'file':<60}{'sessions':>9}{'requests':>9}{'calls':>7}{'skipped':>8}")
        for row in f["by_file"]:
            name = row["file"] if len(row["file"]) <= 58 else "..." + row["file"][-55:]
            lines.append(
                f"{name:<60}{row['sessions']:>9}{row['requests']:>9}{row['tool_calls']:>7}"
                f"{row['skipped_lines']:>8}"
            )
    lines.append("")
    lines.append(
        f"boundary repair: {f['pairing_violations']} pairing violations in {f['requests']} requests"
    )
    if f["requests_without_history"]:
        lines.append(
            f"  {f['requests_without_history']} of them from toolturn serve --record folders, "
            "which keep"
            " no messages: the server's own count, no repairs"
        )
    for kind, count in f["repairs_by_kind"].items():
        rate = f["repairs_per_1000_requests"][kind]
        lines.append(f"  {kind:<30}{count:>6}  ({rate:,.1f} per 1,000 requests)")
    for location in f["repair_locations"][:20]:
        lines.append(
            f"  at {location['where']} (request {location['request_index']}, message "
            f"{location['message_index']}): {location['kind']}"
        )
    if len(f["repair_locations"]) > 20:
        lines.append(f"  ... {len(f['repair_locations']) - 20} more (see --json or --out)")
    for name, count in f["api_errors_by_kind"].items():
        lines.append(f"API error {name}: {count}")
    if f["responses_cut"]:
        lines.append(f"responses cut off mid-stream: {f['responses_cut']} (each one request)")
    if f["meta_lines"]:
        lines.append(f"client lines for the user (isMeta: resumes, caveats): {f['meta_lines']}")
    if f["tool_calls_unparsed_input"]:
        by_tool = ", ".join(f"{name} {n}"
                            for name, n in f["tool_calls_unparsed_input_by_tool"].items())
        lines.append(f"tool calls whose input did not parse as JSON (not among the tool "
                     f"calls above): {f['tool_calls_unparsed_input']} ({by_tool})")
    return "\n".join(lines)
