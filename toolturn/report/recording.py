"""The page of a recording (`toolturn serve --record DIR`, or one case of `toolturn probe`): what
the client did, from the three tables, in DIR/report/report.html.

Sections: the recording's identity (`recording.json`), requests by status and ending, the
recoveries by class, the tool calls (sent, answered, lost, out of order, round trips), then
every recovery and the first `MAX_ROWS` requests row by row. Tables only: the files are the
contract (the names and columns `toolturn.wire.recording` writes), nothing of the server is
imported.
"""

from __future__ import annotations

import json
from collections import Counter
from html import escape
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from toolturn.errors import UserError
from toolturn.metrics.atomic import atomic_directory, check_destination
from toolturn.report.html import page_head

RECORDING_FILE = "recording.json"
TABLE_NAMES = ("requests", "tool_calls", "recoveries")
REPORT_DIR = "report"
PAGE = "report.html"
MAX_ROWS = 500
NS_PER_MS = 1_000_000


def is_recording(folder: Path) -> bool:
    return (Path(folder) / RECORDING_FILE).is_file()


def read_recording(folder: Path) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """The recording's metadata and rows; a UserError names a missing or unreadable file."""
    folder = Path(folder)
    try:
        summary = json.loads((folder / RECORDING_FILE).read_text(encoding="utf-8"))
        metadata = summary.get("metadata") if isinstance(summary, dict) else None
        rows = {name: pq.read_table(folder / f"{name}.parquet").to_pylist()
                for name in TABLE_NAMES}
    except RecursionError:  # json's parser recurses per level of nesting
        raise UserError(f"{folder}: not a readable recording (nesting too deep)") from None
    except (OSError, ValueError) as error:
        raise UserError(f"{folder}: not a readable recording ({error})") from None
    if not isinstance(metadata, dict):
        raise UserError(f"{folder / RECORDING_FILE}: metadata: must be an object")
    return metadata, rows


def write_recording_report(folder: Path) -> Path:
    """Write DIR/report/report.html for the recording in `folder`; its path."""
    metadata, rows = read_recording(folder)
    destination = Path(folder) / REPORT_DIR
    check_destination(destination, replace=True, kind="report folder", marker=PAGE)
    with atomic_directory(destination, replace=True) as staging:
        (staging / PAGE).write_text(render(metadata, rows), encoding="utf-8")
    return destination / PAGE


def _table(header: list[str], body: list[list[Any]]) -> str:
    head = "".join(f"<th>{escape(str(cell))}</th>" for cell in header)
    lines = ["".join(f"<td>{escape('-' if cell is None else str(cell))}</td>" for cell in row)
             for row in body]
    return f"<table><tr>{head}</tr>" + "".join(f"<tr>{line}</tr>" for line in lines) + "</table>"


def _ms(values: list[int]) -> str:
    if not values:
        return "-"
    median, p95 = np.percentile(values, [50, 95], method="higher")
    return f"{median / NS_PER_MS:.0f} ms (p95 {p95 / NS_PER_MS:.0f} ms)"


def render(metadata: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> str:
    requests, calls, recoveries = (rows[name] for name in TABLE_NAMES)
    title = f"toolturn report: recording of {metadata.get('scenario', metadata.get('case', '?'))}"
    ends = Counter((r["status"], r["ending"]) for r in requests)
    classes = Counter(r["recovery"] for r in recoveries)
    trips = [c["round_trip_ns"] for c in calls if c["round_trip_ns"] is not None]
    lost = [c for c in calls
            if c["block_stop_ns"] is not None and c["result_request_index"] is None]
    parts = [
        page_head(title, plotly=False),
        "<dl>" + "".join(f"<dt>{escape(str(k))}</dt><dd>{escape(json.dumps(v))}</dd>"
                         for k, v in sorted(metadata.items())) + "</dl>",
        f"<h2>Requests ({len(requests)})</h2>",
        _table(["status", "ending", "requests"],
               [[s, e, n] for (s, e), n in sorted(ends.items(), key=str)]),
        f"<p>Retries (bytes repeated): {sum(1 for r in requests if r['retry'])}. Pairing "
        f"violations found: {sum(r['pairing_violations'] for r in requests)}.</p>",
        f"<h2>Recoveries ({len(recoveries)})</h2>",
        _table(["recovery", "requests"], [[k, v] for k, v in sorted(classes.items())]),
        f"<h2>Tool calls ({len(calls)})</h2>",
        f"<p>Results returned: {sum(1 for c in calls if c['result_request_index'] is not None)};"
        f" lost (block completed, no result): {len(lost)}; results out of tool_use order: "
        f"{sum(1 for c in calls if c['results_in_order'] is False)}; round trip (block stop to "
        f"the request carrying the result): {_ms(trips)}.</p>",
        "<h2>Every recovery</h2>",
        _table(["request", "session", "turn", "attempt", "faults", "recovery", "next", "delay"],
               [[r["request_index"], r["session_id"], r["turn_index"], r["attempt"], r["faults"],
                 r["recovery"], r["next_request_index"], _ms([r["delay_ns"]])
                 if r["delay_ns"] is not None else None] for r in recoveries]),
        f"<h2>Requests (the first {MAX_ROWS})</h2>",
        _table(["#", "arrival", "session", "turn", "attempt", "status", "ending", "faults",
                "messages", "retry", "first violation"],
               [[r["request_index"], f"{r['arrival_ns'] / NS_PER_MS:.0f} ms", r["session_id"],
                 r["turn_index"], r["attempt"], r["status"], r["ending"], r["faults"],
                 r["message_count"], r["retry"], r["first_violation"]]
                for r in requests[:MAX_ROWS]]),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"
