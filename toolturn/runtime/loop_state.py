"""The state of a `toolturn.runtime.loop.ToolTurnLoop`, one object per lifetime, each made
anew when its lifetime begins rather than reset field by field:

- `SessionState`: the session's, beyond what the loop shows its callers (the transcript, the
  record, the request count, the phase: the loop's own attributes); made with the loop.
- `TurnState`: one turn, across its attempts (retries and fallbacks); a new one per turn.
- `AttemptState`: one request attempt, its response stream and the tool calls it started; a
  new one per request sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from toolturn.runtime.accumulator import ResponseSummary, StreamAccumulator
from toolturn.runtime.attachments import Attachment
from toolturn.runtime.executor import ToolExecutor
from toolturn.runtime.pairing import PairingMonitor

__all__ = ["AttemptState", "EndReason", "SessionState", "TurnState"]


class EndReason(str, Enum):
    """The loop's own reasons for a session's end (otherwise it is the last stop reason)."""

    MAX_TURNS = "max_turns"
    REQUEST_FAILED = "request_failed"
    STREAM_ERROR = "stream_error"
    INTERRUPTED = "interrupted"


@dataclass(slots=True)
class SessionState:
    """What lives as long as the session, behind the loop's own attributes."""

    # Rule 2a: every tool_use id the transcript holds; the ids it holds twice on purpose
    # (`unchecked`).
    transcript_ids: set[str]
    unchecked: set[str] = field(default_factory=set)
    # Checks each request's transcript from where the last check left off (rule 1).
    pairing: PairingMonitor = field(default_factory=PairingMonitor)
    # Turns so far, and turns of the current prompt's chain (`max_turns` bounds these).
    turn: int = 0
    chain_turns: int = 0
    # When a backoff ends (rules 6-8).
    wake_ns: int = 0
    # Attachments waiting for the next user message.
    pending: list[Attachment] = field(default_factory=list)
    # The summaries of the requests before the current one; every attempt's executor, and the
    # executor that owns each tool_use id.
    summaries: list[ResponseSummary] = field(default_factory=list)
    executors: list[ToolExecutor] = field(default_factory=list)
    owner: dict[str, ToolExecutor] = field(default_factory=dict)
    # The keys of calls withdrawn by a misfire (rule 17) and not added again: a report about
    # one is about the cancelled run, and ignored.
    withdrawn: set[str] = field(default_factory=set)


@dataclass(slots=True)
class TurnState:
    """One turn's attempts and how it ends."""

    # Requests sent for the turn; failures since the last fallback that were retried (rule 7)
    # and that were overloads (rule 8).
    attempt: int = 0
    retries: int = 0
    overloaded: int = 0
    # Rule 6a: retries of the inner layer since the last event or outer-layer failure.
    request_retries: int = 0
    # Why the session ends with this turn (None: it goes on); the turn's own stop reason when a
    # cut does not end the session (rules 9b, 9c), and the user text the next turn carries
    # (9c, 5a).
    end_reason: EndReason | None = None
    turn_reason: EndReason | None = None
    continuation: str | None = None


@dataclass(slots=True)
class AttemptState:
    """One request attempt: its stream, its executor and the results handed over so far."""

    executor: ToolExecutor
    accumulator: StreamAccumulator = field(default_factory=StreamAccumulator)
    # When its message_stop came.
    message_stop_ns: int | None = None
    # Rule 9h (a profile with an idle limit): when its last event came, and the time of the
    # latest wake asked for to check the silence.
    last_event_ns: int = 0
    idle_wake_ns: int = 0
    results: list[dict[str, Any]] = field(default_factory=list)
    # Rule 2a: the block indexes of its duplicate tool_use ids (left out of the transcript);
    # the ids whose results are left out.
    duplicates: set[int] = field(default_factory=set)
    shadowed: set[str] = field(default_factory=set)
    # The executor's key of each tool_use block given to it, by block index (rule 17 withdraws
    # the call of a block).
    keys: dict[int, str] = field(default_factory=dict)
