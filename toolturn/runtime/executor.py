"""The streaming tool executor: one batch of tool calls (the tool_use blocks of one response).

Sans-I/O: every input is a method call carrying `now_ns`, and every method returns the commands
(`toolturn.runtime.commands`) the driver must carry out. The executor never runs a tool itself.

Rules
-----
1. A call enters with `add_tool_use` the moment its tool_use block completes. It is checked at
   once: an unknown tool name, input the accumulator could not parse (`input_error`) or input that
   fails the tool's JSON schema (`toolturn.runtime.validation`) ends the call immediately with an
   error result. A valid call is *queued*.
2. Each call moves queued -> executing -> completed -> handed over. "Executing" starts when the
   call is admitted; it includes waiting for a permission answer, since the call holds its
   concurrency slot while the user decides.
3. Admission keeps arrival order: the queue's head is admitted when the policy allows
   (`toolturn.runtime.policy`); a head that may not start holds back everything after it. Under
   `streaming` that is as soon as its block completes; under `at_message_stop` and `serial`
   nothing starts before `message_ended`. Whether a call is concurrency-safe is decided per
   call, from its input, when it is added (`ToolDefinition.safe_for`); a predicate that raises
   makes the call unsafe.
3a. A repeat (`add_tool_use(..., repeat=True)`: a second block with an id this batch already
   has, run under the `run_each` recovery choice) waits in the queue until the earlier call of
   its id has ended, so the driver's reports for an id are always about one running call.
3b. A call given its own `run_key` (`add_tool_use(..., run_key=...)`: a second block with an id
   this batch already has, under the `unchecked` recovery choice) is a call like any other,
   queued and started beside the first: the driver knows it by its key (`StartTool`,
   `CancelTool`, its reports, `ResultReady` and its `CallRecord` carry the key), and its
   tool_result answers the block's id, as the first one's does.
4. On admission the permission policy answers: allow -> `StartTool`; deny -> an error result;
   ask -> `AskPermission`, then `permission_decided` starts or denies the call.
5. `tool_progress` is passed to observers as `ToolProgress` at once and never becomes a result.
6. `tool_finished` (success, error, exception, cancelled) completes the call, which may admit
   queued calls and make results ready.
7. Results are handed over (`ResultReady`) in tool_use order: a result waits for every earlier
   call's result. Why: the order is then the same for every policy and every timing, so runs are
   reproducible and policies compare like for like; and the API expects the user message that
   answers an assistant turn to hold its tool_results in call order. Under the profile's
   `completion` result order each result is handed over the moment its call ends instead.
8. Sibling abort: an error or exception in a tool marked `cancels_siblings` ends every other call
   of the batch that is still queued or executing (running calls get `CancelTool`), and every
   call added later in the batch, each with a result naming the failed call. An error in any
   other tool cancels nothing; under the profile's `ignore` sibling choice, neither does this.
9. `abort(cause)` (user interrupt, broken stream): no further calls are accepted; queued calls
   never start; executing calls whose tool is `cancellable` (and calls still awaiting
   permission) get `CancelTool` and a synthetic result; non-cancellable running calls are left to
   finish and deliver their real result; with `cancel_running=False` every running call is left
   to finish. Every call still ends with exactly one result.
10. `discard(cause)` (retry, fallback): the attempt is abandoned. Nothing more is handed over.
    Every call not yet handed over is reported as `DiscardedResult` (its real result, or a
    synthetic one), running calls get `CancelTool`, and every call that was started (running or
    already finished) counts as a wasted speculative execution.
11. A cancelled call's result is decided when the executor cancels it; the driver's later report
    for that call (progress or finish) is accepted and ignored.
12. Each call records block-complete, queued, admitted, start, end and hand-over times, its
    outcome and the cause of a synthetic result (`records()`).
13. The runtime's own error results (unknown tool, invalid JSON, schema failure, cancelled) are
    worded by the profile's `error_texts`.
14. `retract(id)`: a call added before its block was really complete (a speculative start,
    `toolturn.runtime.protocol_timing`) whose arguments then changed leaves the batch as if it
    had never been added: out of the queue (a running or permission-pending call gets
    `CancelTool` with the cause `misfire`, and its later reports are ignored as in rule 11),
    and out of the hand-over order, so calls it held back may be handed over now. A result it
    had handed over already is returned for the receiver to drop, and reported to observers as a
    `DiscardedResult` (cause `misfire`). Its block is added again
    when it completes (`add_tool_use` under the same id, a new call); the withdrawn call stays
    in `records()` (cause `misfire`, and `wasted` if it had started), and the record gets a
    `CallRetracted`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from toolturn.runtime.commands import (
    AskPermission,
    CancelTool,
    DiscardedResult,
    ExecutorCommand,
    ResultReady,
    StartTool,
    ToolProgress,
)
from toolturn.runtime.errors import ToolTurnError
from toolturn.runtime.outcomes import CallOutcome, SyntheticCause, ToolOutcome
from toolturn.runtime.permission import PermissionDecision, PermissionPolicy, allow_all
from toolturn.runtime.policy import ExecutorPolicy, admission_for
from toolturn.runtime.record import (
    CallRetracted,
    PermissionAsked,
    Record,
    ResultHandedOver,
    SyntheticResult,
    ToolEnded,
    ToolQueued,
    ToolStarted,
    WastedExecution,
)
from toolturn.runtime.recovery import DEFAULT, RecoveryPolicy, ResultOrder, SiblingErrors
from toolturn.runtime.results import (
    ToolContent,
    exception_text,
    permission_denied_text,
    synthetic_text,
    tool_result,
)
from toolturn.runtime.tooldef import ToolDefinition
from toolturn.runtime.validation import InputValidation


class CallState(str, Enum):
    """Where a call is in rule 2: queued -> executing -> completed -> handed over."""

    QUEUED = "queued"
    EXECUTING = "executing"
    COMPLETED = "completed"
    HANDED_OVER = "handed_over"


_UNFINISHED = (CallState.QUEUED, CallState.EXECUTING)


class ExecutorClosedError(ToolTurnError, RuntimeError):
    """A call was added after the batch was aborted or discarded."""


@dataclass(frozen=True, slots=True)
class CallRecord:
    """What happened to one call, with times in ns (None: the call never reached that step),
    and the turn and attempt of the response that made it (its executor's)."""

    tool_use_id: str
    name: str
    turn: int
    attempt: int
    state: CallState
    block_complete_ns: int
    queued_ns: int | None
    admitted_ns: int | None
    start_ns: int | None
    end_ns: int | None
    handed_over_ns: int | None
    outcome: CallOutcome | None
    synthetic_cause: SyntheticCause | None
    wasted: bool


@dataclass(frozen=True, slots=True)
class Retraction:
    """What `ToolExecutor.retract` did: the commands to carry out, the result the call had
    handed over already (None: none; whoever took it must drop it), whether it had started
    (a wasted run), and whether its key is free again (no other call of the batch has it: a
    repeat's earlier call keeps it), so the block may come back as a call of its own."""

    commands: list[ExecutorCommand]
    withdrawn: dict[str, Any] | None
    wasted: bool
    freed: bool


class _Call:
    """A call's mutable state inside the executor."""

    __slots__ = (
        "admitted_ns", "answers", "block_complete_ns", "end_ns", "handed_over_ns", "input",
        "name", "outcome", "queued_ns", "result", "safe", "start_ns", "state", "synthetic_cause",
        "tool", "tool_use_id", "wasted",
    )

    def __init__(
        self, tool_use_id: str, name: str, tool_input: dict[str, Any],
        tool: ToolDefinition | None, now_ns: int, answers: str,
    ) -> None:
        # The key the driver knows the call by (rule 3b), and the id its tool_result answers.
        self.tool_use_id = tool_use_id
        self.answers = answers
        self.name = name
        self.input = tool_input
        self.tool = tool
        self.state = CallState.QUEUED
        self.block_complete_ns = now_ns
        self.queued_ns: int | None = None
        self.admitted_ns: int | None = None
        self.start_ns: int | None = None
        self.end_ns: int | None = None
        self.handed_over_ns: int | None = None
        self.outcome: CallOutcome | None = None
        self.synthetic_cause: SyntheticCause | None = None
        self.result: dict[str, Any] | None = None
        self.wasted = False
        self.safe = tool is not None and _safe(tool, tool_input)

    def freeze(self, turn: int, attempt: int) -> CallRecord:
        return CallRecord(
            self.tool_use_id, self.name, turn, attempt, self.state, self.block_complete_ns,
            self.queued_ns, self.admitted_ns, self.start_ns, self.end_ns, self.handed_over_ns,
            self.outcome, self.synthetic_cause, self.wasted,
        )


class ToolExecutor:
    """Runs the rules above for one batch. Make a new executor for each model response."""

    def __init__(
        self,
        tools: Mapping[str, ToolDefinition],
        policy: ExecutorPolicy | str = ExecutorPolicy.STREAMING,
        *,
        permission: PermissionPolicy = allow_all,
        record: Record | None = None,
        validation: InputValidation | None = None,
        profile: RecoveryPolicy = DEFAULT,
    ) -> None:
        """`validation` validates the calls' input (rule 1); a caller that makes many executors
        (a loop: one per response) builds it once for its tools (`toolturn.runtime.validation`);
        without one the executor builds its own. `profile` gives the result order, the sibling
        rule and the error wording (rules 7, 8, 13)."""
        self._tools = tools
        # A member is taken as it is: converting one costs two Python calls, and a loop makes
        # an executor per request.
        self.policy = policy if type(policy) is ExecutorPolicy else ExecutorPolicy(policy)
        self._admission = admission_for(self.policy)
        self._permission = permission
        self.record = record if record is not None else Record()
        # The batch is one response's: its calls belong to the record's turn and attempt now.
        self.turn, self.attempt = self.record.turn, self.record.attempt
        self._validation = (
            validation if validation is not None else InputValidation(tools.values())
        )
        self._texts = profile.error_texts
        self._in_completion_order = profile.result_order is ResultOrder.COMPLETION
        self._sibling_abort = profile.sibling_errors is SiblingErrors.CANCEL_SIBLINGS
        # The call each id's driver reports are about (a repeat takes over at admission).
        self._calls: dict[str, _Call] = {}
        self._order: list[_Call] = []
        # Every call ever added, retracted ones included (rule 14), for `records()`; the keys
        # whose latest call was retracted, free to be added again.
        self._every: list[_Call] = []
        self._retracted: set[str] = set()
        # Completed calls not yet handed over, in completion order (rule 7's other order).
        self._ready: list[_Call] = []
        self._handed_over = 0
        self._queue: deque[_Call] = deque()
        self._executing: dict[str, _Call] = {}
        self._executing_unsafe = 0
        self._message_ended = False
        self._closed = False
        self._discarded = False
        self._failed_sibling: str | None = None
        self.wasted_executions = 0

    # ----- inputs -----

    def add_tool_use(
        self,
        block: Mapping[str, Any],
        now_ns: int,
        *,
        input_error: str | None = None,
        input_json: str | None = None,
        repeat: bool = False,
        run_key: str | None = None,
    ) -> list[ExecutorCommand]:
        """A tool_use block completed. `input_error` is the accumulator's reason when the
        block's input JSON could not be parsed; `input_json`, when known, is the text the
        block's input was parsed from (`BlockMessage.input_json`): validation verdicts are then
        remembered by it, with no need to write the input out again. `repeat`: the id was
        given before in this batch and the call is run after the earlier one (rule 3a).
        `run_key`: the call runs beside the others under that key (rule 3b)."""
        if self._closed:
            raise ExecutorClosedError(f"tool_use {block.get('id')!r} added after abort or discard")
        block_id = block["id"]
        tool_use_id = block_id if run_key is None else run_key
        if tool_use_id in self._retracted and not repeat:
            self._retracted.discard(tool_use_id)  # Rule 14: the block comes back.
            del self._calls[tool_use_id]
        if (tool_use_id in self._calls) is not repeat:
            raise ValueError(
                f"duplicate tool_use id {tool_use_id!r}" if not repeat
                else f"repeat of an id never given: {tool_use_id!r}"
            )
        name = block["name"]
        tool_input = block.get("input")
        tool = self._tools.get(name)
        call_input = tool_input if isinstance(tool_input, dict) else {}
        call = _Call(tool_use_id, name, call_input, tool, now_ns, block_id)
        if not repeat:
            self._calls[tool_use_id] = call
        self._order.append(call)
        self._every.append(call)
        commands: list[ExecutorCommand] = []
        rejection = self._rejection(call, tool_input, input_error, input_json)
        if rejection is not None:
            outcome, text = rejection
            self._fail(call, outcome, text, now_ns)
        elif self._failed_sibling is not None:
            self._end_synthetic(call, SyntheticCause.SIBLING_ERROR, now_ns, self._failed_sibling)
        else:
            call.queued_ns = now_ns
            self.record.add(ToolQueued, now_ns, call.tool_use_id, call.name)
            self._queue.append(call)
            self._admit(now_ns, commands)
        self._hand_over(now_ns, commands)
        return commands

    def message_ended(self, now_ns: int) -> list[ExecutorCommand]:
        """The response ended: no more calls will be added; the baselines may start calls."""
        self._message_ended = True
        commands: list[ExecutorCommand] = []
        self._admit(now_ns, commands)
        self._hand_over(now_ns, commands)
        return commands

    def permission_decided(
        self, tool_use_id: str, allowed: bool, now_ns: int, *, message: str | None = None
    ) -> list[ExecutorCommand]:
        """The answer to an `AskPermission`; `message` is shown to the model on denial."""
        call = self._calls[tool_use_id]
        commands: list[ExecutorCommand] = []
        if call.state is not CallState.EXECUTING or call.start_ns is not None:
            return commands  # The call was cancelled while the question was open.
        if allowed:
            self._start(call, now_ns, commands)
        else:
            text = permission_denied_text(call.name, message)
            self._fail(call, CallOutcome.PERMISSION_DENIED, text, now_ns)
            self._admit(now_ns, commands)
            self._hand_over(now_ns, commands)
        return commands

    def tool_progress(self, tool_use_id: str, progress: Any, now_ns: int) -> list[ExecutorCommand]:
        """A running tool reported progress: observers hear of it, the transcript never does."""
        call = self._calls[tool_use_id]
        if call.state is not CallState.EXECUTING or call.start_ns is None:
            return []
        return [ToolProgress(tool_use_id, call.name, progress)]

    def tool_finished(
        self, tool_use_id: str, outcome: ToolOutcome | str, content: ToolContent, now_ns: int
    ) -> list[ExecutorCommand]:
        """A started tool stopped. `content` is the tool's result, or for an exception its
        message."""
        call = self._calls[tool_use_id]
        commands: list[ExecutorCommand] = []
        if call.state is not CallState.EXECUTING:
            return commands  # Already ended by a cancellation (rule 11).
        if call.start_ns is None:
            raise ValueError(f"tool {tool_use_id!r} finished but was never started")
        if type(outcome) is not ToolOutcome:
            outcome = ToolOutcome(outcome)
        if outcome is ToolOutcome.SUCCESS:
            result = tool_result(call.answers, content)
        elif outcome is ToolOutcome.ERROR:
            result = tool_result(call.answers, content, is_error=True)
        elif outcome is ToolOutcome.EXCEPTION:
            text = exception_text(call.name, _as_text(content))
            result = tool_result(call.answers, text, is_error=True)
        else:
            result = tool_result(call.answers, self._texts.cancelled_text(call.name), is_error=True)
        self._complete(call, _CALL_OUTCOMES[outcome], result, now_ns)
        failed = outcome in (ToolOutcome.ERROR, ToolOutcome.EXCEPTION)
        assert call.tool is not None  # only known tools start
        if (
            failed and call.tool.cancels_siblings and self._sibling_abort
            and self._failed_sibling is None
        ):
            self._failed_sibling = call.answers
            for other in self._unfinished():
                self._cancel(
                    other, SyntheticCause.SIBLING_ERROR, now_ns, commands, failed_call=tool_use_id
                )
        self._admit(now_ns, commands)
        self._hand_over(now_ns, commands)
        return commands

    def abort(
        self, cause: SyntheticCause, now_ns: int, *, cancel_running: bool = True
    ) -> list[ExecutorCommand]:
        """Stop the batch but keep its results (rule 9): user interrupt or broken stream."""
        self._closed = True
        self._message_ended = True
        commands: list[ExecutorCommand] = []
        for call in self._unfinished():
            running = call.start_ns is not None
            if running and not (cancel_running and call.tool is not None and call.tool.cancellable):
                continue
            self._cancel(call, cause, now_ns, commands)
        self._hand_over(now_ns, commands)
        return commands

    def discard(self, cause: SyntheticCause, now_ns: int) -> list[ExecutorCommand]:
        """Abandon the attempt (rule 10): retry or fallback."""
        self._closed = True
        self._message_ended = True
        self._discarded = True
        commands: list[ExecutorCommand] = []
        for call in self._order:
            if call.start_ns is not None:
                call.wasted = True
                self.wasted_executions += 1
                self.record.add(WastedExecution, now_ns, call.tool_use_id, call.name)
        for call in self._unfinished():
            self._cancel(call, cause, now_ns, commands)
        for call in self._order:
            if call.state is not CallState.HANDED_OVER:
                assert call.result is not None
                commands.append(
                    DiscardedResult(call.tool_use_id, call.result, call.synthetic_cause)
                )
        self._handed_over = len(self._order)
        self._ready = []
        return commands

    def retract(self, tool_use_id: str, now_ns: int) -> Retraction:
        """Withdraw the latest call of key `tool_use_id` (rule 14): its speculative start
        misfired."""
        call = next((c for c in reversed(self._order) if c.tool_use_id == tool_use_id), None)
        if call is None:
            raise ValueError(f"retract of a call not in the batch: {tool_use_id!r}")
        commands: list[ExecutorCommand] = []
        withdrawn = call.result if call.state is CallState.HANDED_OVER else None
        if call.state in _UNFINISHED:
            self._cancel(call, SyntheticCause.MISFIRE, now_ns, commands)
        if call in self._ready:
            self._ready.remove(call)
        if withdrawn is not None:
            self._handed_over -= 1
            # Observers took the result as handed over (a transcript log holds it for its
            # call's line): it is dropped now, as an abandoned attempt's results are.
            commands.append(DiscardedResult(call.tool_use_id, withdrawn, SyntheticCause.MISFIRE))
        self._order.remove(call)
        wasted = call.start_ns is not None
        record = self.record
        if wasted:
            call.wasted = True
            record.add(WastedExecution, now_ns, call.tool_use_id, call.name)
        record.add(CallRetracted, now_ns, call.tool_use_id, call.name)
        freed = not any(other.tool_use_id == tool_use_id for other in self._order)
        if freed:
            self._retracted.add(tool_use_id)
        self._admit(now_ns, commands)
        self._hand_over(now_ns, commands)
        return Retraction(commands, withdrawn, wasted, freed)

    # ----- state -----

    @property
    def done(self) -> bool:
        """True when the message has ended and every call's result has been handed over
        (or, after a discard, reported)."""
        return self._message_ended and self._handed_over == len(self._order)

    @property
    def call_count(self) -> int:
        """How many calls the batch was given (repeats of an id included)."""
        return len(self._order)

    def records(self) -> list[CallRecord]:
        """A frozen snapshot of every call, in the order they were added (tool_use order; a
        retracted call, rule 14, comes before its block's later call)."""
        turn, attempt = self.turn, self.attempt
        return [call.freeze(turn, attempt) for call in self._every]

    # ----- internals -----

    def _rejection(
        self, call: _Call, tool_input: Any, input_error: str | None, input_json: str | None
    ) -> tuple[CallOutcome, str] | None:
        texts = self._texts
        if call.tool is None:
            return CallOutcome.UNKNOWN_TOOL, texts.unknown_tool_text(call.name)
        if input_error is not None:
            return CallOutcome.INVALID_INPUT, texts.invalid_json_text(call.name, input_error)
        if not isinstance(tool_input, dict):
            why = "input is not a JSON object"
            return CallOutcome.INVALID_INPUT, texts.invalid_input_text(call.name, why)
        problem = self._validation.problem(call.name, tool_input, input_json)
        if problem is not None:
            return CallOutcome.INVALID_INPUT, texts.invalid_input_text(call.name, problem)
        return None

    def _admit(self, now_ns: int, commands: list[ExecutorCommand]) -> None:
        while self._queue and not self._closed:
            head = self._queue[0]
            assert head.tool is not None
            if head.tool_use_id in self._executing:
                return  # Rule 3a: a repeat waits for the earlier call of its id.
            if not self._admission.may_start(
                safe=head.safe,
                executing=len(self._executing),
                executing_unsafe=self._executing_unsafe,
                message_ended=self._message_ended,
            ):
                return
            self._queue.popleft()
            head.state = CallState.EXECUTING
            head.admitted_ns = now_ns
            self._executing[head.tool_use_id] = head
            self._calls[head.tool_use_id] = head
            if not head.safe:
                self._executing_unsafe += 1
            decision = self._permission(head.tool, head.input)
            if type(decision) is not PermissionDecision:
                decision = PermissionDecision(decision)
            if decision is PermissionDecision.ALLOW:
                self._start(head, now_ns, commands)
            elif decision is PermissionDecision.ASK:
                self.record.add(PermissionAsked, now_ns, head.tool_use_id, head.name)
                commands.append(AskPermission(head.tool_use_id, head.name, head.input))
            else:
                text = permission_denied_text(head.name, None)
                self._fail(head, CallOutcome.PERMISSION_DENIED, text, now_ns)

    def _start(self, call: _Call, now_ns: int, commands: list[ExecutorCommand]) -> None:
        call.start_ns = now_ns
        self.record.add(ToolStarted, now_ns, call.tool_use_id, call.name)
        commands.append(StartTool(call.tool_use_id, call.name, call.input))

    def _complete(
        self, call: _Call, outcome: CallOutcome, result: dict[str, Any], now_ns: int,
        cause: SyntheticCause | None = None,
    ) -> None:
        if call.state is CallState.EXECUTING:
            del self._executing[call.tool_use_id]
            if not call.safe:
                self._executing_unsafe -= 1
        call.state = CallState.COMPLETED
        if self._in_completion_order:
            self._ready.append(call)
        call.end_ns = now_ns
        call.outcome = outcome
        call.synthetic_cause = cause
        call.result = result
        record = self.record
        record.add(ToolEnded, now_ns, call.tool_use_id, call.name, outcome)
        if cause is not None:
            record.add(SyntheticResult, now_ns, call.tool_use_id, call.name, cause)

    def _fail(self, call: _Call, outcome: CallOutcome, text: str, now_ns: int) -> None:
        self._complete(call, outcome, tool_result(call.answers, text, is_error=True), now_ns)

    def _end_synthetic(
        self, call: _Call, cause: SyntheticCause, now_ns: int, failed_call: str | None = None
    ) -> None:
        text = synthetic_text(cause, call.name, failed_call=failed_call)
        result = tool_result(call.answers, text, is_error=True)
        self._complete(call, CallOutcome.SYNTHETIC, result, now_ns, cause)

    def _cancel(
        self, call: _Call, cause: SyntheticCause, now_ns: int, commands: list[ExecutorCommand],
        *, failed_call: str | None = None,
    ) -> None:
        if call.state is CallState.QUEUED:
            self._queue.remove(call)
        elif call.state is CallState.EXECUTING:
            # Admitted calls are either running or waiting for a permission answer: both are
            # withdrawn by the driver.
            commands.append(CancelTool(call.tool_use_id, cause))
        self._end_synthetic(call, cause, now_ns, failed_call)

    def _unfinished(self) -> list[_Call]:
        return [call for call in self._order if call.state in _UNFINISHED]

    def _hand_over(self, now_ns: int, commands: list[ExecutorCommand]) -> None:
        if self._discarded:
            return
        if self._in_completion_order:
            ready, self._ready = self._ready, []
            for call in ready:
                self._hand_over_one(call, now_ns, commands)
            return
        order = self._order
        completed = CallState.COMPLETED
        while self._handed_over < len(order) and order[self._handed_over].state is completed:
            self._hand_over_one(order[self._handed_over], now_ns, commands)

    def _hand_over_one(self, call: _Call, now_ns: int, commands: list[ExecutorCommand]) -> None:
        assert call.result is not None
        call.state = CallState.HANDED_OVER
        call.handed_over_ns = now_ns
        self._handed_over += 1
        self.record.add(ResultHandedOver, now_ns, call.tool_use_id, call.name)
        commands.append(ResultReady(call.tool_use_id, call.result, call.synthetic_cause))


def _safe(tool: ToolDefinition, tool_input: Mapping[str, Any]) -> bool:
    try:
        return tool.safe_for(tool_input)
    except Exception:  # rule 3: a predicate that fails makes the call unsafe
        return False


# How the executor records each way a tool can stop.
_CALL_OUTCOMES = {outcome: CallOutcome(outcome.value) for outcome in ToolOutcome}


def _as_text(content: ToolContent) -> str:
    if isinstance(content, str):
        return content
    return " ".join(str(block.get("text", "")) for block in content)
