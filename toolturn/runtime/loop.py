"""The tool-turn loop: a sans-I/O state machine for one session's turns.

The driver calls the input methods below with the current time (`now_ns`) and carries out the
commands they return (`toolturn.runtime.commands`): send this request, start / cancel this tool, ask
for permission, wake me at this time. Observers may also read `ToolProgress`, `ResultReady`,
`DiscardedResult`, `TurnEnded` and `SessionEnded` from the same lists. `loop.messages` is the
transcript in API shape; `loop.record` the observable record (`toolturn.runtime.record`).

Phases: idle -> awaiting response -> streaming -> tools -> (next request | idle), with backoff
between a failed request and its retry; `TRANSITIONS` lists every move (rule 15). A session starts
idle; `start(content)` begins a chain of turns that ends with `SessionEnded`, after which `start`
may be called again.

Recovery is a declared choice: the loop's `profile` (`toolturn.runtime.recovery.RecoveryPolicy`, by
name or as an object; `default` unless told) answers the questions of rules 2a, 3, 5a, 5b, 6a,
9-9i, 13 and 14. The rules below say what each answer does; the `default` profile's answers are the
first named.

Rules
-----
1. Requests. Every request is built from `messages` after `ensure_tool_result_pairing` (strict
   mode: `PairingError` instead of repairing); each repair is recorded and kept. The body is a
   legal Messages API body: model, max_tokens, messages, tools, stream=True (and system if set),
   and `SendRequest.pairing_violations` is the check of its messages.
2. Streaming. Events go to a fresh `StreamAccumulator` per attempt. Each completed tool_use block
   goes to the attempt's `ToolExecutor` at once, while the stream still runs (whether the call
   starts then is the executor policy's business). The attempt's blocks enter the transcript
   only when the response ends, merged into one assistant message per message id, without empty
   text blocks; so a discarded attempt never reaches the transcript.
2a. Duplicate ids. A tool_use block whose id an earlier block of the same response has, or a
   tool_use of the transcript already has (a resumed one included), is recorded
   (`DuplicateToolUse`) and never reaches the transcript: the transcript keeps the first
   tool_use of an id and its result, so it is legal as it stands whenever the session ends, and
   the boundary layer has nothing to remove. `run_first`: the copy is not run. `run_each`: it
   runs too, after the earlier call of its id (executor rule 3a), and its result is dropped; a
   response whose every call is so dropped ends the session as one without calls (rule 4).
   `unchecked` (ids are not checked): the copy is recorded but is a call like any other, run
   beside the rest under its own key (`id#2`, ...: executor rule 3b), and the transcript keeps
   both blocks and both results under the one id. Requests carry that history as it is: rule
   1's repair leaves alone what only undoes those duplicates (strict mode too), and
   `pairing_violations` names them, as a Messages API refusing the body would.
3. Batches. When the response has ended and every call's result is in, one user message is
   appended: the tool_results in tool_use order (or, under the `completion` result order, in the
   order the calls ended: executor rule 7), then the attachments that arrived meanwhile
   (queued user input, notifications, file changes) in arrival order. Then the next turn's request
   is sent, unless the chain started by the last `start` has had `max_turns` turns
   (`SessionEnded("max_turns")`).
4. A response without tool calls ends the session with its stop reason (`end_turn`,
   `stop_sequence`, `max_tokens`, `refusal`, `pause_turn`, ...). Attachments still waiting then
   go into the next `start`'s user message, after the new content.
5. max_tokens while a tool_use is incomplete: a block the stream never closed is dropped (it never
   reaches the transcript); a closed block whose JSON was cut off or is invalid reaches the
   transcript with input `{}` (rule 13) and gets an is_error result saying the input was not
   valid JSON. The batch then goes back to the model like any other.
5a. max_tokens with no complete tool_use: `end_session` is rule 4; `continue` appends the
   profile's `continue_text` as a user message (after any waiting attachments) and sends the next
   turn at once (a turn of the chain, counted against `max_turns`).
5b. max_tokens after a tool_use completed: the batch goes back (rule 5, `send_batch`), or under
   `end_session` the calls run, their results are appended and the session ends `max_tokens`.
6. Retries. A request that fails before any event (`request_failed`, or `stream_ended` with no
   event) is retried after a backoff (`WaitUntil`, then `wake`) when its status is retryable and
   retries remain (`toolturn.runtime.retry`); `retry_after_ns` wins over the backoff. Otherwise the
   session ends with `request_failed`. The retry budget is per turn.
6a. Two layers (a profile with `request_retry`): a request that fails before any event is
   retried under `request_retry` first, with no other effect on the turn; a status in
   `final_without_retry_after` with no retry-after, or one not retryable, ends the session
   `request_failed` at once. Once that layer is spent (it starts afresh at every event and every
   turn), the failure counts as one of rule 6's, whose budget and backoff then apply.
7. Fallback. The N-th overloaded failure of a turn (HTTP 529 before any event, or an
   `overloaded_error` event mid-stream; N = `fallback_after`) switches the session to the
   fallback model, at once and for the rest of the session, with a fresh retry budget.
8. Mid-stream overloaded errors are retried (or trigger the fallback) like failed requests: the
   attempt is discarded. Discarding: the executor's unfinished calls end with synthetic results
   that are dropped, running calls are cancelled and counted as wasted, and each completed block
   of the attempt is tombstoned in the record. The transcript is as it was before the attempt.
9. Stream error: a stream cut (`stream_ended` before `message_stop`), an `error` event that is
   not retried, or a stream that breaks the protocol. The blocks completed so far are kept as the
   assistant message; the executor is aborted (queued calls never start, cancellable running
   calls are cancelled, others finish); once every call has its result, the batch is appended as
   in rule 3 and the session ends with `stream_error`. This is the `end_session` answer to 9a.
9a. A cut (a `stream_ended` before `message_stop`, a stream that breaks the protocol, or an
   error event 9e takes as a cut) is classed by what survived: at least one completed tool_use
   block (after tool use), else any content block started (after text), else only message_start
   (before content). The profile's answer for that class decides; `end_session` is rule 9.
9b. `continue` after tool use: the completed blocks are kept (an open block is dropped), the
   executor hears that the message ended, so every kept call runs to its end and nothing is
   cancelled; the batch is appended as in rule 3 and the next turn is sent, not a retry. The
   turn ends `stream_error`; the session goes on.
9c. `resume` after text: the completed blocks are kept, the profile's `resume_text` is appended as
   a user message and the next turn is sent at once, with no backoff. `keep`: the completed
   blocks are kept (none, when only an open block survived) and nothing is appended; the next
   request ends with that assistant text, and the response to it continues the same message.
9d. `retry` before content: the attempt is discarded and the identical request (no message added)
   is retried after the backoff, as in rule 6 and within its budget; with none left, rule 9.
9e. Error events. An `overloaded_error` is rule 8 (retry or fall back), except after at least one
   block completed under `overloaded_after_content = as_cut`: a cut. Any other error type is
   rule 9, or under `error_event = as_cut` a cut. Under `ignore` every error event, overloaded
   or not, is taken and does nothing: the stream's end decides.
9f. Calls running when a cut ends the session: the cancellable are cancelled (`cancel`, rule 9),
   or every one is left to finish (`finish`).
9g. The request after a kept cut (9b, 9c): the next turn at once (`cut_resend = next_turn`), or
   (`retry`) the next turn after rule 6's backoff, spending the retry budget the cut's turn had
   (so a run of cuts is bounded); with none left the session ends `stream_error`.
9h. Idle timeout (a profile with `stream_idle_timeout_ns`): from its first event on, a stream
   silent that long is lost: the loop asks to be woken (`WaitUntil`) when the silence would
   reach the limit, and at that wake, with no event since, cancels the request
   (`CancelRequest`) and takes it as a cut (9a, recorded as `idle_timeout`). The time to the
   first event is the request's, not timed by this rule.
9i. Final errors: an `error` event whose type the profile names in `final_error_types` ends
   the turn at once, with no retry, whatever 9e says: the completed blocks are kept, the
   executor hears that the message ended, so every kept call runs to its end, the batch is
   appended and the session ends `stream_error`.
10. User interrupt (`interrupt`). While streaming: the request is cancelled (`CancelRequest`),
    the completed blocks are kept and the executor is aborted as in rule 9. While tools run: the
    executor is aborted. In both cases, once every call has its result, the user message holds
    the results, the attachments and the text `INTERRUPT_TEXT`, and the session ends with
    `interrupted`. While waiting for a response or a retry: the request is cancelled and
    `INTERRUPT_TEXT` is added to the last user message. When idle: nothing happens.
11. Consecutive user content is always merged into one user message (a new prompt after a batch,
    an interrupt marker), so roles alternate and the boundary layer has nothing to repair on
    these paths.
12. Late reports are ignored: events after `CancelRequest`, a cancelled tool's finish, and any
    response input whose `request_id` is not the latest `SendRequest`'s. A driver that may
    deliver input for an older request (a stream it did not close, a `stream_ended` after
    `message_stop` that raced the next request) passes `request_id`; without it, input is taken
    to be about the latest request.
13. A tool_use whose input JSON did not parse keeps, in the transcript, `{}` (`empty`) or
    `{"__unparsedToolInput": {"raw": text, "len": its length}}` (`unparsed`); either way its
    call is not run and its result is an is_error one worded by the profile's `error_texts`.
14. Retry settings: the loop's `retry` argument, else the profile's, else the SDK's defaults.
    Concurrency safety per call: a tool the profile names in `safe_when` and that has no
    predicate of its own gets the profile's (`ToolDefinition.safe_for`); under
    `parallel_calls = all` every call is safe, so every call of a response may run at once.
15. The phase moves only along `TRANSITIONS`; any other move is a bug and raises
    `PhaseError`. Why: the interrupt and recovery paths are many, and a table a test walks is
    easier to trust than moves spread through the methods. Rule 16's resume is the one move from
    any phase to idle.
16. Resume (`resume(messages, now_ns, cause=...)`): the process that held the loop died and came
    back (`crash`), the user rewound to an earlier message (`rewind`), or the transcript was
    compacted (`compaction`). What the process held in memory is gone: the request in flight is
    cancelled, the attempt's calls end with dropped synthetic results of the cause (running
    calls are cancelled: they died with the process) and its turn ends with the cause as its
    reason; waiting attachments are dropped, the model is the primary again with a fresh retry
    budget. The transcript becomes `messages` and is checked (or repaired) at the next request
    like a constructor's `messages`; the record holds a `Resume` entry naming the cause, so that
    the repairs of that request are the cause's. The loop is idle: `start` goes on. The record
    and the counters (turns, requests) go on too: one session, one sequence of turns.
17. A misfire (`arguments_changed(index)`): a tool_use block the driver completed early (its
    `content_block_stop` fed when its arguments first parsed as a JSON object: Chat Completions'
    speculative start, `toolturn.runtime.protocol_timing`) goes on after all. The block is open
    again with its text so far (`StreamAccumulator.reopen`) and its call leaves the batch
    (`ToolExecutor.retract`: a running call is cancelled, cause `misfire`, and counted as
    wasted); a result it had handed over is dropped. The block's real stop then completes it
    and its call is added anew, as any call is. Only while the response streams; the call's
    late reports are ignored (rule 12).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from enum import Enum
from types import MappingProxyType
from typing import Any

from toolturn.runtime.accumulator import (
    BlockMessage,
    ResponseSummary,
    StreamProtocolError,
    merge_block_messages,
)
from toolturn.runtime.attachments import Attachment, AttachmentKind
from toolturn.runtime.commands import (
    CancelRequest,
    Command,
    ExecutorCommand,
    ResultReady,
    SendRequest,
    SessionEnded,
    TurnEnded,
    WaitUntil,
)
from toolturn.runtime.errors import ToolTurnError
from toolturn.runtime.executor import CallRecord, ToolExecutor
from toolturn.runtime.loop_state import AttemptState, EndReason, SessionState, TurnState
from toolturn.runtime.outcomes import SyntheticCause, ToolOutcome
from toolturn.runtime.pairing import PairingMonitor, RepairKind
from toolturn.runtime.permission import PermissionPolicy, allow_all
from toolturn.runtime.policy import ExecutorPolicy
from toolturn.runtime.record import (
    AttachmentAppended,
    BlockComplete,
    DuplicateToolUse,
    Fallback,
    FirstEvent,
    Interrupt,
    Record,
    Repaired,
    RequestFailed,
    RequestSent,
    Resume,
    Retry,
    SessionEnd,
    StreamError,
    Tombstone,
    TurnEnd,
)
from toolturn.runtime.recovery import (
    AfterTextCut,
    AfterToolUseCut,
    BeforeContentCut,
    CutResend,
    DuplicateIds,
    ErrorEvent,
    InvalidJsonInput,
    MaxTokens,
    MaxTokensAfterCalls,
    OverloadedAfterContent,
    ParallelCalls,
    RecoveryPolicy,
    RunningOnCut,
    profile_of,
)
from toolturn.runtime.repair import PairingError, Repair, ensure_tool_result_pairing
from toolturn.runtime.results import ToolContent
from toolturn.runtime.retry import RetrySettings, is_retryable
from toolturn.runtime.tooldef import ToolDefinition
from toolturn.runtime.validation import InputValidation

# EndReason is re-exported: the loop's callers have always found it here.
__all__ = ["INTERRUPT_TEXT", "TRANSITIONS", "EndReason", "Phase", "PhaseError", "ToolTurnLoop"]

INTERRUPT_TEXT = "[Request interrupted by user]"
# Rule 16: the synthetic cause of the calls a resume abandons.
_RESUME_CAUSES = {"crash": SyntheticCause.CRASH, "rewind": SyntheticCause.REWIND}
OVERLOADED_STATUS = 529
OVERLOADED_ERROR = "overloaded_error"
# Rule 9h: the cut's name in the record, and the reason of its `CancelRequest`.
IDLE_TIMEOUT = "idle_timeout"


class Phase(str, Enum):
    """Where the session is (rule 15 lists the moves between phases)."""

    IDLE = "idle"
    BACKOFF = "backoff"
    AWAITING_RESPONSE = "awaiting_response"
    STREAMING = "streaming"
    TOOLS = "tools"


class PhaseError(ToolTurnError, RuntimeError):
    """A move the transition table does not allow (rule 15): a bug of the loop."""


_P = Phase
# Rule 15: from each phase, the phases it may move to (and the input or rule that moves it).
TRANSITIONS: Mapping[Phase, frozenset[Phase]] = MappingProxyType({
    # start()
    _P.IDLE: frozenset({_P.AWAITING_RESPONSE}),
    # first event; retry (6); fallback sends at once (7); no retry left or interrupt (6, 10)
    _P.AWAITING_RESPONSE: frozenset({_P.STREAMING, _P.BACKOFF, _P.AWAITING_RESPONSE, _P.IDLE}),
    # response ended, cut, stream error or interrupt (3, 9-10); retry (8, 9d); fallback (7)
    _P.STREAMING: frozenset({_P.TOOLS, _P.BACKOFF, _P.AWAITING_RESPONSE}),
    # batch complete: next turn (3, 5a, 9b, 9c), its retry (9g) or the session's end (3, 4, 9, 10)
    _P.TOOLS: frozenset({_P.AWAITING_RESPONSE, _P.BACKOFF, _P.IDLE}),
    # wake(); interrupt (10)
    _P.BACKOFF: frozenset({_P.AWAITING_RESPONSE, _P.IDLE}),
})


def _profile_safety(
    tools: Sequence[ToolDefinition], profile: RecoveryPolicy
) -> Sequence[ToolDefinition]:
    """Rule 14: the profile's per-call safety for the tools that have none of their own (or,
    under `parallel_calls = all`, every call safe)."""
    if profile.parallel_calls is ParallelCalls.ALL:
        return [replace(tool, concurrency_safe=True, safe_when=None) for tool in tools]
    if not profile.safe_when:
        return tools
    return [
        replace(tool, safe_when=profile.safe_when[tool.name])
        if tool.safe_when is None and tool.name in profile.safe_when else tool
        for tool in tools
    ]


class ToolTurnLoop:
    """One session's turns; see the module docstring for the rules."""

    def __init__(
        self,
        tools: Sequence[ToolDefinition],
        *,
        model: str,
        policy: ExecutorPolicy | str = ExecutorPolicy.STREAMING,
        fallback_model: str | None = None,
        fallback_after: int = 3,
        max_turns: int = 20,
        max_tokens: int = 4096,
        retry: RetrySettings | None = None,
        strict: bool = False,
        permission: PermissionPolicy = allow_all,
        system: str | None = None,
        messages: Iterable[Mapping[str, Any]] = (),
        validation: InputValidation | None = None,
        profile: RecoveryPolicy | str = "default",
    ) -> None:
        """`messages` resumes a session from an earlier transcript (checked or repaired at the
        first request like any other). `validation` validates the tools' input
        (`toolturn.runtime.validation`), owned by a caller that makes many loops over the same tools
        (a simulator: one per session), so that schemas are compiled and verdicts remembered
        once rather than per loop; without one the loop builds its own. `profile` is the
        recovery profile, a name (`toolturn.runtime.recovery.PROFILES`) or a `RecoveryPolicy`."""
        self.profile = profile = profile_of(profile)
        tools = _profile_safety(tools, profile)
        self._tools = {tool.name: tool for tool in tools}
        if len(self._tools) != len(tools):
            raise ValueError("two tools share a name")
        self._tools_api = [tool.to_api() for tool in tools]
        if validation is None:
            validation = InputValidation(tools)
        elif missing := sorted(self._tools.keys() - validation.tool_names()):
            raise ValueError(f"validation: no schema for the tools {', '.join(missing)}")
        self._validation = validation
        self.policy = ExecutorPolicy(policy)
        self.model = self._primary_model = model
        self.fallback_model = fallback_model
        self.fallback_after = fallback_after
        self.max_turns = max_turns
        self.max_tokens = max_tokens
        self.retry = retry if retry is not None else (profile.retry or RetrySettings())
        self.strict = strict
        self.permission = permission
        self.system = system
        self.messages: list[dict[str, Any]] = [dict(message) for message in messages]
        self.record = Record()
        self.repairs: list[Repair] = []
        self.requests_sent = 0
        self.wasted_executions = 0
        self.phase = Phase.IDLE
        # The session's own state beyond these, the current turn's and the current attempt's
        # (`toolturn.runtime.loop_state`).
        self._session = SessionState(transcript_ids=_tool_use_ids(self.messages))
        self._turn_state = TurnState()
        self._attempt_state = AttemptState(self._new_executor())

    # ----- driver inputs -----

    def start(self, content: str | list[dict[str, Any]], now_ns: int) -> list[Command]:
        """A user prompt: append it (with any waiting attachments) and send the first request."""
        if self.phase is not Phase.IDLE:
            raise RuntimeError(f"start() while {self.phase.value}")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        if not blocks or blocks == [{"type": "text", "text": ""}]:
            raise ValueError("a user prompt needs content")
        blocks += self._take_attachments(now_ns)
        self._append_user(blocks)
        self._session.chain_turns = 0
        return self._next_turn(now_ns)

    def request_failed(
        self, status: int | None, now_ns: int, *, retry_after_ns: int | None = None,
        request_id: int | None = None,
    ) -> list[Command]:
        """The request failed before any event arrived; `status` is None when there was no
        HTTP response at all (connection error)."""
        if self.phase is not Phase.AWAITING_RESPONSE or self._stale(request_id):
            return []
        self.record.add(RequestFailed, now_ns, self.model, status)
        if self.profile.request_retry is not None:
            return self._request_layer(status, now_ns, retry_after_ns)
        return self._after_failure(
            now_ns, overloaded=status == OVERLOADED_STATUS, retryable=is_retryable(status),
            retry_after_ns=retry_after_ns,
        )

    def on_event(
        self, event: dict[str, Any], now_ns: int, request_id: int | None = None
    ) -> list[Command]:
        """One stream event, as the JSON dict of an SSE `data:` line."""
        if request_id is not None and request_id != self.requests_sent:
            return []
        phase = self.phase
        if phase is not Phase.STREAMING:
            if phase is not Phase.AWAITING_RESPONSE:
                return []  # Rule 12: the stream was abandoned.
            self._enter(Phase.STREAMING)
            self._turn_state.request_retries = 0
            self.record.add(FirstEvent, now_ns, event.get("type"))
            if self.profile.stream_idle_timeout_ns is not None:
                self._attempt_state.last_event_ns = now_ns
                return [*self._watch_idle(now_ns), *self._feed(event, now_ns)]
        self._attempt_state.last_event_ns = now_ns
        return self._feed(event, now_ns)

    def _feed(self, event: dict[str, Any], now_ns: int) -> list[Command]:
        """One event of the current attempt's stream, to its accumulator."""
        accumulator = self._attempt_state.accumulator
        try:
            done = accumulator.feed(event)
        except StreamProtocolError as error:
            return self._cut(now_ns, str(error))
        if done is not None:
            return self._block_complete(done, now_ns)
        if accumulator.finished:
            self._attempt_state.message_stop_ns = now_ns
            return self._response_ended(now_ns)
        if accumulator.error is not None:
            return self._error_event(str(accumulator.error.get("type", "error")), now_ns)
        return []

    def on_events(
        self,
        events: Sequence[dict[str, Any]],
        times_ns: Sequence[int],
        request_id: int | None = None,
    ) -> tuple[list[Command], int]:
        """Several stream events in order, `times_ns[i]` the arrival of `events[i]`: the same as
        `on_event` for each, up to and including the first that hands out commands, so that the
        driver carries those out before the next event. Returns the commands (empty when every
        event was taken without any) and how many events were taken.

        Why a batch: a driver that feeds a recorded or simulated stream pays a call per event
        otherwise, and the plain deltas, nearly every event, go to the accumulator in one call
        per run of them (`StreamAccumulator.append_deltas`).
        """
        total = len(events)
        if request_id is not None and request_id != self.requests_sent:
            return [], total  # Rule 12: a stale request; every event is ignored.
        taken = 0
        while taken < total:
            if self.phase is Phase.STREAMING:
                # The accumulator changes only with a new request, which comes as a command.
                start = taken
                taken = self._attempt_state.accumulator.append_deltas(events, taken)
                if taken > start:
                    self._attempt_state.last_event_ns = times_ns[taken - 1]
                if taken == total:
                    break
            commands = self.on_event(events[taken], times_ns[taken])
            taken += 1
            if commands:
                return commands, taken
        return [], total

    def stream_ended(self, now_ns: int, request_id: int | None = None) -> list[Command]:
        """The response stream closed. After `message_stop` this changes nothing; before it,
        the stream was cut."""
        if self._stale(request_id):
            return []
        if self.phase is Phase.AWAITING_RESPONSE:
            self.record.add(RequestFailed, now_ns, self.model, None)
            return self._after_failure(now_ns, overloaded=False, retryable=True)
        if self.phase is Phase.STREAMING:
            return self._cut(now_ns, "stream_cut")
        return []

    def wake(self, now_ns: int) -> list[Command]:
        """The time asked for by `WaitUntil` has come."""
        if self.phase is Phase.STREAMING:
            return self._watch_idle(now_ns)
        if self.phase is not Phase.BACKOFF:
            return []
        if now_ns < self._session.wake_ns:
            return [WaitUntil(self._session.wake_ns)]
        return [self._send(now_ns)]

    def arguments_changed(
        self, index: int, now_ns: int, request_id: int | None = None
    ) -> list[Command]:
        """Rule 17: the tool_use block at `index`, fed its stop early, goes on: its start
        misfired."""
        if self._stale(request_id) or self.phase is not Phase.STREAMING:
            return []
        attempt = self._attempt_state
        attempt.accumulator.reopen(index)
        attempt.duplicates.discard(index)
        key = attempt.keys.pop(index, None)
        if key is None:
            return []  # Rule 2a's `run_first`: the block was never a call.
        retraction = attempt.executor.retract(key, now_ns)
        if retraction.freed:
            del self._session.owner[key]  # so its block comes back as a call of its own
            self._session.withdrawn.add(key)
        if retraction.wasted:
            self.wasted_executions += 1
        if retraction.withdrawn is not None:
            attempt.results = [r for r in attempt.results if r is not retraction.withdrawn]
        return self._route(retraction.commands, now_ns)

    def tool_progress(self, tool_use_id: str, progress: Any, now_ns: int) -> list[Command]:
        """A running tool reported progress (`ToolExecutor.tool_progress`, for observers)."""
        executor = self._owner(tool_use_id)
        if executor is None:
            return []  # Rule 17: a retracted call's run.
        return self._route(executor.tool_progress(tool_use_id, progress, now_ns), now_ns)

    def tool_finished(
        self, tool_use_id: str, outcome: ToolOutcome | str, content: ToolContent, now_ns: int
    ) -> list[Command]:
        """A started tool stopped (`ToolExecutor.tool_finished`), for whichever attempt's batch
        holds the call."""
        executor = self._owner(tool_use_id)
        if executor is None:
            return []  # Rule 17: a retracted call's run.
        return self._route(executor.tool_finished(tool_use_id, outcome, content, now_ns), now_ns)

    def permission_decided(
        self, tool_use_id: str, allowed: bool, now_ns: int, *, message: str | None = None
    ) -> list[Command]:
        """The answer to an `AskPermission` (`ToolExecutor.permission_decided`); `message` is
        shown to the model on denial."""
        executor = self._owner(tool_use_id)
        if executor is None:
            return []  # Rule 17: a retracted call's question.
        commands = executor.permission_decided(tool_use_id, allowed, now_ns, message=message)
        return self._route(commands, now_ns)

    def attachment(
        self,
        block: dict[str, Any],
        now_ns: int,
        *,
        kind: AttachmentKind | str = AttachmentKind.NOTIFICATION,
    ) -> list[Command]:
        """Content for the model that is not a tool result; it waits for the batch (rule 3)."""
        self._session.pending.append(Attachment(AttachmentKind(kind), block, now_ns))
        return []

    def interrupt(self, now_ns: int) -> list[Command]:
        """The user interrupts (rule 10)."""
        phase = self.phase
        if phase is Phase.IDLE:
            return []
        self.record.add(Interrupt, now_ns, phase.value)
        commands: list[Command] = []
        if phase in (Phase.AWAITING_RESPONSE, Phase.BACKOFF):
            if phase is Phase.AWAITING_RESPONSE:
                commands.append(CancelRequest("user interrupt"))
            self._append_user([{"type": "text", "text": INTERRUPT_TEXT}])
            commands.append(self._end_session(EndReason.INTERRUPTED, now_ns))
            return commands
        if self._turn_state.end_reason is None:
            self._turn_state.end_reason = EndReason.INTERRUPTED
        if phase is Phase.STREAMING:
            commands.append(CancelRequest("user interrupt"))
            self._keep_completed_blocks()
            self._enter(Phase.TOOLS)
        aborted = self._attempt_state.executor.abort(SyntheticCause.USER_INTERRUPT, now_ns)
        commands += self._route(aborted, now_ns)
        return commands

    def resume(
        self, messages: Iterable[Mapping[str, Any]], now_ns: int, *, cause: str
    ) -> list[Command]:
        """Rule 16: carry on from `messages` after a crash, a rewind or a compaction (`cause`).
        Returns the commands that stop what was in flight (`CancelRequest`, `CancelTool`)."""
        commands: list[Command] = []
        phase = self.phase
        if phase in (Phase.AWAITING_RESPONSE, Phase.STREAMING):
            commands.append(CancelRequest(cause))
        if phase in (Phase.STREAMING, Phase.TOOLS):
            executor = self._attempt_state.executor
            commands += executor.discard(_RESUME_CAUSES.get(cause, SyntheticCause.CRASH), now_ns)
            self.wasted_executions += executor.wasted_executions
        if phase is not Phase.IDLE:
            self.record.add(TurnEnd, now_ns, cause, self._attempt_state.executor.call_count)
        self.phase = Phase.IDLE  # Rule 15's one exception.
        self.messages = [dict(message) for message in messages]
        self._session.transcript_ids = _tool_use_ids(self.messages)
        self._session.pairing = PairingMonitor()
        self._session.pending = []
        self._attempt_state.results = []
        self._attempt_state.duplicates = set()
        self._attempt_state.shadowed = set()
        self.model = self._primary_model
        self.record.add(Resume, now_ns, cause, len(self.messages))
        return commands

    # ----- state -----

    @property
    def turn(self) -> int:
        """The current turn, counted over the whole session (1-based; 0 before the first)."""
        return self._session.turn

    def response_summary(self, request_id: int) -> ResponseSummary:
        """The `ResponseSummary` of request `request_id` (1, 2, ...): the current request's as
        far as it was read, an earlier one's as it was when the next one was sent."""
        if request_id == self.requests_sent:
            return self._attempt_state.accumulator.summary(self._attempt_state.message_stop_ns)
        return self._session.summaries[request_id - 1]

    def call_records(self) -> list[CallRecord]:
        """Every call of the session, attempt by attempt, in tool_use order."""
        return [record for executor in self._session.executors for record in executor.records()]

    # ----- internals -----

    def _stale(self, request_id: int | None) -> bool:
        return request_id is not None and request_id != self.requests_sent

    def _enter(self, phase: Phase) -> None:
        """Rule 15: move to `phase`, along the transition table only."""
        if phase not in TRANSITIONS[self.phase]:
            raise PhaseError(f"{self.phase.value} -> {phase.value} is not a transition")
        self.phase = phase

    def _new_executor(self) -> ToolExecutor:
        return ToolExecutor(
            self._tools, self.policy, permission=self.permission, record=self.record,
            validation=self._validation, profile=self.profile,
        )

    def _next_turn(self, now_ns: int) -> list[Command]:
        self._begin_turn()
        return [self._send(now_ns)]

    def _begin_turn(self) -> None:
        self._session.turn += 1
        self._session.chain_turns += 1
        self._turn_state = TurnState()

    def _send(self, now_ns: int) -> SendRequest:
        self._turn_state.attempt += 1
        self.record.turn = self._session.turn
        self.record.attempt = self._turn_state.attempt
        # A transcript that passes comes back from the repair as it is, with no repairs; the
        # monitor knows whether it passes from the new messages alone, the repair walks them all.
        violations = self._session.pairing.check(self.messages)
        repairs: list[Repair]
        if not violations:
            messages, repairs = list(self.messages), []
        elif self._session.unchecked and self._own_history(
            ensure_tool_result_pairing(self.messages)[1]
        ):
            # Rule 2a's `unchecked`: the history is the profile's own, sent as it is; the
            # violations say what an API that checks ids refuses.
            messages, repairs = list(self.messages), []
        elif self.strict:
            raise PairingError(violations)
        else:
            messages, repairs = ensure_tool_result_pairing(self.messages)
            # The verdict on the body sent (`SendRequest.pairing_violations`, empty if the
            # repair keeps its guarantee); the monitor then holds the transcript the next
            # request grows, so the next check is of its new messages only.
            violations = self._session.pairing.check(messages)
        for repair in repairs:
            self.record.add(
                Repaired, now_ns, repair.tool_use_id, repair.kind, repair.message_index
            )
        self.repairs += repairs
        self.messages = messages
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": list(messages),
            "tools": self._tools_api,
            "stream": True,
        }
        if self.system is not None:
            body["system"] = self.system
        if self.requests_sent:
            previous = self._attempt_state
            self._session.summaries.append(previous.accumulator.summary(previous.message_stop_ns))
        self._attempt_state = AttemptState(self._new_executor())
        self._session.executors.append(self._attempt_state.executor)
        self._enter(Phase.AWAITING_RESPONSE)
        self.requests_sent += 1
        self.record.add(RequestSent, now_ns, self.model)
        return SendRequest(
            body, self.model, self._turn_state.attempt, self.requests_sent, tuple(violations)
        )

    def _block_complete(self, done: BlockMessage, now_ns: int) -> list[Command]:
        block = done.block
        if block["type"] != "tool_use":
            self.record.add(BlockComplete, now_ns, block["type"], done.index, None)
            return []
        tool_use_id = block["id"]
        executor = self._attempt_state.executor
        repeat = self._session.owner.get(tool_use_id) is executor
        run_key = None
        if repeat or tool_use_id in self._session.transcript_ids:
            # Rule 2a: a model fault the API should not show. The first call answers the id: a
            # second would answer one id twice (unless ids are not checked).
            self.record.add(DuplicateToolUse, now_ns, tool_use_id, block["name"], done.index)
            if self.profile.duplicate_ids is DuplicateIds.UNCHECKED:
                self._session.unchecked.add(tool_use_id)
                run_key = self._run_key(tool_use_id) if repeat else None
                repeat = False
            else:
                self._attempt_state.duplicates.add(done.index)
                if self.profile.duplicate_ids is DuplicateIds.RUN_FIRST:
                    return []
                if not repeat:
                    self._attempt_state.shadowed.add(tool_use_id)
        self.record.add(BlockComplete, now_ns, "tool_use", done.index, tool_use_id)
        self._session.owner[run_key or tool_use_id] = executor
        self._session.withdrawn.discard(run_key or tool_use_id)
        self._attempt_state.keys[done.index] = run_key or tool_use_id
        commands = executor.add_tool_use(
            block, now_ns, input_error=done.input_error, input_json=done.input_json,
            repeat=repeat, run_key=run_key,
        )
        return self._route(commands, now_ns)

    def _owner(self, tool_use_id: str) -> ToolExecutor | None:
        """The batch that holds the call of key `tool_use_id`; None for a call a misfire
        withdrew (rule 17). A key the loop never gave out is the driver's mistake: KeyError."""
        executor = self._session.owner.get(tool_use_id)
        if executor is None and tool_use_id not in self._session.withdrawn:
            raise KeyError(f"no tool call {tool_use_id!r} was started by this loop")
        return executor

    def _run_key(self, tool_use_id: str) -> str:
        """Rule 2a's `unchecked`: the key a driver knows the n-th call of an id in this
        response by (`id#2`, `id#3`, ...; no API's ids hold a `#`)."""
        executor = self._attempt_state.executor
        n = 2
        while self._session.owner.get(f"{tool_use_id}#{n}") is executor:
            n += 1
        return f"{tool_use_id}#{n}"

    def _own_history(self, repairs: list[Repair]) -> bool:
        """Rule 2a's `unchecked`: whether the repairs only undo the profile's own duplicate ids
        (each is about one of them, or fills a message such a removal emptied), so the
        transcript goes as it is."""
        ids = [r.tool_use_id for r in repairs if r.kind is not RepairKind.PLACEHOLDER_INSERTED]
        return bool(ids) and all(tool_use_id in self._session.unchecked for tool_use_id in ids)

    def _response_ended(self, now_ns: int) -> list[Command]:
        self._keep_completed_blocks()
        self._enter(Phase.TOOLS)
        return self._route(self._attempt_state.executor.message_ended(now_ns), now_ns)

    def _keep_completed_blocks(self) -> None:
        attempt = self._attempt_state
        completed = attempt.accumulator.completed
        if attempt.duplicates:
            completed = [done for done in completed if done.index not in attempt.duplicates]
        if self.profile.invalid_json_input is not InvalidJsonInput.EMPTY:  # Rule 13.
            completed = [
                replace(done, block={
                    **done.block, "input": self.profile.input_in_transcript(done.raw_input or "")
                }) if done.input_error is not None else done
                for done in completed
            ]
        for message in merge_block_messages(completed):
            content = [b for b in message["content"] if not (b["type"] == "text" and not b["text"])]
            if not content:
                continue
            if self.messages and self.messages[-1]["role"] == "assistant":
                # Rule 9c's `keep`: the request after ended with the kept text, so this
                # response continues that message (replaced: earlier bodies share it).
                last = self.messages[-1]
                self.messages[-1] = {**last, "content": [*last["content"], *content]}
            else:
                self.messages.append({"role": "assistant", "content": content})
            self._session.transcript_ids.update(b["id"] for b in content if b["type"] == "tool_use")

    def _error_event(self, error_type: str, now_ns: int) -> list[Command]:
        """Rule 9e: an `error` event."""
        profile = self.profile
        if error_type in profile.final_error_types:
            return self._final_error(now_ns, error_type)
        if profile.error_event is ErrorEvent.IGNORE:
            return []
        if error_type == OVERLOADED_ERROR:
            if not (
                self._attempt_state.accumulator.completed
                and profile.overloaded_after_content is OverloadedAfterContent.AS_CUT
            ):
                return self._after_failure(now_ns, overloaded=True, retryable=True)
        elif profile.error_event is ErrorEvent.END_SESSION:
            return self._stream_error(now_ns, error_type)
        return self._cut(now_ns, error_type)

    def _watch_idle(self, now_ns: int) -> list[Command]:
        """Rule 9h: cut a stream silent for the profile's idle limit, or ask to be woken when it
        would be (unless a wake for that time is pending already)."""
        limit = self.profile.stream_idle_timeout_ns
        if limit is None:
            return []
        attempt = self._attempt_state
        deadline = attempt.last_event_ns + limit
        if now_ns >= deadline:
            return [CancelRequest(IDLE_TIMEOUT), *self._cut(now_ns, IDLE_TIMEOUT)]
        if attempt.idle_wake_ns > now_ns:
            return []
        attempt.idle_wake_ns = deadline
        return [WaitUntil(deadline)]

    def _final_error(self, now_ns: int, error_type: str) -> list[Command]:
        """Rule 9i: an error that ends the turn at once: keep what completed, let the kept calls
        run to their end (the executor hears the message ended), then end the session."""
        self.record.add(StreamError, now_ns, error_type)
        self._turn_state.end_reason = EndReason.STREAM_ERROR
        self._keep_completed_blocks()
        self._enter(Phase.TOOLS)
        return self._route(self._attempt_state.executor.message_ended(now_ns), now_ns)

    def _cut(self, now_ns: int, detail: str) -> list[Command]:
        """Rules 9a-9d: what survived the cut, and the profile's answer for it."""
        profile = self.profile
        completed = self._attempt_state.accumulator.completed
        if any(done.block["type"] == "tool_use" for done in completed):
            if profile.after_tool_use_cut is AfterToolUseCut.CONTINUE:
                return self._keep_and_go_on(now_ns, detail, None)
        elif completed or self._attempt_state.accumulator.open_indices:
            if profile.after_text_cut is AfterTextCut.RESUME:
                return self._keep_and_go_on(now_ns, detail, profile.resume_text)
            if profile.after_text_cut is AfterTextCut.KEEP:
                return self._keep_and_go_on(now_ns, detail, None)
        elif profile.before_content_cut is BeforeContentCut.RETRY:
            return self._after_failure(now_ns, overloaded=False, retryable=True, detail=detail)
        return self._stream_error(now_ns, detail)

    def _keep_and_go_on(
        self, now_ns: int, detail: str, continuation: str | None
    ) -> list[Command]:
        """Rules 9b, 9c: keep what completed, let every kept call finish, then the next turn."""
        self.record.add(StreamError, now_ns, detail)
        self._turn_state.turn_reason = EndReason.STREAM_ERROR
        self._turn_state.continuation = continuation
        self._keep_completed_blocks()
        self._enter(Phase.TOOLS)
        return self._route(self._attempt_state.executor.message_ended(now_ns), now_ns)

    def _stream_error(self, now_ns: int, detail: str) -> list[Command]:
        """Rule 9 (and 9f): keep what completed, answer every call, end the session."""
        self.record.add(StreamError, now_ns, detail)
        self._turn_state.end_reason = EndReason.STREAM_ERROR
        self._keep_completed_blocks()
        self._enter(Phase.TOOLS)
        cancel_running = self.profile.running_on_cut is RunningOnCut.CANCEL
        commands = self._attempt_state.executor.abort(
            SyntheticCause.STREAM_ERROR, now_ns, cancel_running=cancel_running
        )
        return self._route(commands, now_ns)

    def _can_fall_back(self) -> bool:
        return (
            self.fallback_model is not None
            and self.model != self.fallback_model
            and self._turn_state.overloaded >= self.fallback_after
        )

    def _after_failure(
        self, now_ns: int, *, overloaded: bool, retryable: bool,
        retry_after_ns: int | None = None, detail: str = OVERLOADED_ERROR,
    ) -> list[Command]:
        """Rules 6-8 and 9d: the attempt failed in a way that may be retried; `detail` names a
        mid-stream failure in the record."""
        if overloaded:
            self._turn_state.overloaded += 1
        fall_back = overloaded and self._can_fall_back()
        retry = not fall_back and retryable and self._turn_state.retries < self.retry.max_retries
        commands: list[Command] = []
        if self.phase is Phase.STREAMING:
            if not (fall_back or retry):
                return self._stream_error(now_ns, detail)
            self.record.add(StreamError, now_ns, detail)
            cause = SyntheticCause.FALLBACK if fall_back else SyntheticCause.DISCARDED
            commands += self._discard_attempt(cause, now_ns)
        if fall_back:
            assert self.fallback_model is not None
            self.record.add(Fallback, now_ns, self.fallback_model, self._turn_state.overloaded)
            self.model = self.fallback_model
            self._turn_state.retries = 0
            self._turn_state.overloaded = 0
            commands.append(self._send(now_ns))
        elif retry:
            self._turn_state.retries += 1
            delay_ns = self.retry.delay_ns(self._turn_state.retries, retry_after_ns)
            self._session.wake_ns = now_ns + delay_ns
            self._enter(Phase.BACKOFF)
            self.record.add(Retry, now_ns, self.model, delay_ns)
            commands.append(WaitUntil(self._session.wake_ns))
        else:
            commands.append(self._end_session(EndReason.REQUEST_FAILED, now_ns))
        return commands

    def _discard_attempt(self, cause: SyntheticCause, now_ns: int) -> list[Command]:
        for done in self._attempt_state.accumulator.completed:
            self.record.add(Tombstone, now_ns, done.block["type"], done.index)
        executor = self._attempt_state.executor
        commands: list[Command] = list(executor.discard(cause, now_ns))
        self.wasted_executions += executor.wasted_executions
        self._attempt_state.results = []
        return commands

    def _route(self, commands: list[ExecutorCommand], now_ns: int) -> list[Command]:
        """Keep the handed-over results, pass every command on, and close the batch when it is
        complete."""
        routed: list[Command] = list(commands)
        for command in commands:
            if type(command) is ResultReady:
                self._attempt_state.results.append(command.result)
        if self.phase is Phase.TOOLS and self._attempt_state.executor.done:
            routed += self._batch_complete(now_ns)
        return routed

    def _batch_complete(self, now_ns: int) -> list[Command]:
        calls = self._attempt_state.executor.call_count
        end = self._turn_state.end_reason
        own = end or self._turn_state.turn_reason
        stop_reason = (
            own.value if own is not None
            else self._attempt_state.accumulator.stop_reason or "end_turn"
        )
        continuation = self._turn_state.continuation if end is None else None
        if (
            continuation is None and end is None and not calls and stop_reason == "max_tokens"
            and self.profile.max_tokens is MaxTokens.CONTINUE
        ):
            continuation = self.profile.continue_text  # Rule 5a.
        content = self._kept_results()
        # Calls whose results reach the transcript: all of them, but under rule 2a's `run_each`
        # a response whose calls all repeat the transcript's ids answers nothing new, and ends
        # the session as a response without calls does (so no assistant message follows another).
        answered = bool(content)
        if answered or end is EndReason.INTERRUPTED or continuation is not None:
            content += self._take_attachments(now_ns)
        if end is EndReason.INTERRUPTED:
            content.append({"type": "text", "text": INTERRUPT_TEXT})
        if continuation is not None:
            content.append({"type": "text", "text": continuation})
        if content:
            self._append_user(content)
        self._attempt_state.results = []
        self.record.add(TurnEnd, now_ns, stop_reason, calls)
        commands: list[Command] = [TurnEnded(self._session.turn, stop_reason, calls)]
        if end is not None:
            commands.append(self._end_session(end, now_ns))
        elif own is EndReason.STREAM_ERROR and self.profile.cut_resend is CutResend.RETRY:
            commands.append(self._retry_after_cut(now_ns))
        elif (not answered and continuation is None) or (
            calls and stop_reason == "max_tokens"
            and self.profile.max_tokens_after_calls is MaxTokensAfterCalls.END_SESSION
        ):
            commands.append(self._end_session(stop_reason, now_ns))
        elif self._session.chain_turns >= self.max_turns:
            commands.append(self._end_session(EndReason.MAX_TURNS, now_ns))
        else:
            commands += self._next_turn(now_ns)
        return commands

    def _retry_after_cut(self, now_ns: int) -> Command:
        """Rule 9g: the request after a kept cut, as a retry of the cut's budget."""
        retries = self._turn_state.retries + 1
        if retries > self.retry.max_retries:
            return self._end_session(EndReason.STREAM_ERROR, now_ns)
        if self._session.chain_turns >= self.max_turns:
            return self._end_session(EndReason.MAX_TURNS, now_ns)
        self._begin_turn()
        self._turn_state.retries = retries
        return self._back_off(self.retry.delay_ns(retries), now_ns)

    def _back_off(self, delay_ns: int, now_ns: int) -> WaitUntil:
        self._session.wake_ns = now_ns + delay_ns
        self._enter(Phase.BACKOFF)
        self.record.add(Retry, now_ns, self.model, delay_ns)
        return WaitUntil(self._session.wake_ns)

    def _request_layer(
        self, status: int | None, now_ns: int, retry_after_ns: int | None
    ) -> list[Command]:
        """Rule 6a: a request that failed before any event, under the profile's inner layer."""
        settings = self.profile.request_retry
        assert settings is not None
        final = status in self.profile.final_without_retry_after and retry_after_ns is None
        if final or not is_retryable(status):
            return [self._end_session(EndReason.REQUEST_FAILED, now_ns)]
        if self._turn_state.request_retries < settings.max_retries:
            self._turn_state.request_retries += 1
            delay_ns = settings.delay_ns(self._turn_state.request_retries, retry_after_ns)
            return [self._back_off(delay_ns, now_ns)]
        # Spent: one failure of the outer layer, which starts afresh.
        self._turn_state.request_retries = 0
        return self._after_failure(
            now_ns, overloaded=status == OVERLOADED_STATUS, retryable=True,
            retry_after_ns=retry_after_ns,
        )

    def _kept_results(self) -> list[dict[str, Any]]:
        """The batch's results for the transcript: under rule 2a's `run_each`, the first result
        of an id only, and none for an id the transcript already answered."""
        if not self._attempt_state.duplicates:
            return list(self._attempt_state.results)
        seen = set(self._attempt_state.shadowed)
        kept = []
        for result in self._attempt_state.results:
            tool_use_id = result["tool_use_id"]
            if tool_use_id not in seen:
                seen.add(tool_use_id)
                kept.append(result)
        return kept

    def _take_attachments(self, now_ns: int) -> list[dict[str, Any]]:
        blocks = []
        for attachment in self._session.pending:
            self.record.add(AttachmentAppended, now_ns, attachment.kind, attachment.arrived_ns)
            blocks.append(attachment.block)
        self._session.pending = []
        return blocks

    def _append_user(self, blocks: list[dict[str, Any]]) -> None:
        """Append user content, merging it into a trailing user message (rule 11). The trailing
        message is replaced, not mutated: earlier request bodies share it."""
        if self.messages and self.messages[-1]["role"] == "user":
            last = self.messages[-1]
            earlier = last["content"]
            if isinstance(earlier, str):
                earlier = [{"type": "text", "text": earlier}]
            self.messages[-1] = {**last, "content": [*earlier, *blocks]}
        else:
            self.messages.append({"role": "user", "content": blocks})

    def _end_session(self, reason: EndReason | str, now_ns: int) -> SessionEnded:
        """End the chain; `reason` is the loop's own or the last stop reason. Commands and the
        record carry plain strings."""
        self._enter(Phase.IDLE)
        text = reason.value if isinstance(reason, EndReason) else reason
        self.record.add(SessionEnd, now_ns, text)
        return SessionEnded(text)


def _tool_use_ids(messages: Sequence[Mapping[str, Any]]) -> set[str]:
    """The ids of the tool_use blocks of a transcript; a malformed part holds none (the first
    request's check reports it)."""
    ids: set[str] = set()
    for message in messages:
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "tool_use":
                tool_use_id = block.get("id")
                if isinstance(tool_use_id, str):
                    ids.add(tool_use_id)
    return ids
