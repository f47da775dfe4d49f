"""The observable record: an append-only, timed log of what happened in one session.

Metrics (time-to-first-tool-start, start lag, repair frequency, wasted work) are computed from
this record later; the runtime only appends. Entries are frozen and small. To keep the loop
cheap at hundreds of thousands of events per second, the only per-event entries are the first
event of a response and each completed block; everything else is per call, per request or per
turn.

Every entry carries the session-relative `turn` (1 for the first request's turn) and `attempt`
(1 for a turn's first request) current when it was written.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple


class RecordKind(str, Enum):
    """What an entry records."""

    REQUEST_SENT = "request_sent"
    FIRST_EVENT = "first_event"
    BLOCK_COMPLETE = "block_complete"
    # A tool_use block whose id an earlier block of the same response has: not run.
    DUPLICATE_TOOL_USE = "duplicate_tool_use"
    TOOL_QUEUED = "tool_queued"
    PERMISSION_ASKED = "permission_asked"
    TOOL_STARTED = "tool_started"
    TOOL_ENDED = "tool_ended"
    # A call's result was handed over to the transcript.
    RESULT = "result"
    SYNTHETIC_RESULT = "synthetic_result"
    # A running call of an abandoned attempt: work done for nothing.
    WASTED_EXECUTION = "wasted_execution"
    REPAIR = "repair"
    TOMBSTONE = "tombstone"
    ATTACHMENT_APPENDED = "attachment_appended"
    REQUEST_FAILED = "request_failed"
    STREAM_ERROR = "stream_error"
    RETRY = "retry"
    FALLBACK = "fallback"
    INTERRUPT = "interrupt"
    TURN_END = "turn_end"
    # The transcript was replaced (loop rule 16); `detail` names why: crash, rewind, compaction.
    RESUME = "resume"
    # A call that had started before a crash and whose result never reached the persisted
    # transcript (written by the driver that persists it: `sim.engine.session_faults`).
    WORK_LOST = "work_lost"
    SESSION_END = "session_end"


class RecordEntry(NamedTuple):
    """One thing that happened: when, what, in which turn and attempt, and what it is about
    (the call's id and tool name, a detail and a number, as the kind says)."""

    # A named tuple, not a frozen dataclass: as immutable, and three times cheaper to make (the
    # loop writes several per tool call).
    time_ns: int
    kind: RecordKind
    turn: int
    attempt: int
    tool_use_id: str | None = None
    # A tool name, a model name, a block type: whatever the kind is about.
    name: str | None = None
    # The kind's qualifier: an outcome, a synthetic cause, a repair kind, a stop reason.
    detail: str | None = None
    # The kind's number: a block index, an HTTP status, a backoff in ns, a count.
    value: int | None = None


class Record:
    """Append-only list of entries, stamped with the current turn and attempt."""

    __slots__ = ("attempt", "entries", "turn")

    def __init__(self) -> None:
        self.entries: list[RecordEntry] = []
        self.turn = 0
        self.attempt = 0

    def add(
        self,
        time_ns: int,
        kind: RecordKind,
        *,
        tool_use_id: str | None = None,
        name: str | None = None,
        detail: str | None = None,
        value: int | None = None,
    ) -> None:
        """Append an entry at `time_ns`, stamped with the current turn and attempt."""
        self.entries.append(
            RecordEntry(time_ns, kind, self.turn, self.attempt, tool_use_id, name, detail, value)
        )

    def of_kind(self, kind: RecordKind) -> list[RecordEntry]:
        """The entries of one kind, in the order they were written."""
        return [entry for entry in self.entries if entry.kind is kind]
