"""The probe's scorecard: per case, what the agent did about its fault, from the recording.

Columns: the command's exit (or `timeout`), requests made, the recovery class of the faulted
request (`-` for a clean case; several when the fault struck more than once), 400s triggered
(broken transcripts we refused), results lost (tool calls whose block completed but whose
result never came back), retries (requests repeating an earlier one byte for byte) and the
delays before them, the median tool round trip (block stop to the request carrying the result)
and whether results came back out of tool_use order.
"""

from __future__ import annotations

import statistics
from typing import Any

from toolturn.probe.runner import CaseRun

NS_PER_MS = 1_000_000
COLUMNS = ("case", "exit", "requests", "recovery", "400s", "lost", "retries", "retry_delay_ms",
           "round_trip_ms", "out_of_order")


def score(run: CaseRun) -> dict[str, Any]:
    requests = run.tables["requests"].to_pylist()
    calls = run.tables["tool_calls"].to_pylist()
    recoveries = run.tables["recoveries"].to_pylist()
    retries = [r for r in requests if r["retry"]]
    trips = [c["round_trip_ns"] for c in calls if c["round_trip_ns"] is not None]
    return {
        "case": run.case.name,
        "exit": "timeout" if run.exit_status is None else run.exit_status,
        "requests": len(requests),
        "recovery": ",".join(r["recovery"] for r in recoveries) or "-",
        "400s": sum(1 for r in requests if r["status"] == 400),
        "lost": sum(1 for c in calls
                    if c["block_stop_ns"] is not None and c["result_request_index"] is None),
        "retries": len(retries),
        "retry_delay_ms": [round(r["since_previous_response_ns"] / NS_PER_MS)
                           for r in retries if r["since_previous_response_ns"] is not None],
        "round_trip_ms": round(statistics.median(trips) / NS_PER_MS) if trips else None,
        "out_of_order": any(c["results_in_order"] is False for c in calls),
    }


def format_scorecard(rows: list[dict[str, Any]]) -> str:
    """A plain-text table (Markdown-compatible, for a README)."""
    def cell(value: Any) -> str:
        if isinstance(value, list):
            return ",".join(map(str, value)) or "-"
        return "-" if value is None else str(value)

    table = [[cell(row[column]) for column in COLUMNS] for row in rows]
    widths = [max(len(column), *(len(line[i]) for line in table))
              for i, column in enumerate(COLUMNS)]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(COLUMNS, widths, strict=True)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) + " |"
              for line in table]
    return "\n".join(lines)
