"""`toolturn serve --record` folders: what a client did against `toolturn serve`, as logged
sessions.

A recording (`toolturn.wire.recording` documents its tables) is a folder holding `recording.json`,
`requests.parquet` and `tool_calls.parquet` (`recoveries.parquet` is not read here: `toolturn
report` draws it). Each row of `requests` with a session is a step of that session, in
`request_index` order; its `tool_calls` rows (by `request_index`) are the step's calls, and a call's
result is the request at `result_request_index`.

What a recording holds, and so what the stats can give from one:

1. Times are the server's monotonic nanoseconds from the recording's start, read as
   milliseconds of the scenario's time: times the server's `speed` (from `recording.json`'s
   metadata; 1 when it does not say), as a live run's are. Differences (durations, think
   time) are right, dates are not.
2. A step was sent at its `arrival_ns` and its response ended at `end_ns`. A tool call was
   used at its `block_stop_ns` and its result sent when the request at `result_request_index`
   arrived (the recording's `round_trip_ns`: an upper bound on the tool's duration, the
   agent's own work counted in). `is_error` is the result's.
3. A step has a response when its status is 200 and its ending `complete`; any other ending
   (`cut`, `error_event`, `http_error`, `aborted`, `server_error`) is the step's API error,
   named `ending: HTTP status` when the status is not 200, else `ending: faults`. Its calls
   are kept (the stats count only answered steps' calls).
4. A prompt is a session's first request and any request that follows a complete response
   without tool calls (a recording does not tell a prompt from tool results: this is the
   inference). Think time is then the gap between that response's end and the prompt.
5. Not recorded: request bodies (so no message history: the repair the history implies cannot
   be computed; the server's own `pairing_violations`, our 400s, are counted instead), tool
   inputs and result texts, response text, stop reasons, usage (so no tokens), and when the
   first block went (so no first-block delay). `LoggedSession.bodies_logged` is False: replay,
   which scripts a session from its inputs and results, leaves such sessions out.
6. A request refused before the model saw it has no session: it is reported as skipped
   (`refused before the model: ...`) with its row.
7. A batch in which a call of a tool that cancels its siblings erred: its other error results
   are the client's sibling cancellations (`ToolCall.sibling_cancelled`), not errors of their
   tools (a recording keeps no result text nor cause to tell them by). Which tools cancel
   their siblings is the served scenario's say (`cancels_siblings`, from the `scenario_file`
   `toolturn serve` names in `recording.json`, when it is still there unchanged), else the
   default catalogue's (Bash), which `toolturn serve` serves unless told otherwise.

`where` of a step is `DIR/requests.parquet:N`, N its `request_index`. A recording that cannot be
read (a missing or truncated table, a column missing or of another type) is reported with its
file, as a skipped line 0, and its sessions are not read; a bad `tool_calls` table costs only
the calls.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from toolturn.errors import UserError
from toolturn.metrics.provenance import file_sha256
from toolturn.metrics.schema import TableSpec
from toolturn.scenario.loader import load_scenario
from toolturn.tools.catalogue import catalogue
from toolturn.tools.spec import ToolSpec
from toolturn.traces.logged import LoggedSession, Step, ToolCall
from toolturn.traces.skipped import Skipped
from toolturn.wire.record_files import RECORDING_FILE, read_table
from toolturn.wire.recording import REQUESTS, TABLES, TOOL_CALLS

NS_PER_MS = 1_000_000.0


class _TableError(ValueError):
    pass


TABLE_FILES = tuple(f"{spec.name}.parquet" for spec in TABLES)
RUN_FILE = "run.json"  # a `toolturn run` folder, which has a `requests` table of its own


def is_recording(folder: Path, named: bool = False) -> bool:
    """Whether `folder` is a `toolturn serve --record` folder: it holds `recording.json` (what the
    recorder writes last, and what a search of a tree looks for); or, for a folder named on the
    command line, one of the recording's tables and no `run.json` (a recording that lost its
    summary is still one, reported as such)."""
    if (folder / RECORDING_FILE).is_file():
        return True
    return named and not (folder / RUN_FILE).exists() and any(
        (folder / name).exists() for name in TABLE_FILES)


def _rows(folder: Path, spec: TableSpec) -> list[dict[str, Any]]:
    """The table's rows, with the columns this reader needs checked against the spec."""
    path = folder / f"{spec.name}.parquet"
    if not path.exists():
        raise _TableError("missing table")
    try:
        table = read_table(folder, spec)
    except (OSError, pa.ArrowException) as error:
        raise _TableError(f"not a Parquet table: {error}") from None
    for want in spec.schema:
        if want.name not in table.schema.names:
            raise _TableError(f"wrong schema: no column {want.name!r}")
        have = _values(table.schema.field(want.name).type)
        if have != _values(want.type):
            raise _TableError(
                f"wrong schema: column {want.name!r} is {have}, not {_values(want.type)}")
    rows: list[dict[str, Any]] = table.select(spec.column_names).to_pylist()
    return rows


def _values(kind: pa.DataType) -> pa.DataType:
    """A dictionary-encoded column counts as its values' type (Parquet may give either)."""
    return kind.value_type if pa.types.is_dictionary(kind) else kind


@dataclass(slots=True)
class RecordingReader:
    skipped: Skipped

    def read(self, folder: Path) -> list[LoggedSession]:
        speed, metadata = self._check_summary(folder)
        cancelling = _cancelling_tools(metadata)
        try:
            requests = _rows(folder, REQUESTS)
        except _TableError as error:
            self.skipped.add(str(folder / f"{REQUESTS.name}.parquet"), 0, str(error))
            return []
        try:
            calls = _rows(folder, TOOL_CALLS)
        except _TableError as error:
            self.skipped.add(str(folder / f"{TOOL_CALLS.name}.parquet"), 0, str(error))
            calls = []
        return self._sessions(folder, requests, calls, speed, cancelling)

    def _check_summary(self, folder: Path) -> tuple[float, dict[str, Any]]:
        """The server's speed (1 when it does not say) and the recording's metadata, from
        `recording.json`. The summary is not needed to read the tables, but a recording without
        a readable one is reported: it was cut short, or is not what it seems."""
        path = folder / RECORDING_FILE
        try:
            summary = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            self.skipped.add(str(path), 0, "missing recording summary")
            return 1.0, {}
        except (OSError, UnicodeDecodeError, ValueError) as error:
            self.skipped.add(str(path), 0, f"not JSON: {error}")
            return 1.0, {}
        if not isinstance(summary, dict):
            self.skipped.add(str(path), 0, "not a JSON object: a recording summary is one")
            return 1.0, {}
        given = summary.get("metadata")
        metadata: dict[str, Any] = given if isinstance(given, dict) else {}
        speed = metadata.get("speed", 1.0)
        if isinstance(speed, bool) or not isinstance(speed, int | float) \
                or not (math.isfinite(speed) and speed > 0):
            self.skipped.add(str(path), 0, f"bad speed: {speed!r} is no positive number; "
                             "the times are read at speed 1")
            return 1.0, metadata
        return float(speed), metadata

    def _sessions(self, folder: Path, requests: list[dict[str, Any]],
                  calls: list[dict[str, Any]], speed: float,
                  cancelling: frozenset[str]) -> list[LoggedSession]:
        where = str(folder / f"{REQUESTS.name}.parquet")
        ms = _Clock(speed)
        arrivals = {row["request_index"]: row["arrival_ns"] for row in requests}
        calls_of: dict[int, list[dict[str, Any]]] = {}
        for call in calls:
            calls_of.setdefault(call["request_index"], []).append(call)
        sessions: dict[int, LoggedSession] = {}
        for row in sorted(requests, key=lambda r: r["request_index"]):
            if row["session_id"] is None:
                self.skipped.add(where, row["request_index"],
                                 f"refused before the model: {row['first_violation'] or ''}")
                continue
            session = sessions.setdefault(row["session_id"], LoggedSession(
                str(folder), str(row["session_id"]), bodies_logged=False))
            step = _step(f"{where}:{row['request_index']}", row, calls_of, arrivals, ms)
            _mark_sibling_cancels(step.tool_calls, cancelling)
            _place_prompt(session, step)
            session.steps.append(step)
        return list(sessions.values())


@dataclass(frozen=True, slots=True)
class _Clock:
    """The recording's wall-clock nanoseconds as milliseconds of the scenario's time: times the
    server's speed (at 10, a second recorded is ten seconds of the scenario's)."""

    speed: float

    def __call__(self, ns: int | None) -> float | None:
        return None if ns is None else ns * self.speed / NS_PER_MS


def _step(where: str, row: dict[str, Any], calls_of: dict[int, list[dict[str, Any]]],
          arrivals: dict[int, int], _ms: _Clock) -> Step:
    answered = row["status"] == 200 and row["ending"] == "complete"
    status = row["status"]
    cause = f"HTTP {status}" if status not in (None, 200) else row["faults"] or ""
    step = Step(
        where=where, messages=[], model=row["model"], sent_ms=_ms(row["arrival_ns"]),
        last_block_ms=_ms(row["end_ns"]), api_error=None if answered else
        f"{row['ending']}: {cause}".rstrip(": "), response_logged=answered,
        server_violations=row["pairing_violations"],
    )
    for call in calls_of.get(row["request_index"], []):
        result = call["result_request_index"]
        step.tool_calls.append(ToolCall(
            call["tool_use_id"], call["name"], {}, where, use_ms=_ms(call["block_stop_ns"]),
            result_ms=None if result is None else _ms(arrivals.get(result)),
            is_error=bool(call["is_error"]), input_logged=False,
        ))
        step.blocks.append({"type": "tool_use", "id": call["tool_use_id"],
                            "name": call["name"], "input": {}})
    return step


def _cancelling_tools(metadata: dict[str, Any]) -> frozenset[str]:
    """Rule 7's tools: those of the served scenario marked `cancels_siblings`, when the
    recording names its file and the file is still there unchanged; else the default
    catalogue's."""
    path, digest = metadata.get("scenario_file"), metadata.get("scenario_sha256")
    specs: tuple[ToolSpec, ...] = catalogue("default")
    if isinstance(path, str) and Path(path).is_file() \
            and (digest is None or digest == file_sha256(Path(path))):
        try:
            specs = tuple(load_scenario(path).tool_specs)
        except UserError:
            pass  # a scenario file that no longer loads says nothing: the catalogue's
    return frozenset(spec.name for spec in specs if spec.cancels_siblings)


def _mark_sibling_cancels(calls: list[ToolCall], cancelling: frozenset[str]) -> None:
    """Rule 7: when a call of a tool that cancels its siblings erred, the batch's other error
    results are the client's own cancellations, not failures of their tools."""
    failed = next((call for call in calls if call.is_error and call.name in cancelling), None)
    if failed is None:
        return
    for call in calls:
        if call is not failed and call.is_error:
            call.sibling_cancelled = True


def _place_prompt(session: LoggedSession, step: Step) -> None:
    """Rule 4: a new prompt after a complete response without tool calls."""
    previous = next((s for s in reversed(session.steps) if s.has_response), None)
    if not session.prompts_ms or (
            previous is not None and not previous.tool_calls
            and previous is session.steps[-1]):
        session.prompts_ms.append(step.sent_ms)
    step.prompt_index = len(session.prompts_ms) - 1
