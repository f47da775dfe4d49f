"""The observable record: an append-only, timed log of what happened in one session.

Metrics (time-to-first-tool-start, start lag, repair frequency, wasted work) are computed from
this record later; the runtime only appends. To keep the loop cheap at hundreds of thousands of
events per second, the only per-event entries are the first event of a response and each
completed block; everything else is per call, per request or per turn.

1. Each kind of entry is its own immutable class, with the fields that kind has and no other
   (as h11 states each event of HTTP/1.1); `RecordEntry` is any of them. A reader tells kinds
   apart by class (`type(entry) is ToolStarted`) and reads named, typed fields.
2. Every entry begins with `time_ns` (when it happened, in the caller's nanoseconds), `turn`
   (session-relative, 1 for the first request's turn) and `attempt` (1 for a turn's first
   request): the turn and attempt current when it was written, stamped by `Record.add`, so a
   writer gives only the time and the kind's own fields.
3. A tool name is `tool_name`, a call's id `tool_use_id`, a content block's position in its
   response `block_index`, a model's name `model`; enums of the runtime (outcomes, causes,
   repairs, attachments) are kept as the enum.

Each kind is a `NamedTuple`: the cheapest immutable form measured. Callgrind, `make bench-icount`
(bare runtime, instructions per stream event, 20 sessions of default.toml; the generic entry this
replaced: 7,783): named tuple per kind 7,612, frozen slotted dataclass 8,354 (each field set through
`object.__setattr__`), class with `__slots__` 7,570 (cheaper by half a percent, but its entries
could be changed after they are written). The loop writes several entries per tool call. A named
tuple equals a plain tuple, or an entry of another kind, with the same values: tell kinds apart by
class, never compare entries of two kinds by value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Concatenate, NamedTuple, ParamSpec, TypeVar

from toolturn.runtime.attachments import AttachmentKind
from toolturn.runtime.outcomes import CallOutcome, SyntheticCause
from toolturn.runtime.pairing import RepairKind

# ----- requests and responses -----


class RequestSent(NamedTuple):
    """A request went out, to `model`; its `attempt` is the turn's attempt number."""

    time_ns: int
    turn: int
    attempt: int
    model: str


class RequestFailed(NamedTuple):
    """The request to `model` failed before any event arrived: its HTTP `status`, or None when
    there was no response at all (a connection error, or a stream that closed empty)."""

    time_ns: int
    turn: int
    attempt: int
    model: str
    status: int | None


class FirstEvent(NamedTuple):
    """The response's first stream event arrived; `event_type` is its "type" (None when it had
    none: the stream is then cut as malformed)."""

    time_ns: int
    turn: int
    attempt: int
    event_type: str | None


class BlockComplete(NamedTuple):
    """A content block of the response completed: its `block_type` ("text", "tool_use", ...),
    its `block_index` in the response, and for a tool_use block its `tool_use_id` (else None)."""

    time_ns: int
    turn: int
    attempt: int
    block_type: str
    block_index: int
    tool_use_id: str | None


class DuplicateToolUse(NamedTuple):
    """A tool_use block (at `block_index`) whose `tool_use_id` an earlier block of the response,
    or the transcript, already has (loop rule 2a)."""

    time_ns: int
    turn: int
    attempt: int
    tool_use_id: str
    tool_name: str
    block_index: int


class StreamError(NamedTuple):
    """The response stream broke: `reason` names how ("stream_cut", the `error` event's type, or
    the protocol error's message)."""

    time_ns: int
    turn: int
    attempt: int
    reason: str


class Tombstone(NamedTuple):
    """A completed block (`block_type`, at `block_index`) of an attempt given up for a retry or a
    fallback: it never reaches the transcript."""

    time_ns: int
    turn: int
    attempt: int
    block_type: str
    block_index: int


class Retry(NamedTuple):
    """The attempt to `model` is retried after a backoff of `delay_ns`."""

    time_ns: int
    turn: int
    attempt: int
    model: str
    delay_ns: int


class Fallback(NamedTuple):
    """The turn falls back to `model` after `overloaded` overloaded failures in a row."""

    time_ns: int
    turn: int
    attempt: int
    model: str
    overloaded: int


# ----- tool calls -----


class ToolQueued(NamedTuple):
    """A call (`tool_use_id` of `tool_name`) is queued to run."""

    time_ns: int
    turn: int
    attempt: int
    tool_use_id: str
    tool_name: str


class PermissionAsked(NamedTuple):
    """The user is asked whether a call (`tool_use_id` of `tool_name`) may run."""

    time_ns: int
    turn: int
    attempt: int
    tool_use_id: str
    tool_name: str


class ToolStarted(NamedTuple):
    """A call (`tool_use_id` of `tool_name`) started running."""

    time_ns: int
    turn: int
    attempt: int
    tool_use_id: str
    tool_name: str


class ToolEnded(NamedTuple):
    """A call (`tool_use_id` of `tool_name`) ended, with `outcome`."""

    time_ns: int
    turn: int
    attempt: int
    tool_use_id: str
    tool_name: str
    outcome: CallOutcome


class SyntheticResult(NamedTuple):
    """The runtime, not the tool, made a call's result (`tool_use_id` of `tool_name`), for
    `cause`."""

    time_ns: int
    turn: int
    attempt: int
    tool_use_id: str
    tool_name: str
    cause: SyntheticCause


class ResultHandedOver(NamedTuple):
    """A call's result (`tool_use_id` of `tool_name`) was handed over to the transcript."""

    time_ns: int
    turn: int
    attempt: int
    tool_use_id: str
    tool_name: str


class WastedExecution(NamedTuple):
    """A running call (`tool_use_id` of `tool_name`) of an abandoned attempt: work done for
    nothing."""

    time_ns: int
    turn: int
    attempt: int
    tool_use_id: str
    tool_name: str


class CallRetracted(NamedTuple):
    """A call (`tool_use_id` of `tool_name`) left its batch because its speculative start
    misfired: its arguments changed after they parsed (executor rule 14). Its block is
    completed again later and that call is added anew."""

    time_ns: int
    turn: int
    attempt: int
    tool_use_id: str
    tool_name: str


class WorkLost(NamedTuple):
    """A call (`tool_use_id` of `tool_name`) that had started before a crash and whose result
    never reached the persisted transcript (written by the driver that persists it:
    `toolturn.engine.session_faults`)."""

    time_ns: int
    turn: int
    attempt: int
    tool_use_id: str
    tool_name: str


# ----- the transcript and the turn -----


class Repaired(NamedTuple):
    """The transcript was repaired before a request: `repair` says how, `tool_use_id` names the
    call it was about (None for a block without one), `message_index` the message it touched."""

    time_ns: int
    turn: int
    attempt: int
    tool_use_id: str | None
    repair: RepairKind
    message_index: int


class AttachmentAppended(NamedTuple):
    """An attachment of `kind`, arrived at `arrived_ns`, was appended to the transcript."""

    time_ns: int
    turn: int
    attempt: int
    kind: AttachmentKind
    arrived_ns: int


class Interrupt(NamedTuple):
    """The user interrupted; `phase` is the loop's phase then (a `Phase` value)."""

    time_ns: int
    turn: int
    attempt: int
    phase: str


class TurnEnd(NamedTuple):
    """The turn ended, with `stop_reason` (the API's stop reason, the loop's own reason, or the
    cause of a resume that cut it), after `tool_calls` calls."""

    time_ns: int
    turn: int
    attempt: int
    stop_reason: str
    tool_calls: int


class Resume(NamedTuple):
    """The transcript was replaced (loop rule 16) by one of `messages` messages; `cause` says
    why: crash, rewind, compaction."""

    time_ns: int
    turn: int
    attempt: int
    cause: str
    messages: int


class SessionEnd(NamedTuple):
    """The chain of turns ended, for `reason` (the loop's reason or the last stop reason; the
    driver's `broken_transcript` when strict mode stopped a resumed session)."""

    time_ns: int
    turn: int
    attempt: int
    reason: str


RecordEntry = (
    RequestSent | RequestFailed | FirstEvent | BlockComplete | DuplicateToolUse | StreamError
    | Tombstone | Retry | Fallback | ToolQueued | PermissionAsked | ToolStarted | ToolEnded
    | SyntheticResult | ResultHandedOver | WastedExecution | CallRetracted | WorkLost | Repaired
    | AttachmentAppended | Interrupt | TurnEnd | Resume | SessionEnd
)

_Fields = ParamSpec("_Fields")
_Entry = TypeVar("_Entry", bound=tuple[object, ...])


class Record:
    """Append-only list of entries, stamped with the current turn and attempt."""

    __slots__ = ("attempt", "entries", "turn")

    def __init__(self) -> None:
        self.entries: list[RecordEntry] = []
        self.turn = 0
        self.attempt = 0

    def add(
        self,
        kind: Callable[Concatenate[int, int, int, _Fields], RecordEntry],
        time_ns: int,
        /,
        *fields: _Fields.args,
        **named: _Fields.kwargs,
    ) -> None:
        """Append an entry of `kind` at `time_ns`, stamped with the current turn and attempt
        (rule 2); `fields` are the kind's own, after those three."""
        self.entries.append(kind(time_ns, self.turn, self.attempt, *fields, **named))

    def of_kind(self, kind: type[_Entry]) -> list[_Entry]:
        """The entries of one kind, in the order they were written."""
        return [entry for entry in self.entries if isinstance(entry, kind)]
