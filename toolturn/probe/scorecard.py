"""The probe's scorecard: per case, what the agent did about its fault, over `runs` runs, beside
what the project's own `claude-code` profile does in the same case.

A case's entry (`case_entry`, one per case in `scorecard.json`):

- `class` per run (`toolturn.probe.verdicts`, from what the client sent next) and `rates`:
  each class, its share of the runs (a race is a rate, not a verdict);
- `profile`: the class of the `claude-code` profile's own run of the case, and `agreement`:
  the share of the agent's runs of that class (1: the profile predicts the agent; 0: a stale
  profile or a changed agent);
- `failed`: why the case measured nothing (the agent sent no request), else null;
- `per_run`: each run's figures from the recording: the command's exit (or `timeout`),
  requests made, 400s triggered (broken transcripts we refused), results lost (tool calls whose
  block completed but whose result never came back), retries (requests repeating an earlier one
  byte for byte) and the delays before them, the median tool round trip (block stop to the
  request carrying the result), whether results came back out of tool_use order, and the
  wire protocols its requests came in (`protocols`: an agent asked for one may speak another),
  and `account`: the agent's own account of the run (its stdout, when it prints Claude Code's
  stream-json) set beside the recording's calls and results (`toolturn.probe.agent_account`:
  `agrees`, `differences`), null when it printed none.

The printed scorecard's `account` column says per case whether the agent's account agreed with
the recording (`yes`, `no`, `2/3` of the runs that printed one; `-`: none did).
"""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

from toolturn.probe.agent_account import compare_account, read_account
from toolturn.probe.runner import CaseRun
from toolturn.probe.verdicts import no_request_reason, run_class
from toolturn.wire.codecs import ANTHROPIC

NS_PER_MS = 1_000_000
NO_REQUEST_CLASS = "no_request"
COLUMNS = ("case", "runs", "class", "profile", "agrees", "account", "exit", "requests", "400s",
           "lost", "retries", "round_trip_ms")


def score(run: CaseRun) -> dict[str, Any]:
    """One run's figures and class."""
    requests = run.tables["requests"].to_pylist()
    calls = run.tables["tool_calls"].to_pylist()
    retries = [r for r in requests if r["retry"]]
    trips = [c["round_trip_ns"] for c in calls if c["round_trip_ns"] is not None]
    return {
        "class": run_class(run.exchanges) if requests else NO_REQUEST_CLASS,
        "exit": "timeout" if run.exit_status is None else run.exit_status,
        "requests": len(requests),
        "400s": sum(1 for r in requests if r["status"] == 400),
        "lost": sum(1 for c in calls
                    if c["block_stop_ns"] is not None and c["result_request_index"] is None),
        "retries": len(retries),
        "retry_delay_ms": [round(r["since_previous_response_ns"] / NS_PER_MS)
                           for r in retries if r["since_previous_response_ns"] is not None],
        "round_trip_ms": round(statistics.median(trips) / NS_PER_MS) if trips else None,
        "out_of_order": any(c["results_in_order"] is False for c in calls),
        "protocols": sorted({str(r["protocol"]) for r in requests if r["protocol"]}),
        "account": compare_account(read_account(run.stdout), calls),
    }


def rates(classes: list[str]) -> dict[str, float]:
    """Each class's share of the runs, the commonest first (ties by name)."""
    counts = Counter(classes)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return {name: round(count / len(classes), 4) for name, count in ordered}


def case_entry(name: str, checks: str, runs: list[dict[str, Any]],
               profile: str | None, protocol: str = ANTHROPIC) -> dict[str, Any]:
    """A case's scorecard entry from its runs' `score`s and the profile's class (None: no
    class to set beside the agent's), for an agent speaking `protocol`."""
    classes = [run["class"] for run in runs]
    agreement = None if profile is None else round(
        sum(1 for c in classes if c == profile) / len(classes), 4)
    failed = no_request_reason(protocol) if NO_REQUEST_CLASS in classes else None
    return {"case": name, "checks": checks, "runs": len(runs), "rates": rates(classes),
            "profile": profile, "agreement": agreement, "failed": failed, "per_run": runs}


def _agrees(entry: dict[str, Any]) -> str:
    agreement = entry["agreement"]
    if agreement is None:
        return "-"
    if agreement in (0, 1):
        return "yes" if agreement == 1 else "no"
    return f"{round(agreement * entry['runs'])}/{entry['runs']}"


def account_cell(runs: list[dict[str, Any]]) -> str:
    """Whether the agent's own account agreed with the recording, over the runs that gave one."""
    accounts = [run["account"] for run in runs if run.get("account") is not None]
    if not accounts:
        return "-"
    agreeing = sum(1 for account in accounts if account["agrees"])
    if agreeing in (0, len(accounts)):
        return "yes" if agreeing else "no"
    return f"{agreeing}/{len(accounts)}"


def _row(entry: dict[str, Any]) -> dict[str, Any]:
    runs = entry["per_run"]
    shares = entry["rates"]
    trips = [r["round_trip_ms"] for r in runs if r["round_trip_ms"] is not None]
    return {
        "case": entry["case"] + (" (FAILED)" if entry["failed"] else ""),
        "runs": entry["runs"],
        "class": ", ".join(name if len(shares) == 1 else f"{name} {share:.2f}"
                           for name, share in shares.items()) or "-",
        "profile": entry["profile"] or "-",
        "agrees": _agrees(entry),
        "account": account_cell(runs),
        "exit": ",".join(dict.fromkeys(str(r["exit"]) for r in runs)),
        "requests": ",".join(dict.fromkeys(str(r["requests"]) for r in runs)),
        "400s": sum(r["400s"] for r in runs),
        "lost": sum(r["lost"] for r in runs),
        "retries": sum(r["retries"] for r in runs),
        "round_trip_ms": round(statistics.median(trips)) if trips else None,
    }


def format_scorecard(entries: list[dict[str, Any]]) -> str:
    """A plain-text table (Markdown-compatible, for a README), one row per case."""
    table = [["-" if (value := row[column]) is None or value == "" else str(value)
              for column in COLUMNS] for row in map(_row, entries)]
    widths = [max(len(column), *(len(line[i]) for line in table))
              for i, column in enumerate(COLUMNS)]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(COLUMNS, widths, strict=True)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) + " |"
              for line in table]
    for entry in entries:
        if entry["failed"]:
            lines.append(f"{entry['case']}: failed: {entry['failed']}")
        differences = dict.fromkeys(difference for run in entry["per_run"]
                                    if run.get("account") is not None
                                    for difference in run["account"]["differences"])
        lines += [f"{entry['case']}: the agent's account: {d}" for d in differences]
    return "\n".join(lines)
