"""Collects the recording's rows as the server answers (`toolturn.wire.recording` says what they
mean). The server reports each request twice: when it arrives (`arrived`) and when its answer
is over (`answered`); requests refused before the model saw them come in once (`refused`).
Pure bookkeeping: times are given, nothing is written here (`toolturn.wire.record_files` writes).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from toolturn.metrics.schema import TableSpec
from toolturn.model.response import Turn
from toolturn.wire.recording import (
    RECOVERIES,
    REQUESTS,
    TOOL_CALLS,
    RecordedRequest,
    SentCall,
    blocks_of,
    classify,
)

GIVE_UP_NS = 60 * 1_000_000_000


class Recorder:
    """The rows of one recording, in memory."""

    def __init__(self, give_up_ns: int = GIVE_UP_NS) -> None:
        self.give_up_ns = give_up_ns
        self._requests: list[RecordedRequest] = []
        self._calls: list[dict[str, Any]] = []
        self._recoveries: list[dict[str, Any]] = []
        # Per session: its latest request, its pending fault (if any), its calls awaiting results.
        self._latest: dict[int, RecordedRequest] = {}
        self._pending: dict[int, RecordedRequest] = {}
        self._awaiting: dict[int, dict[str, dict[str, Any]]] = {}
        self._seen: dict[tuple[int, int], set[bytes]] = {}  # body digests per session and turn
        self._order: dict[str, int] = {}  # tool_use id -> its position among the calls sent
        self.changed = False

    def refused(self, arrival_ns: int, status: int, message: str) -> None:
        """A request answered before the model saw it (its body was not a request)."""
        self._add(RecordedRequest(self._row(arrival_ns, None, None, status=status, ending="refused",
                                     violations=[message]), [], b""))

    def arrived(self, arrival_ns: int, turn: Turn, model: str, messages: list[Any],
                raw: bytes, violations: Sequence[str]) -> int:
        """A request for the model; its index, to give `answered`."""
        digest = hashlib.blake2b(raw, digest_size=16).digest()
        seen = self._seen.setdefault((turn.session_id, turn.turn_index), set())
        request = RecordedRequest(self._row(arrival_ns, turn, model, violations=list(violations),
                                            messages=messages, retry=digest in seen),
                                  messages, digest)
        seen.add(digest)
        self._results_arrived(request, turn.session_id)
        pending = self._pending.pop(turn.session_id, None)
        if pending is not None:
            self._recover(pending, classify(pending, request), request)
            pending.messages = []
        latest = self._latest.get(turn.session_id)
        if latest is not None and latest.row["end_ns"] is not None:
            request.row["since_previous_response_ns"] = arrival_ns - latest.row["end_ns"]
        self._latest[turn.session_id] = request
        return self._add(request)

    def answered(self, index: int, *, status: int | None, ending: str, faults: Sequence[str],
                 end_ns: int, blocks: Sequence[dict[str, Any]] = (),
                 calls: Sequence[SentCall] = (), message_stop_ns: int | None = None) -> None:
        """The answer to request `index` is over: its status, the blocks and calls it sent."""
        request = self._requests[index]
        row = request.row
        row.update(status=status, ending=ending, faults=",".join(faults) or None, end_ns=end_ns)
        request.response_blocks = list(blocks)
        awaiting = self._awaiting.setdefault(row["session_id"], {})
        for call in calls:
            call_row = {
                "request_index": index, "session_id": row["session_id"],
                "turn_index": row["turn_index"], "attempt": row["attempt"],
                "tool_use_id": call.tool_use_id, "name": call.name,
                "block_stop_ns": call.block_stop_ns, "message_stop_ns": message_stop_ns,
                "result_request_index": None, "is_error": None, "result_position": None,
                "results_in_order": None, "round_trip_ns": None,
            }
            self._order.setdefault(call.tool_use_id, len(self._calls))
            self._calls.append(call_row)
            awaiting[call.tool_use_id] = call_row
        if faults:
            self._pending[row["session_id"]] = request
        else:
            request.messages = []  # only a faulted request is compared with the next one
        self.changed = True

    def give_up(self, now_ns: int | None = None) -> None:
        """Pending recoveries whose time is up (all of them when `now_ns` is None) gave up."""
        for session, request in list(self._pending.items()):
            end = request.row["end_ns"]
            if now_ns is None or (end is not None and now_ns - end >= self.give_up_ns):
                del self._pending[session]
                self._recover(request, "gave_up", None)

    def tables(self) -> dict[str, pa.Table]:
        rows = {REQUESTS.name: [r.row for r in self._requests], TOOL_CALLS.name: self._calls,
                RECOVERIES.name: self._recoveries}
        return {spec.name: _table(spec, rows[spec.name]) for spec in
                (REQUESTS, TOOL_CALLS, RECOVERIES)}

    # ----- rows -----

    def _row(
        self,
        arrival_ns: int,
        turn: Turn | None,
        model: str | None,
        *,
        violations: list[str],
        status: int | None = None,
        ending: str = "aborted",
        messages: list[Any] | None = None,
        retry: bool = False,
    ) -> dict[str, Any]:
        return {
            "request_index": len(self._requests), "arrival_ns": arrival_ns,
            "session_id": None if turn is None else turn.session_id,
            "turn_index": None if turn is None else turn.turn_index,
            "attempt": None if turn is None else turn.attempt, "model": model,
            "status": status, "ending": ending, "faults": None,
            "message_count": None if messages is None else len(messages),
            "pairing_violations": len(violations) if turn is not None else 0,
            "first_violation": violations[0] if violations else None, "retry": retry,
            "since_previous_response_ns": None, "end_ns": None if turn else arrival_ns,
        }

    def _add(self, request: RecordedRequest) -> int:
        self._requests.append(request)
        self.changed = True
        return int(request.row["request_index"])

    def _results_arrived(self, request: RecordedRequest, session: int) -> None:
        awaiting = self._awaiting.get(session)
        if not awaiting:
            return
        for message in request.messages:
            if not (isinstance(message, dict) and message.get("role") == "user"):
                continue
            results = [b for b in blocks_of([message], "user") if b.get("type") == "tool_result"]
            ids = [b.get("tool_use_id") for b in results]
            for position, block in enumerate(results):
                call = awaiting.pop(str(block.get("tool_use_id")), None)
                if call is None:
                    continue
                order = [c for c in ids if isinstance(c, str)]
                call.update(
                    result_request_index=request.row["request_index"],
                    is_error=bool(block.get("is_error", False)), result_position=position,
                    results_in_order=order == sorted(
                        order, key=lambda i: self._order.get(i, len(self._order))),
                    round_trip_ns=None if call["block_stop_ns"] is None
                    else request.row["arrival_ns"] - call["block_stop_ns"],
                )

    def _recover(
        self, faulted: RecordedRequest, recovery: str, following: RecordedRequest | None
    ) -> None:
        row = faulted.row
        self._recoveries.append({
            "request_index": row["request_index"], "session_id": row["session_id"],
            "turn_index": row["turn_index"], "attempt": row["attempt"],
            "faults": row["faults"], "recovery": recovery,
            "next_request_index": None if following is None else following.row["request_index"],
            "delay_ns": None if following is None or row["end_ns"] is None
            else following.row["arrival_ns"] - row["end_ns"],
        })
        self.changed = True


def _table(spec: TableSpec, rows: list[dict[str, Any]]) -> pa.Table:
    columns = {name: [row[name] for row in rows] for name in spec.column_names}
    return pa.Table.from_pydict(columns, schema=spec.schema)
