"""Commands: the work the runtime hands to its driver, as frozen data.

The executor and the loop never start a tool, open a connection or sleep; they return these
commands and the driver (the simulator, an asyncio program, a unit test) carries them out and
reports back through the runtime's input methods, passing the current time as `now_ns`.

Commands for the driver to act on:

- `StartTool`: run this call now.
- `CancelTool`: stop this call; its result has already been decided (the driver's later report
  for it is accepted and ignored).
- `AskPermission`: ask whoever decides (a user, a policy service) whether this call may run, and
  report the answer with `permission_decided`.
- `SendRequest`: send this Messages API request (streaming) and feed its events back; it says
  how the body fares against the API's pairing rules.
- `CancelRequest`: stop reading the current response stream (user interrupt).
- `WaitUntil`: call `wake(now_ns)` at this time (retry backoff).

Notifications for observers (nothing to do, but worth showing a user):

- `ToolProgress`: a running call reported progress. Progress never becomes a result.
- `ResultReady`: a call's tool_result block was handed over to the transcript's next user message.
- `DiscardedResult`: a call of an abandoned attempt ended with this (synthetic) result, or a
  misfired call's result was handed over before its arguments changed: the loop drops it.
- `TurnEnded`, `SessionEnded`: the end of one model request and its tools, of the whole chain.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolturn.runtime.outcomes import SyntheticCause


@dataclass(frozen=True, slots=True)
class StartTool:
    """Run this call now, with this input (the executor has admitted it)."""

    tool_use_id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True, slots=True)
class CancelTool:
    """Stop this call (running, or awaiting a permission answer); its result is already
    decided, and the driver's later report for it is accepted and ignored."""

    tool_use_id: str
    reason: SyntheticCause


@dataclass(frozen=True, slots=True)
class AskPermission:
    """Ask whoever decides whether this call may run; answer with `permission_decided`."""

    tool_use_id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolProgress:
    """A running call reported progress: for observers, never a result."""

    tool_use_id: str
    name: str
    progress: Any


@dataclass(frozen=True, slots=True)
class ResultReady:
    """A call's tool_result was handed over to the transcript's next user message (with the
    cause, when the runtime made it rather than the tool)."""

    tool_use_id: str
    # A `tool_result` content block in API shape.
    result: dict[str, Any]
    synthetic_cause: SyntheticCause | None


@dataclass(frozen=True, slots=True)
class DiscardedResult:
    """A call of an abandoned attempt ended with this result, or a misfired call (rule 14 of
    the executor) had handed it over before its arguments changed: the loop drops it."""

    tool_use_id: str
    result: dict[str, Any]
    synthetic_cause: SyntheticCause | None


@dataclass(frozen=True, slots=True)
class SendRequest:
    """Send this Messages API request, streaming, and feed its events back (with `request_id`)."""

    # A complete Messages API body: model, max_tokens, messages, tools, stream=True.
    # It shares message dicts with the loop's transcript: send it, do not mutate it.
    request_body: dict[str, Any]
    model: str
    # 1 for the first attempt of a turn, 2 for its first retry, and so on.
    attempt: int
    # The session's request counter (1, 2, ...): pass it back with the response's input so
    # that input about an older request is recognised and ignored.
    request_id: int
    # The loop's verdict on the body: `check_pairing` of its messages, one API-worded line per
    # violation. Empty, as the loop repairs (or in strict mode refuses to send) a transcript that
    # fails; a line here means the repair broke its guarantee. A driver hands this on rather
    # than checking the body again.
    pairing_violations: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CancelRequest:
    """Stop reading the current response stream (a user interrupt), for `reason`."""

    reason: str


@dataclass(frozen=True, slots=True)
class WaitUntil:
    """Call `wake(now_ns)` at `time_ns` (a retry's backoff)."""

    time_ns: int


@dataclass(frozen=True, slots=True)
class TurnEnded:
    """One model request and its tools are over: the turn's number, why, and its tool calls."""

    turn: int
    # The API's stop_reason, or the loop's own reason (`stream_error`, `interrupted`, ...).
    stop_reason: str
    tool_calls: int


@dataclass(frozen=True, slots=True)
class SessionEnded:
    """The chain of turns `start` began is over, for `reason` (the loop's `EndReason`)."""

    reason: str


ExecutorCommand = (
    StartTool | CancelTool | AskPermission | ToolProgress | ResultReady | DiscardedResult
)
Command = ExecutorCommand | SendRequest | CancelRequest | WaitUntil | TurnEnded | SessionEnded
