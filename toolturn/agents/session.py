"""The `session` a user's agent is given: one simulated session of a scenario, in virtual time.

    async def agent(session: AgentSession) -> None:
        async for prompt in session.prompts():
            reply = await session.client.messages.create(model=..., tools=session.tools, ...)
            result = await session.call_tool("Read", {"file_path": "a.py"})

1. `client`: an `anthropic.AsyncAnthropic` bound to the scenario's mock model over an in-memory
   transport (`toolturn.agents.mock_transport`), with the SDK's own defaults (its retries, its
   timeout), naming the session in `x-sim-session` so the mock keys its draws as the simulator
   keys them. `openai`: an `openai.AsyncOpenAI` on the same transport and session, made when first
   read, for an agent on the Responses or Chat Completions API: the mock answers both as
   `toolturn serve` does (`toolturn.wire.codecs`), with the same draws, so a turn is the same
   story whichever protocol asks for it. `tools`: the scenario's tools in the Messages API's
   shape (`openai_tools(api)` in the OpenAI APIs' shapes).
2. `await call_tool(name, input)` runs the simulated tool the model asked for: the call is matched
   to the tool_use block the mock sent (by `tool_use_id` if given: the block's id, which is an
   OpenAI call's `call_id`, or the Responses function_call item's id; else the latest unclaimed
   block of that name and input, else of that name), so it plays the plan its simulated twin plays
   (`toolturn.tools.plans`): the permission answer after its delay, progress, the duration, the
   outcome (a hang runs until the agent cancels it or the tool timeout of
   `toolturn.tools.execution` ends it). It returns `ToolResult(content, is_error)`: an unknown
   tool, an input failing the schema, a denial, the tool's error or crash and a timeout are
   `is_error` results, as the simulated runtime words them. A call matching no block still runs,
   keyed by an id of its own. A runtime that asks permission itself gets the simulated user's
   answer from `permission(name, tool_use_id)` and calls with `asked=True`.
3. `async for prompt in prompts()`: the simulated user's prompts, the user's think time before
   each after the first. After a crash (`toolturn.agents.crashes`) the restarted agent's
   `prompts()` begins with `CONTINUE_TEXT`, then the prompts not yet given; `restarts` counts
   the crashes so far.
4. Interrupts: the simulated user presses Esc when its draw says (while a turn streams, or while
   its tools run: `toolturn.user` rule 2). That cancels the agent's current task, as Ctrl-C
   would: `asyncio.CancelledError` where it awaits. The current task is the agent's own, unless
   it runs the prompt's work through `await interruptible(work)`, which returns None when
   interrupted and lets the agent go on to the next prompt. A runtime that plays the user's
   interrupts itself takes `simulated_user()`; the session then makes none.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anthropic
import httpx2
import openai

from toolturn.agents.crashes import CONTINUE_TEXT, CrashDraws
from toolturn.agents.mock_transport import BASE_URL
from toolturn.agents.seen_requests import SeenRequest, SeenSession, SentCall
from toolturn.live.simulated_tools import play
from toolturn.live.tools import LiveCall, ToolError
from toolturn.runtime.results import ToolContent
from toolturn.scenario.schema import MAX_RESUMES_PER_PROMPT, Scenario
from toolturn.tools.execution import TOOL_TIMEOUT_NS, timeout_text
from toolturn.tools.plans import call_plan
from toolturn.user import PermissionAnswer, PlannedInterrupt, SimulatedUser, permission_answer
from toolturn.wire.identity import SESSION_HEADER

NS_PER_S = 1_000_000_000
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool's answer as a tool_result block carries it."""

    content: ToolContent
    is_error: bool = False


@dataclass(slots=True)
class ToolRun:
    """One `call_tool` call, for the tools table."""

    tool_use_id: str
    name: str
    turn_index: int  # from 1 (`toolturn.agents.seen_requests`)
    block_stop_ns: int
    entered_ns: int
    start_ns: int | None = None
    end_ns: int | None = None
    outcome: str = "cancelled"


@dataclass(slots=True)
class SessionFacts:
    """What the session noted besides the mock's view: tool runs, interrupts, prompts."""

    runs: list[ToolRun] = field(default_factory=list)
    interrupts: int = 0
    # The agent plays the simulated user's interrupts itself (`simulated_user()`): `interrupts`
    # stays 0, and the tables count the turns seen interrupted instead.
    agent_plays_user: bool = False
    # The turns whose tools phase began.
    tools_turns: set[int] = field(default_factory=set)
    # The turns a crash ended, with when; the calls running then.
    crashes: dict[int, int] = field(default_factory=dict)
    calls_lost: int = 0


class AgentSession:
    """See the module docstring."""

    def __init__(self, scenario: Scenario, session_id: int, http: httpx2.AsyncClient,
                 seen: SeenSession, model_names: tuple[str, str | None] = ("", None)) -> None:
        self.session_id = session_id
        # What the session is of, for a runtime that reads it (the project's own: examples/).
        self.scenario = scenario
        self.model_name, self.fallback_name = model_names
        self.client = anthropic.AsyncAnthropic(
            base_url=BASE_URL, api_key="virtual", http_client=http,
            default_headers={SESSION_HEADER: str(session_id)},
        )
        self._http = http
        self._openai: openai.AsyncOpenAI | None = None
        self.tools: list[dict[str, Any]] = [d.to_api() for d in scenario.tool_definitions()]
        self.facts = SessionFacts()
        self._scenario = scenario
        self._specs = {spec.name: spec for spec in scenario.tool_specs}
        self._seen = seen
        self._user = SimulatedUser(scenario, scenario.seed, session_id)
        self._task: asyncio.Task[Any] | None = None
        self._user_played = True  # False once the agent plays the simulated user itself
        self._unmatched = 0
        self._running: dict[int, int] = {}  # turn -> calls running
        self._crash_draws = CrashDraws(scenario, session_id)
        self._drawn: set[int] = set()  # turns whose crash was drawn
        self._prompts_given = 0
        self._resumes = 0  # crashes of the current prompt
        self.restarts = 0
        # Told when a crash comes (the arm cancels the agent's task and restarts it), with the
        # restart's delay.
        self.on_crash: Callable[[int], None] | None = None
        seen.on_arrival = self._arrived
        seen.on_first_event = self._first_event
        if self._crash_draws.on:
            seen.on_stream = self._stream_admitted

    @property
    def openai(self) -> openai.AsyncOpenAI:
        # Made when first read: most agents never do, and a client costs time to build.
        if self._openai is None:
            self._openai = openai.AsyncOpenAI(
                base_url=f"{BASE_URL}/v1", api_key="virtual", http_client=self._http,
                default_headers={SESSION_HEADER: str(self.session_id)},
            )
        return self._openai

    def openai_tools(self, api: str = "responses") -> list[dict[str, Any]]:
        """The scenario's tools as function tools of the Responses API (`api="responses"`) or of
        Chat Completions (`api="chat"`)."""
        if api not in ("responses", "chat"):
            raise ValueError(f"openai_tools: api must be 'responses' or 'chat', not {api!r}")
        functions = [{"name": tool["name"], "description": tool.get("description", ""),
                      "parameters": tool["input_schema"]} for tool in self.tools]
        if api == "chat":
            return [{"type": "function", "function": function} for function in functions]
        return [{"type": "function", **function} for function in functions]

    def attach(self, task: asyncio.Task[Any]) -> None:
        """The agent's own task: what an interrupt cancels by default."""
        self._task = task

    # ----- prompts and interrupts -----

    async def prompts(self) -> AsyncIterator[str]:
        user = self._user
        if self.restarts:
            yield CONTINUE_TEXT  # rule 3: the restarted process goes on where it was
        while self._prompts_given < user.prompt_count():
            prompt = self._prompts_given
            if prompt:
                await asyncio.sleep(user.think_time_ns() / NS_PER_S)
            self._prompts_given += 1
            self._resumes = 0
            yield user.prompt_text(prompt)

    async def interruptible(self, work: Awaitable[T]) -> T | None:
        """`work` as the task an interrupt cancels; None if it was."""
        outer, inner = self._task, asyncio.ensure_future(work)
        self._task = inner
        try:
            return await asyncio.shield(inner)
        except asyncio.CancelledError:
            if inner.cancelled() and not _cancelling(asyncio.current_task()):
                return None
            inner.cancel()
            raise
        finally:
            self._task = outer

    def simulated_user(self) -> SimulatedUser:
        """The simulated user, for a runtime that plays its interrupts itself (the project's live
        driver does, `toolturn.live.session`): the session then makes none (rule 4)."""
        self._user_played = False
        self.facts.agent_plays_user = True
        return self._user

    def permission(self, name: str, tool_use_id: str) -> PermissionAnswer:
        """The simulated user's answer if call `tool_use_id` of `name` asks permission, for a
        runtime that asks (then `call_tool(..., asked=True)` does not ask again)."""
        spec = self._specs.get(name)
        if spec is None:
            return PermissionAnswer(False, 0)
        return permission_answer(call_plan(spec, self._scenario.seed, self.session_id,
                                           tool_use_id))

    def _arrived(self, request: SeenRequest) -> None:
        if self._user_played:
            self._user.request_sent(request.turn_index)

    def _first_event(self, request: SeenRequest) -> None:
        if not self._user_played:
            return
        now = time.monotonic_ns()
        self._plan(self._user.streaming_interrupt(request.turn_index, now))

    # ----- crashes (`toolturn.agents.crashes`) -----

    def _stream_admitted(self, request: SeenRequest, events: list[dict[str, Any]], end_ns: int,
                         now_ns: int) -> None:
        turn = request.turn_index
        if turn in self._drawn:
            return
        self._drawn.add(turn)
        at_ns = self._crash_draws.crash_at(turn, events, end_ns, now_ns)
        if at_ns is not None:
            loop = asyncio.get_running_loop()
            loop.call_later((at_ns - now_ns) / NS_PER_S, self._crash, turn)

    def _crash(self, turn: int) -> None:
        requests = self._seen.requests
        latest = requests[-1]
        over = (latest.end_ns is not None and latest.stop_reason != "tool_use"
                and not self._running.get(turn))
        if (latest.turn_index != turn or over or self.on_crash is None
                or self._resumes >= MAX_RESUMES_PER_PROMPT):
            return
        self._resumes += 1
        self.restarts += 1
        now = time.monotonic_ns()
        self.facts.crashes[turn] = now
        self.facts.calls_lost += sum(1 for run in self.facts.runs
                                     if run.start_ns is not None and run.end_ns is None)
        self._seen.restart()
        self.on_crash(self._crash_draws.restart_delay_ns(turn))

    def _plan(self, planned: PlannedInterrupt | None) -> None:
        if planned is None:
            return
        loop = asyncio.get_running_loop()
        delay = max(0, planned.at_ns - time.monotonic_ns()) / NS_PER_S
        loop.call_later(delay, self._interrupt, planned)

    def _interrupt(self, planned: PlannedInterrupt) -> None:
        turn = planned.turn
        requests = self._seen.requests
        if not requests or requests[-1].turn_index != turn:
            return  # the turn is over: the user has nothing to stop
        if planned.phase == "streaming":
            latest = requests[-1]
            if latest.end_ns is not None:
                return
        elif not self._running.get(turn):
            return
        self.facts.interrupts += 1
        if self._task is not None and not self._task.done():
            self._task.cancel()

    # ----- tools -----

    async def call_tool(self, name: str, input: dict[str, Any], *,
                        tool_use_id: str | None = None, asked: bool = False) -> ToolResult:
        entered = time.monotonic_ns()
        sent = self._match(name, input, tool_use_id)
        if sent is None:
            self._unmatched += 1
            turn = self._seen.requests[-1].turn_index if self._seen.requests else 1
            sent = SentCall(tool_use_id or f"agent_call_{self._unmatched}", name, input, entered)
        else:
            turn = self._turn_of(sent)
        run = ToolRun(sent.tool_use_id, name, turn, sent.block_stop_ns, entered)
        self.facts.runs.append(run)
        self._running[turn] = self._running.get(turn, 0) + 1
        try:
            result = await self._run(run, input, asked)
        finally:
            self._running[turn] -= 1
            run.end_ns = time.monotonic_ns()
        return result

    def _match(self, name: str, input: dict[str, Any], tool_use_id: str | None
               ) -> SentCall | None:
        for request in reversed(self._seen.requests):
            for wanted in (lambda c: c.input == input, lambda c: True):
                for call in request.calls:
                    if call.claimed or call.name != name:
                        continue
                    named = tool_use_id in (call.tool_use_id, call.item_id)
                    if named if tool_use_id else wanted(call):
                        call.claimed = True
                        return call
            if request.calls and tool_use_id is None:
                return None  # only the latest response's calls are the agent's to run
        return None

    def _turn_of(self, sent: SentCall) -> int:
        for request in self._seen.requests:
            if any(call is sent for call in request.calls):  # the block itself, not an equal one
                return request.turn_index
        return 1

    async def _run(self, run: ToolRun, input: dict[str, Any], asked: bool) -> ToolResult:
        spec = self._specs.get(run.name)
        if spec is None:
            run.outcome = "unknown_tool"
            return ToolResult(f"Error: No such tool available: {run.name}", True)
        problem = spec.input_problem(input)
        if problem is not None:
            run.outcome = "invalid_input"
            return ToolResult(f"InputValidationError: {problem}", True)
        plan = call_plan(spec, self._scenario.seed, self.session_id, run.tool_use_id)
        if plan.permission_delay_ns and not asked:
            await asyncio.sleep(plan.permission_delay_ns / NS_PER_S)
        if not (plan.permitted or asked):
            run.outcome = "permission_denied"
            return ToolResult(f"Permission to use {run.name} was denied.", True)
        run.start_ns = time.monotonic_ns()
        if run.turn_index not in self.facts.tools_turns and self._user_played:
            self.facts.tools_turns.add(run.turn_index)
            planned, _ = self._user.tools_started(run.turn_index, run.start_ns)
            self._plan(planned)
        call = LiveCall(run.tool_use_id, run.name, input, lambda value: None)
        try:
            async with asyncio.timeout(TOOL_TIMEOUT_NS / NS_PER_S):
                content = await play(plan, call, 1.0)
        except ToolError as error:
            run.outcome = "error"
            return ToolResult(error.content, True)
        except TimeoutError:
            run.outcome = "error"
            return ToolResult(timeout_text(run.name, TOOL_TIMEOUT_NS), True)
        except RuntimeError as error:
            run.outcome = "exception"
            return ToolResult(f"Error: {error}", True)
        run.outcome = "success"
        return ToolResult(content)


def _cancelling(task: asyncio.Task[Any] | None) -> bool:
    """Whether `task` itself is being cancelled (not just a task it awaited)."""
    return task is not None and task.cancelling() > 0
