"""Collects the recording's rows as the server answers (`toolturn.wire.recording` says what they
mean). The server reports each request twice: when it arrives (`arrived`) and when its answer
is over (`answered`); requests refused before the model saw them come in once (`refused`).
Pure bookkeeping: times are given, nothing is written here (`toolturn.wire.record_files` writes).

A row is final once nothing later can change it: a request's once it is answered, a call's once
its result came (or it can no longer come), a recovery's as it is decided. Final rows wait in
memory until `new_rows` hands them to the writer, and are then forgotten; what stays is only
what a later request can still change: the requests in flight, and per live session its latest
turn's body digests (a retry repeats them), when its latest answer ended, its open fault (with
that request's messages, to compare with the next) and its calls awaiting results. So memory
follows the sessions in progress, not the length of the recording.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from toolturn.metrics.schema import TableSpec
from toolturn.model.response import Turn
from toolturn.wire.codecs import ANTHROPIC
from toolturn.wire.identity import recorded_session_id, turn_number
from toolturn.wire.next_step import STOPPED, Asked, WrittenCall, blocks_of, next_step
from toolturn.wire.recording import (
    RECOVERIES,
    REQUESTS,
    TABLES,
    TOOL_CALLS,
    RecordedRequest,
    rows_table,
)
from toolturn.wire.sent import SentCall

GIVE_UP_NS = 60 * 1_000_000_000
Rows = dict[str, list[dict[str, Any]]]


@dataclass(slots=True, eq=False)  # one block: told apart by identity, not by value
class _Call:
    """A call awaiting its result: its row, and the name and input it was sent with (to tell
    which of two blocks with one id the client kept)."""

    row: dict[str, Any]
    name: str
    input: Any


@dataclass(slots=True)
class _Session:
    """What a later request of one session can still change or needs."""

    last_ns: int  # its latest arrival or answer's end: a session quiet for `give_up_ns` is over
    turn_index: int | None = None
    digests: set[bytes] = field(default_factory=set)  # of its latest turn's bodies
    latest_index: int | None = None
    latest_end_ns: int | None = None  # None: its latest request is in flight
    in_flight: int = 0
    pending: RecordedRequest | None = None
    awaiting: list[_Call] = field(default_factory=list)  # in the order sent


class Recorder:
    """The rows of one recording that are not written yet, and the state that makes them."""

    def __init__(self, give_up_ns: int = GIVE_UP_NS) -> None:
        self.give_up_ns = give_up_ns
        self._count = 0  # requests numbered so far
        self._in_flight: dict[int, RecordedRequest] = {}
        self._sessions: dict[int, _Session] = {}
        self._new: Rows = {spec.name: [] for spec in TABLES}
        self.changed = False

    def refused(self, arrival_ns: int, status: int, message: str, *,
                protocol: str = ANTHROPIC) -> None:
        """A request answered before the model saw it (its body was not a request), posted
        to the endpoint of `protocol`."""
        row = self._row(arrival_ns, None, None, status=status, ending="refused",
                        violations=[message], protocol=protocol)
        self._final(REQUESTS, row)

    def arrived(self, arrival_ns: int, turn: Turn, model: str, messages: list[Any],
                raw: bytes, violations: Sequence[str], *, protocol: str = ANTHROPIC,
                streamed: bool = False) -> int:
        """A request for the model, in the wire protocol `protocol` (`messages` in the
        Messages shape whatever the protocol; `streamed`: asked with `stream: true`); its
        index, to give `answered`."""
        digest = hashlib.blake2b(raw, digest_size=16).digest()
        # Two client runs' session 7 are two sessions (`toolturn.wire.identity`, rule 2a).
        session_id = recorded_session_id(turn)
        session = self._sessions.get(session_id)
        if session is None:
            session = self._sessions[session_id] = _Session(arrival_ns)
        if session.turn_index != turn.turn_index:  # only the latest turn is retried
            session.turn_index, session.digests = turn.turn_index, set()
        asked = Asked(digest, messages, streamed, bool(violations))
        request = RecordedRequest(self._row(arrival_ns, turn, model, violations=list(violations),
                                            messages=messages, retry=digest in session.digests,
                                            protocol=protocol),
                                  asked)
        session.digests.add(digest)
        self._results_arrived(request, session)
        follower = (int(request.row["request_index"]), arrival_ns, asked)
        if session.pending is not None:
            self._recover(session.pending, follower)
            session.pending = None
        open_answer = (None if session.latest_end_ns is not None or session.latest_index is None
                       else self._in_flight.get(session.latest_index))
        if open_answer is not None and open_answer.follower is None:
            open_answer.follower = follower  # compared once that answer ends
        if session.latest_end_ns is not None:
            request.row["since_previous_response_ns"] = arrival_ns - session.latest_end_ns
        index = int(request.row["request_index"])
        session.latest_index, session.latest_end_ns = index, None
        session.in_flight += 1
        session.last_ns = arrival_ns
        self._in_flight[index] = request
        self.changed = True
        return index

    def answered(self, index: int, *, status: int | None, ending: str, faults: Sequence[str],
                 end_ns: int, calls: Sequence[SentCall] = (), message_stop_ns: int | None = None,
                 first_byte_ns: int | None = None, bytes_sent: int = 0) -> None:
        """The answer to request `index` is over: its status line (None: none was sent), how it
        ended, the calls it wrote, when its first body byte went and how many."""
        request = self._in_flight.pop(index)
        row = request.row
        row.update(status=status, ending=ending, faults=",".join(faults) or None, end_ns=end_ns,
                   first_byte_ns=first_byte_ns, bytes_sent=bytes_sent,
                   time_to_first_byte_ns=None if first_byte_ns is None
                   else first_byte_ns - row["arrival_ns"])
        self._final(REQUESTS, row)
        session = self._sessions[row["session_id"]]
        session.in_flight -= 1
        session.last_ns = max(session.last_ns, end_ns)
        if session.latest_index == index:
            session.latest_end_ns = end_ns
        self._sent_calls(session, row, calls, message_stop_ns)
        if not faults:
            request.asked = None
        elif request.follower is not None:  # the next request came while this was open
            # It was sent knowing only what had been written before it arrived.
            request.written = _written(calls, before_ns=request.follower[1])
            self._recover(request, request.follower)
        else:
            request.written = _written(calls)
            session.pending = request  # compared with the session's next request

    def give_up(self, now_ns: int | None = None) -> None:
        """Pending recoveries whose time is up gave up, and sessions quiet that long are over
        (all of them when `now_ns` is None: the end of the recording)."""
        for session_id, session in list(self._sessions.items()):
            pending = session.pending
            if pending is not None and (now_ns is None or now_ns - pending.row["end_ns"]
                                        >= self.give_up_ns):
                session.pending = None
                self._recover(pending, None)
            if session.pending is None and session.in_flight == 0 and (
                    now_ns is None or now_ns - session.last_ns >= self.give_up_ns):
                for call in session.awaiting:
                    self._final(TOOL_CALLS, call.row)  # its result can no longer come
                del self._sessions[session_id]

    def held(self) -> dict[str, int]:
        """What is in memory now: sessions in progress, requests in flight, calls awaiting
        results and final rows not yet handed over (flat under a steady load)."""
        return {"sessions": len(self._sessions), "in_flight": len(self._in_flight),
                "awaiting": sum(len(s.awaiting) for s in self._sessions.values()),
                "unwritten": sum(len(rows) for rows in self._new.values())}

    def new_rows(self) -> Rows:
        """The rows made final since the last call, by table, each in its key's order; they
        leave memory here."""
        rows, self._new = self._new, {spec.name: [] for spec in TABLES}
        return {spec.name: _sorted(spec, rows[spec.name]) for spec in TABLES}

    def open_rows(self) -> Rows:
        """The rows a later request can still change, as they stand: the requests in flight
        (ending `aborted` so far) and the calls awaiting results."""
        calls = [call.row for session in self._sessions.values() for call in session.awaiting]
        return {REQUESTS.name: _sorted(REQUESTS, [r.row for r in self._in_flight.values()]),
                TOOL_CALLS.name: _sorted(TOOL_CALLS, calls), RECOVERIES.name: []}

    def tables(self) -> dict[str, pa.Table]:
        """The rows held (final ones not yet handed over, then the open ones) as tables, each in
        its key's order: the whole recording when nothing was handed over (`toolturn probe`)."""
        held = self._new
        open_rows = self.open_rows()
        return {spec.name: rows_table(spec, _sorted(spec, held[spec.name] + open_rows[spec.name]))
                for spec in TABLES}

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
        protocol: str = ANTHROPIC,
    ) -> dict[str, Any]:
        index = self._count
        self._count += 1
        return {
            "request_index": index, "arrival_ns": arrival_ns,
            "session_id": None if turn is None else recorded_session_id(turn),
            "turn_index": None if turn is None else turn_number(turn),  # from 1
            "attempt": None if turn is None else turn.attempt, "model": model,
            "status": status, "ending": ending, "faults": None,
            "message_count": None if messages is None else len(messages),
            "pairing_violations": len(violations) if turn is not None else 0,
            "first_violation": violations[0] if violations else None, "retry": retry,
            "since_previous_response_ns": None, "end_ns": None if turn else arrival_ns,
            "first_byte_ns": None, "time_to_first_byte_ns": None, "bytes_sent": 0,
            "protocol": protocol,
        }

    def _final(self, spec: TableSpec, row: dict[str, Any]) -> None:
        self._new[spec.name].append(row)
        self.changed = True

    def _sent_calls(self, session: _Session, row: dict[str, Any], calls: Sequence[SentCall],
                    message_stop_ns: int | None) -> None:
        ids = [call.tool_use_id for call in calls]
        # A call whose id a later response sends again is superseded: its result, if one comes,
        # is the later block's (the transcript carries one block of an id).
        superseded = [c for c in session.awaiting if c.row["tool_use_id"] in set(ids)]
        for old in superseded:
            self._final(TOOL_CALLS, old.row)
        session.awaiting = [c for c in session.awaiting if c not in superseded]
        for position, call in enumerate(calls):
            session.awaiting.append(_Call({
                "request_index": row["request_index"], "session_id": row["session_id"],
                "turn_index": row["turn_index"], "attempt": row["attempt"],
                "tool_use_id": call.tool_use_id, "name": call.name,
                "block_index": position if call.block_index is None else call.block_index,
                "duplicate_id": ids.count(call.tool_use_id) > 1,
                "block_stop_ns": call.block_stop_ns, "message_stop_ns": message_stop_ns,
                "result_request_index": None, "is_error": None, "result_position": None,
                "results_in_order": None, "round_trip_ns": None,
            }, call.name, call.input))

    def _results_arrived(self, request: RecordedRequest, session: _Session) -> None:
        """Match the results `request` carries to the blocks awaiting them."""
        if not session.awaiting:
            return
        assert request.asked is not None  # a request just arrived is kept
        messages = request.asked.messages
        answered: list[_Call] = []
        for number, message in enumerate(messages):
            if not (isinstance(message, dict) and message.get("role") == "user"):
                continue
            results = [b for b in blocks_of([message], "user") if b.get("type") == "tool_result"]
            if not results:
                continue
            echo = blocks_of(messages[number - 1:number], "assistant") if number else []
            kept = _kept_blocks(echo, session.awaiting)
            found: list[tuple[int, dict[str, Any], _Call]] = []
            for position, block in enumerate(results):
                call = _answered_block(block, kept, session.awaiting, [c for _, _, c in found])
                if call is not None:
                    found.append((position, block, call))
            order = [(c.row["request_index"], c.row["block_index"]) for _, _, c in found]
            for position, block, call in found:
                session.awaiting.remove(call)
                call.row.update(
                    result_request_index=request.row["request_index"],
                    is_error=bool(block.get("is_error", False)), result_position=position,
                    results_in_order=order == sorted(order),
                    round_trip_ns=None if call.row["block_stop_ns"] is None
                    else request.row["arrival_ns"] - call.row["block_stop_ns"],
                )
                self._final(TOOL_CALLS, call.row)
                answered.append(call)
        if answered:
            # The transcript moved past the responses before the newest answered one: their
            # calls still awaiting will not be answered.
            newest = max(call.row["request_index"] for call in answered)
            for call in [c for c in session.awaiting if c.row["request_index"] < newest]:
                session.awaiting.remove(call)
                self._final(TOOL_CALLS, call.row)

    def _recover(self, faulted: RecordedRequest,
                 following: tuple[int, int, Asked] | None) -> None:
        """Decide the recovery of `faulted` from the session's next request (None: none came),
        with the classifier the probe uses (`toolturn.wire.next_step`)."""
        row = faulted.row
        assert faulted.asked is not None  # kept while its recovery is pending
        recovery = (STOPPED if following is None
                    else next_step(faulted.asked, faulted.written, following[2]))
        faulted.asked, faulted.written, faulted.follower = None, [], None
        self.recovered(int(row["request_index"]), recovery)
        self._final(RECOVERIES, {
            "request_index": row["request_index"], "session_id": row["session_id"],
            "turn_index": row["turn_index"], "attempt": row["attempt"],
            "faults": row["faults"], "recovery": recovery,
            "next_request_index": None if following is None else following[0],
            # Negative when the next request came while this answer was still open.
            "delay_ns": None if following is None or row["end_ns"] is None
            else following[1] - row["end_ns"],
        })

    def recovered(self, index: int, recovery: str) -> None:
        """Request `index`'s recovery was decided: `recovery` (a hook for a reader that needs
        the decision as it is made, as the probe does; nothing here)."""


def _written(calls: Sequence[SentCall], before_ns: int | None = None) -> list[WrittenCall]:
    """The calls as the classes read them: those written (before `before_ns`, when given),
    completed if their block stop was written (before it too)."""
    if before_ns is None:
        return [WrittenCall(call.tool_use_id, call.block_stop_ns is not None) for call in calls]
    return [WrittenCall(call.tool_use_id, call.block_stop_ns is not None
                        and call.block_stop_ns < before_ns)
            for call in calls if call.block_start_ns is None or call.block_start_ns < before_ns]


def _kept_blocks(echo: list[dict[str, Any]], awaiting: list[_Call]) -> list[_Call]:
    """The awaiting calls the client kept, from the tool_use blocks of the assistant message it
    sent back (in its order): each echoed block is the awaiting block of its id with the same
    name and input, else the first of its id not yet taken."""
    kept: list[_Call] = []
    for block in echo:
        if block.get("type") != "tool_use":
            continue
        same_id = [c for c in awaiting
                   if c.row["tool_use_id"] == block.get("id") and c not in kept]
        exact = [c for c in same_id
                 if c.name == block.get("name") and c.input == block.get("input")]
        if exact or same_id:
            kept.append((exact or same_id)[0])
    return kept


def _answered_block(result: dict[str, Any], kept: list[_Call], awaiting: list[_Call],
                    taken: list[_Call]) -> _Call | None:
    """The awaiting block a tool_result answers (none of `taken`, the blocks earlier results of
    its message answer): the first kept block of its id, else the first awaiting one of its id
    (the client sent no assistant message before it)."""
    tool_use_id = str(result.get("tool_use_id"))
    for calls in (kept, awaiting):
        for call in calls:
            if call.row["tool_use_id"] == tool_use_id and call in awaiting and call not in taken:
                return call
    return None


def _sorted(spec: TableSpec, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda row: tuple(row[name] for name in spec.sort_key))
