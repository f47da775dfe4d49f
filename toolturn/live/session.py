"""`run_session`: one session of `ToolTurnLoop` run for real, with asyncio and the official SDK.

    client = anthropic.AsyncAnthropic(base_url=..., api_key=..., max_retries=0)
    loop = ToolTurnLoop(tool_definitions, model="claude-sonnet-4-5")
    result = await run_session(client, loop, "Fix the failing test.", {"Read": read_file, ...})

The driver carries out the loop's commands (`toolturn.runtime.commands`):

- `SendRequest`: `client.messages.create(**body)` (streaming); each event goes to `on_event` as
  `event.to_dict()`, then `stream_ended`. An HTTP error status goes to `request_failed` with the
  server's retry-after; a connection that fails goes there with no status; an `event: error`
  (which the SDK raises) goes to `on_event` as the event; a stream cut off (the SDK raises a
  transport error) goes to `stream_ended`. Every report carries the request's id, so input about
  an older request is ignored by the loop.
- `StartTool`: the tool runs as an asyncio task (`toolturn.live.tools` says how results map);
  `CancelTool` cancels that task. A call still running after `tool_timeout_ns` (default
  `toolturn.tools.execution.TOOL_TIMEOUT_NS`, 10 minutes; None: no limit) is cancelled and ends as
  an is_error result saying it timed out. `AskPermission` awaits `ask_permission` (no asker:
  denied).
- `CancelRequest` cancels the reading of the response; `WaitUntil` sleeps, then `wake`.
- `SessionEnded` ends the session: unfinished tasks are cancelled and the result returned.

With `speed`, the loop's clock runs `speed` times faster than the wall clock: `now_ns` is the
wall-clock time since the origin times `speed`, so every time the loop records is in the
scenario's scale, and every wait it asks for (a `WaitUntil`, a retry-after, the tool timeout) is
waited for that time divided by `speed`. The server is expected to run at the same speed. With a
`user` (`toolturn.user.SimulatedUser`), the driver carries out the simulated user's interrupts and
attachments as the simulator does (`toolturn.engine.user_hooks`), on this clock; with
`permission_answers`, a call that asks is answered by it after its delay (instead of
`ask_permission`). With `turn_header`, each request also carries `x-sim-turn` (the loop's turn,
from 1 as every table counts turns) so `toolturn serve` keys it as the simulator keys the twin
request. With `sent_at_header`, each request also carries `x-sim-sent-at`
(`toolturn.wire.sent_at`), the monotonic time its `SendRequest` was carried out, so a server on
this host times the response from then: the request's transit (the SDK, the event loop,
loopback HTTP) then costs the loop no time, as in the simulator (only a server on the same host
can use it). Every request's log (`toolturn.metrics.request_log`) is in the result, and
appended to `requests` as it is sent.

The client must have `max_retries=0`: the loop does its own retries (with its backoff, its
fallback model and its record of every attempt); SDK retries would hide failures from it.
Time (`now_ns`) is `time.monotonic_ns()` from `origin_ns`: by default the call of
`run_session`; a later prompt to the same loop passes the first result's `origin_ns`, so the
loop's record keeps one clock. An exception the loop
or the driver raises (a bug, not a failure of the model or a tool) ends the session and is
raised from `run_session`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx2

from toolturn.live.sdk_errors import error_event, is_error_event, retry_after_ns
from toolturn.live.tools import LiveCall, LiveTool, ToolError
from toolturn.metrics.request_log import CANCELLED, CONNECTION_ERROR, RequestLog
from toolturn.runtime.attachments import AttachmentKind
from toolturn.runtime.commands import (
    AskPermission,
    CancelRequest,
    CancelTool,
    Command,
    SendRequest,
    SessionEnded,
    StartTool,
    TurnEnded,
    WaitUntil,
)
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.outcomes import ToolOutcome
from toolturn.runtime.results import ToolContent
from toolturn.tools.execution import TOOL_TIMEOUT_NS, timeout_text
from toolturn.user import (
    AttachmentArrivals,
    PermissionAnswer,
    PlannedInterrupt,
    SimulatedUser,
    attachment_block,
    in_phase,
)
from toolturn.user.draws import InterruptPhase
from toolturn.wire.identity import TURN_HEADER
from toolturn.wire.sent_at import SENT_AT_HEADER

NS_PER_S = 1_000_000_000
NO_ASKER = "no one was asked: the live driver was given no ask_permission"

# Decides whether a call may run: (name, input) -> allowed, with an optional reason.
AskPermissionFn = Callable[[str, dict[str, Any]], Awaitable[tuple[bool, str | None]]]
# Sees every command the loop returns, with the time it was returned.
Observer = Callable[[Command, int], None]
# The simulated user's answer to one permission ask.
PermissionAnswers = Callable[[AskPermission], PermissionAnswer]


@dataclass(frozen=True, slots=True)
class SessionResult:
    # SessionEnded's reason: the last stop reason (`end_turn`, ...) or the loop's own
    # (`max_turns`, `request_failed`, `stream_error`, `interrupted`).
    reason: str
    # The transcript in API shape (the loop's `messages`).
    messages: list[dict[str, Any]]
    turns: tuple[TurnEnded, ...]
    # Requests sent in this session, retries included.
    requests: int
    # What went wrong on the wire, in order: "http 529", "connection error",
    # "error event overloaded_error", "stream cut".
    failures: tuple[str, ...]
    # The `time.monotonic_ns()` the session's times count from, and the time at its end (on
    # the loop's clock: times the speed).
    origin_ns: int
    elapsed_ns: int
    # What the driver saw of each request, in order.
    request_logs: tuple[RequestLog, ...] = ()


async def run_session(
    client: anthropic.AsyncAnthropic,
    loop: ToolTurnLoop,
    prompt: str | list[dict[str, Any]],
    tools: Mapping[str, LiveTool],
    *,
    headers: Mapping[str, str] | None = None,
    ask_permission: AskPermissionFn | None = None,
    observer: Observer | None = None,
    origin_ns: int | None = None,
    tool_timeout_ns: int | None = TOOL_TIMEOUT_NS,
    speed: float = 1.0,
    user: SimulatedUser | None = None,
    permission_answers: PermissionAnswers | None = None,
    turn_header: bool = False,
    requests: list[RequestLog] | None = None,
    sent_at_header: bool = False,
) -> SessionResult:
    """Run the session `loop.start(prompt)` begins until it ends; see the module docstring.
    `headers` go with every request (e.g. `x-sim-session` for `toolturn serve`)."""
    if tool_timeout_ns is not None and tool_timeout_ns <= 0:
        raise ValueError(f"tool_timeout_ns must be positive or None, got {tool_timeout_ns}")
    if not speed > 0:
        raise ValueError(f"speed must be positive, got {speed}")
    if client.max_retries != 0:
        raise ValueError(
            f"the client has max_retries={client.max_retries}; give it max_retries=0, "
            "the tool-turn loop does its own retries"
        )
    origin = time.monotonic_ns() if origin_ns is None else origin_ns
    twin = _Twin(speed, user, permission_answers, turn_header, [] if requests is None else requests,
                 sent_at_header)
    driver = _Driver(
        client, loop, tools, dict(headers or {}), ask_permission, observer, origin,
        tool_timeout_ns, twin,
    )
    return await driver.run(prompt)


@dataclass(frozen=True, slots=True)
class _Twin:
    """What makes a live session the twin of a simulated one (see the module docstring)."""

    speed: float
    user: SimulatedUser | None
    permission_answers: PermissionAnswers | None
    turn_header: bool
    logs: list[RequestLog]
    sent_at_header: bool = False


class _Driver:
    def __init__(
        self,
        client: anthropic.AsyncAnthropic,
        loop: ToolTurnLoop,
        tools: Mapping[str, LiveTool],
        headers: dict[str, str],
        ask_permission: AskPermissionFn | None,
        observer: Observer | None,
        origin_ns: int,
        tool_timeout_ns: int | None,
        twin: _Twin,
    ) -> None:
        self._client = client
        self._loop = loop
        self._tools = tools
        self._headers = headers
        self._ask_permission = ask_permission
        self._observer = observer
        self._origin_ns = origin_ns
        self._tool_timeout_ns = tool_timeout_ns
        self._ended: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._tasks: set[asyncio.Task[None]] = set()
        self._tool_tasks: dict[str, asyncio.Task[None]] = {}
        self._streams: set[asyncio.Task[None]] = set()
        self._turns: list[TurnEnded] = []
        self._failures: list[str] = []
        self._requests = 0
        self.logs = twin.logs
        self.speed = twin.speed
        self.user = twin.user
        self.permission_answers = twin.permission_answers
        self.turn_header = twin.turn_header
        self.sent_at_header = twin.sent_at_header
        # The turn whose tools phase has begun (0: none), as the simulator's session keeps it.
        self._tools_turn = 0

    def now(self) -> int:
        return self._on_clock(time.monotonic_ns())

    def _on_clock(self, monotonic_ns: int) -> int:
        """`monotonic_ns` on the loop's clock."""
        elapsed = monotonic_ns - self._origin_ns
        return elapsed if self.speed == 1.0 else round(elapsed * self.speed)

    async def _sleep_until(self, time_ns: int) -> None:
        """Sleep until the loop's clock reads `time_ns`."""
        wait_ns = time_ns - self.now()
        if wait_ns > 0:
            await asyncio.sleep(wait_ns / self.speed / NS_PER_S)

    async def run(self, prompt: str | list[dict[str, Any]]) -> SessionResult:
        try:
            self._handle(self._loop.start(prompt, self.now()))
            reason = await self._ended
        finally:
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
        return SessionResult(
            reason=reason,
            messages=self._loop.messages,
            turns=tuple(self._turns),
            requests=self._requests,
            failures=tuple(self._failures),
            origin_ns=self._origin_ns,
            elapsed_ns=self.now(),
            request_logs=tuple(self.logs),
        )

    # ----- commands -----

    def _handle(self, commands: list[Command]) -> None:
        for command in commands:
            if self._observer is not None:
                self._observer(command, self.now())
            self._carry_out(command)

    def _carry_out(self, command: Command) -> None:
        match command:
            case SendRequest():
                self._send(command)
            case StartTool():
                self._start_tool(command)
            case CancelTool():
                cancelled = self._tool_tasks.pop(command.tool_use_id, None)
                if cancelled is not None:
                    cancelled.cancel()
            case AskPermission():
                self._spawn(self._ask(command))
            case CancelRequest():
                self._cancel_request()
            case WaitUntil():
                self._spawn(self._wake_at(command.time_ns))
            case TurnEnded():
                self._turns.append(command)
                self._tools_turn = 0
            case SessionEnded():
                # As the simulator's session does: a chain can end without its turn's
                # TurnEnded, and its attachments must end with it (issue 13, defect 1).
                self._tools_turn = 0
                if not self._ended.done():
                    self._ended.set_result(command.reason)
            case _:
                pass  # ToolProgress, ResultReady, DiscardedResult: for observers only.

    def _send(self, command: SendRequest) -> None:
        self._requests += 1
        # One instant for the log's sending time and the header's, so a server that times the
        # response from the header times it from the log's sending.
        sent_ns = time.monotonic_ns()
        self.logs.append(RequestLog(command.request_id, self._loop.turn,
                                    command.attempt, command.model, self._on_clock(sent_ns)))
        if self.user is not None:
            self.user.request_sent(self._loop.turn)
        self._streams.add(self._spawn(self._read_response(command, sent_ns)))

    def _start_tool(self, command: StartTool) -> None:
        if self._tools_turn != self._loop.turn:
            self._tools_turn = self._loop.turn
            self._tools_phase_started(self._tools_turn)
        task = self._spawn(self._run_tool(command))
        self._tool_tasks[command.tool_use_id] = task

    def _cancel_request(self) -> None:
        for stream in self._streams:
            stream.cancel()
        if self.logs:
            self._end(self.logs[-1], CANCELLED, self.now())

    def _end(self, log: RequestLog, status: str | None, now_ns: int) -> None:
        """`log`'s request is over: its status and the loop's summary of what was read."""
        log.end(status, now_ns, self._loop.response_summary(log.request_index))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(self._guarded(work))
        self._tasks.add(task)
        task.add_done_callback(lambda done: self._forget(done, work))
        return task

    def _forget(self, task: asyncio.Task[None], work: Coroutine[Any, Any, None]) -> None:
        self._tasks.discard(task)
        self._streams.discard(task)
        # A task cancelled before it ran never started `work` (a tool cancelled as it was
        # started): closed, it is not reported as a coroutine never awaited. (A finished
        # coroutine's close does nothing.)
        work.close()

    async def _guarded(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work`; an exception it lets out ends the session with that exception."""
        try:
            await work
        except asyncio.CancelledError:
            raise
        except Exception as error:
            if not self._ended.done():
                self._ended.set_exception(error)

    # ----- the model -----

    async def _read_response(self, send: SendRequest, sent_ns: int) -> None:
        request_id = send.request_id
        loop = self._loop
        log = self.logs[-1]
        headers = self._headers
        if self.turn_header:
            headers = {**headers, TURN_HEADER: str(log.turn)}  # from 1, as the server reads it
        if self.sent_at_header:
            headers = {**headers, SENT_AT_HEADER: str(sent_ns)}
        try:
            stream = await self._client.messages.create(**send.request_body, extra_headers=headers)
        except anthropic.APIStatusError as error:
            self._failures.append(f"http {error.status_code}")
            now = self.now()
            self._end(log, str(error.status_code), now)
            wait_ns = retry_after_ns(error.response.headers)
            if wait_ns is not None:  # The server's wait is real time: on the loop's clock.
                wait_ns = round(wait_ns * self.speed)
            self._handle(loop.request_failed(error.status_code, now,
                                             retry_after_ns=wait_ns, request_id=request_id))
            return
        except anthropic.APIConnectionError:
            self._failures.append("connection error")
            now = self.now()
            self._end(log, CONNECTION_ERROR, now)
            self._handle(loop.request_failed(None, now, request_id=request_id))
            return
        log.status = "200"
        try:
            async with stream:
                async for event in stream:
                    self._event(log, event.to_dict())
        except asyncio.CancelledError:
            # The session ended while the SDK still waited for the stream's end (the loop ends
            # a turn at message_stop): the request's record keeps what the loop read of it.
            self._end(log, None, self.now())
            raise
        except anthropic.APIStatusError as error:
            if not is_error_event(error):
                raise
            event_dict = error_event(error)
            self._failures.append(f"error event {event_dict['error'].get('type')}")
            self._event(log, event_dict)
        except (anthropic.APIConnectionError, httpx2.TransportError):
            self._failures.append("stream cut")
        now = self.now()
        self._end(log, None, now)
        self._handle(loop.stream_ended(now, request_id))

    def _event(self, log: RequestLog, event: dict[str, Any]) -> None:
        now = self.now()
        first = log.n_events == 0
        log.saw_event(now)
        if first and self.user is not None:
            self._plan_interrupt(self.user.streaming_interrupt(log.turn, now))
        self._handle(self._loop.on_event(event, now, log.request_index))

    async def _wake_at(self, time_ns: int) -> None:
        await self._sleep_until(time_ns)
        self._handle(self._loop.wake(self.now()))

    # ----- the simulated user: interrupts and attachments, as `toolturn.engine.user_hooks` -----

    def _at(self, time_ns: int, action: Callable[[], None]) -> None:
        """Run `action` when the loop's clock reads `time_ns` (unless the session ends first)."""

        async def later() -> None:
            await self._sleep_until(time_ns)
            action()

        self._spawn(later())

    def _plan_interrupt(self, planned: PlannedInterrupt | None) -> None:
        if planned is not None:
            turn, phase = planned.turn, planned.phase
            self._at(planned.at_ns, lambda: self._user_interrupt(turn, phase))

    def _tools_phase_started(self, turn: int) -> None:
        if self.user is None:
            return
        planned, arrivals = self.user.tools_started(turn, self.now())
        self._plan_interrupt(planned)
        if arrivals is not None:
            self._next_attachment(arrivals, turn, 1)

    def _user_interrupt(self, turn: int, phase: InterruptPhase) -> None:
        if in_phase(self._loop, turn, phase):
            self._handle(self._loop.interrupt(self.now()))

    def _next_attachment(self, arrivals: AttachmentArrivals, turn: int, count: int) -> None:
        gap_ns, kind = arrivals.next()
        self._at(self.now() + gap_ns, lambda: self._attach(arrivals, turn, count, kind))

    def _attach(self, arrivals: AttachmentArrivals, turn: int, count: int, kind: str) -> None:
        # The simulator's rule (`toolturn.engine.user_hooks.UserHooks._attach`), kept the same.
        if self._loop.turn != turn or self._tools_turn != turn:
            return
        block = attachment_block(kind, count, turn)
        self._loop.attachment(block, self.now(), kind=AttachmentKind(kind))
        self._next_attachment(arrivals, turn, count + 1)

    # ----- tools -----

    async def _run_tool(self, start: StartTool) -> None:
        tool_use_id = start.tool_use_id

        def progress(value: Any) -> None:
            self._handle(self._loop.tool_progress(tool_use_id, value, self.now()))

        call = LiveCall(tool_use_id, start.name, start.input, progress)
        outcome = ToolOutcome.SUCCESS
        content: ToolContent
        limit = self._tool_timeout_ns
        deadline: asyncio.Timeout | None = None
        seconds = None if limit is None else limit / self.speed / NS_PER_S
        try:
            tool = self._tools.get(start.name)
            if tool is None:
                raise LookupError(f"the live driver has no implementation of {start.name!r}")
            async with asyncio.timeout(seconds) as deadline:
                content = await tool(call)
        except ToolError as error:
            outcome, content = ToolOutcome.ERROR, error.content
        except Exception as error:  # a crashing tool is the call's failure, not the session's
            if isinstance(error, TimeoutError) and deadline is not None and deadline.expired():
                assert limit is not None
                outcome, content = ToolOutcome.ERROR, timeout_text(start.name, limit)
            else:  # The tool's own TimeoutError, say, is its crash.
                outcome, content = ToolOutcome.EXCEPTION, f"{type(error).__name__}: {error}"
        self._tool_tasks.pop(tool_use_id, None)
        self._handle(self._loop.tool_finished(tool_use_id, outcome, content, self.now()))

    async def _ask(self, ask: AskPermission) -> None:
        message: str | None = None
        if self.permission_answers is not None:
            answer = self.permission_answers(ask)
            await self._sleep_until(self.now() + answer.delay_ns)
            allowed = answer.allowed
        elif self._ask_permission is None:
            allowed, message = False, NO_ASKER
        else:
            allowed, message = await self._ask_permission(ask.name, ask.input)
        self._handle(self._loop.permission_decided(ask.tool_use_id, allowed, self.now(),
                                                   message=message))
