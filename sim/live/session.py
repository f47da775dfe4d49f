"""`run_session`: one session of `ToolTurnLoop` run for real, with asyncio and the official SDK.

    client = anthropic.AsyncAnthropic(base_url=..., api_key=..., max_retries=0)
    loop = ToolTurnLoop(tool_definitions, model="claude-sonnet-4-5")
    result = await run_session(client, loop, "Fix the failing test.", {"Read": read_file, ...})

The driver carries out the loop's commands (`sim.runtime.commands`):

- `SendRequest`: `client.messages.create(**body)` (streaming); each event goes to `on_event` as
  `event.to_dict()`, then `stream_ended`. An HTTP error status goes to `request_failed` with the
  server's retry-after; a connection that fails goes there with no status; an `event: error`
  (which the SDK raises) goes to `on_event` as the event; a stream cut off (the SDK raises a
  transport error) goes to `stream_ended`. Every report carries the request's id, so input about
  an older request is ignored by the loop.
- `StartTool`: the tool runs as an asyncio task (`sim.live.tools` says how results map);
  `CancelTool` cancels that task. A call still running after `tool_timeout_ns` (default
  `sim.tools.execution.TOOL_TIMEOUT_NS`, 10 minutes; None: no limit) is cancelled and ends as
  an is_error result saying it timed out. `AskPermission` awaits `ask_permission` (no asker:
  denied).
- `CancelRequest` cancels the reading of the response; `WaitUntil` sleeps, then `wake`.
- `SessionEnded` ends the session: unfinished tasks are cancelled and the result returned.

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

from sim.live.sdk_errors import error_event, is_error_event, retry_after_ns
from sim.live.tools import LiveCall, LiveTool, ToolError
from sim.runtime.commands import (
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
from sim.runtime.loop import ToolTurnLoop
from sim.runtime.outcomes import ToolOutcome
from sim.runtime.results import ToolContent
from sim.tools.execution import TOOL_TIMEOUT_NS, timeout_text

NS_PER_S = 1_000_000_000
NO_ASKER = "no one was asked: the live driver was given no ask_permission"

# Decides whether a call may run: (name, input) -> allowed, with an optional reason.
AskPermissionFn = Callable[[str, dict[str, Any]], Awaitable[tuple[bool, str | None]]]
# Sees every command the loop returns, with the time it was returned.
Observer = Callable[[Command, int], None]


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
    # The `time.monotonic_ns()` the session's times count from, and the time at its end.
    origin_ns: int
    elapsed_ns: int


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
) -> SessionResult:
    """Run the session `loop.start(prompt)` begins until it ends; see the module docstring.
    `headers` go with every request (e.g. `x-sim-session` for `sim serve`)."""
    if tool_timeout_ns is not None and tool_timeout_ns <= 0:
        raise ValueError(f"tool_timeout_ns must be positive or None, got {tool_timeout_ns}")
    if client.max_retries != 0:
        raise ValueError(
            f"the client has max_retries={client.max_retries}; give it max_retries=0, "
            "the tool-turn loop does its own retries"
        )
    origin = time.monotonic_ns() if origin_ns is None else origin_ns
    driver = _Driver(
        client, loop, tools, dict(headers or {}), ask_permission, observer, origin, tool_timeout_ns
    )
    return await driver.run(prompt)


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

    def now(self) -> int:
        return time.monotonic_ns() - self._origin_ns

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
        )

    # ----- commands -----

    def _handle(self, commands: list[Command]) -> None:
        for command in commands:
            if self._observer is not None:
                self._observer(command, self.now())
            match command:
                case SendRequest():
                    self._requests += 1
                    self._streams.add(self._spawn(self._read_response(command)))
                case StartTool():
                    task = self._spawn(self._run_tool(command))
                    self._tool_tasks[command.tool_use_id] = task
                case CancelTool():
                    cancelled = self._tool_tasks.pop(command.tool_use_id, None)
                    if cancelled is not None:
                        cancelled.cancel()
                case AskPermission():
                    self._spawn(self._ask(command))
                case CancelRequest():
                    for stream in self._streams:
                        stream.cancel()
                case WaitUntil():
                    self._spawn(self._wake_at(command.time_ns))
                case TurnEnded():
                    self._turns.append(command)
                case SessionEnded():
                    if not self._ended.done():
                        self._ended.set_result(command.reason)
                case _:
                    pass  # ToolProgress, ResultReady, DiscardedResult: for observers only.

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(self._guarded(work))
        self._tasks.add(task)
        task.add_done_callback(self._forget)
        return task

    def _forget(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._streams.discard(task)

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

    async def _read_response(self, send: SendRequest) -> None:
        request_id = send.request_id
        loop = self._loop
        try:
            stream = await self._client.messages.create(
                **send.request_body, extra_headers=self._headers
            )
        except anthropic.APIStatusError as error:
            self._failures.append(f"http {error.status_code}")
            wait_ns = retry_after_ns(error.response.headers)
            self._handle(loop.request_failed(error.status_code, self.now(),
                                             retry_after_ns=wait_ns, request_id=request_id))
            return
        except anthropic.APIConnectionError:
            self._failures.append("connection error")
            self._handle(loop.request_failed(None, self.now(), request_id=request_id))
            return
        try:
            async with stream:
                async for event in stream:
                    self._handle(loop.on_event(event.to_dict(), self.now(), request_id))
        except anthropic.APIStatusError as error:
            if not is_error_event(error):
                raise
            event_dict = error_event(error)
            self._failures.append(f"error event {event_dict['error'].get('type')}")
            self._handle(loop.on_event(event_dict, self.now(), request_id))
        except (anthropic.APIConnectionError, httpx2.TransportError):
            self._failures.append("stream cut")
        self._handle(loop.stream_ended(self.now(), request_id))

    async def _wake_at(self, time_ns: int) -> None:
        wait_ns = time_ns - self.now()
        if wait_ns > 0:
            await asyncio.sleep(wait_ns / NS_PER_S)
        self._handle(self._loop.wake(self.now()))

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
        try:
            tool = self._tools.get(start.name)
            if tool is None:
                raise LookupError(f"the live driver has no implementation of {start.name!r}")
            async with asyncio.timeout(None if limit is None else limit / NS_PER_S) as deadline:
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
        message: str | None
        if self._ask_permission is None:
            allowed, message = False, NO_ASKER
        else:
            allowed, message = await self._ask_permission(ask.name, ask.input)
        self._handle(self._loop.permission_decided(ask.tool_use_id, allowed, self.now(),
                                                   message=message))
