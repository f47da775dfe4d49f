"""The agent arm of a run: a user's `async def agent(session)` run once per session of a scenario,
at each load level, on the virtual clock, its rows written as a unit's parts beside the policies'.

    arm = AgentArm(scenario, agent, "agent:my_agent:agent")
    for level in arm.levels():
        stats = arm.run_level(level, parts / f"agent-{level}")

1. A load level is one run of a fresh `VirtualLoop` (`toolturn.agents.virtual_loop`) with a fresh
   mock model behind an in-memory transport, as each simulation gets its own model. Sessions come
   as the scenario's load says (`toolturn.engine.arrivals`: closed, a new session when one ends;
   or open, at the drawn arrival times), ids from 0, each with its own `AgentSession`.
2. `agent(session)` returning ends the session `completed`. An interrupt's CancelledError
   escaping it ends it `interrupted`. Any other exception ends it `agent_error`, SystemExit and
   a CancelledError the agent raised itself (not ours) included: one line on stderr names the
   session and the exception's type and message (made printable), the sessions table keeps
   them (`error_type`, `error_message`), and the arm goes on. KeyboardInterrupt stays the
   user's Ctrl-C: it stops the run. Real I/O the loop refused (`RealIORefused`,
   `toolturn.agents.virtual_loop` rule 2) ends the session `agent_error` with the refusal even
   if the agent caught it (the SDK would retry it, then wrap it as a connection error).
3. At the scenario's horizon the sessions still running are cancelled and recorded as they
   stand (`horizon`). When every session waits for something nothing will do (the loop's
   stall, rule 4 there), the stuck sessions end `agent_error` with that said. Each level's
   `agent_error` sessions are counted (`LevelStats.errors`) for its stats line.
4. Rows go to `toolturn.metrics.parts.UnitParts` as each session ends
   (`toolturn.agents.agent_rows`): memory holds the sessions running, not the sessions run.
5. A session's crash (`toolturn.agents.crashes`) cancels its task; after the restart delay
   `agent(session)` is called again, on the same session, for the rest of it. A crash that comes
   while the agent ends another way (its exception, its return) still restarts it: the process
   died first.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2

from toolturn.agents.agent_rows import SessionEnd, agent_rows
from toolturn.agents.mock_transport import MockTransport
from toolturn.agents.seen_requests import SeenSession
from toolturn.agents.session import AgentSession
from toolturn.agents.virtual_loop import RealIORefused, StepStats, refused_io_hook, run_virtual
from toolturn.engine.arrivals import ClosedLoop, arrivals_for, load_levels
from toolturn.engine.collector import fewer_collections
from toolturn.errors import printable
from toolturn.metrics.parts import UnitParts
from toolturn.model.model import MockModel
from toolturn.model.tool_inputs import tool_inputs
from toolturn.scenario.schema import Scenario

NS_PER_S = 1_000_000_000
COMPLETED, INTERRUPTED, AGENT_ERROR, HORIZON = "completed", "interrupted", "agent_error", "horizon"
STALLED = ("VirtualStall", "the agent waited for something nothing would do")
Agent = Callable[[AgentSession], Coroutine[Any, Any, None]]
# Called with one line to say (an agent's exception).
Say = Callable[[str], None]


def say_on_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass(frozen=True, slots=True)
class AgentError:
    """A session that ended `agent_error`: the exception's type and message."""

    session_id: int
    type: str
    message: str

    def __str__(self) -> str:
        # One line whatever the message holds (newlines, escapes): the table keeps it as it is.
        return f"session {self.session_id}: {self.type}: {printable(self.message)}"


@dataclass(slots=True)
class LevelStats:
    """One load level of the arm: its sessions, the virtual time it spanned, the wall time it
    took and the loop's real time per virtual step."""

    sessions: int
    virtual_ns: int
    wall_s: float
    steps: StepStats
    # Each session that ended `agent_error`, in the order they ended.
    errors: list[AgentError]


class _Crash:
    """A session's crash waiting to be played: its restart delay, None when none is."""

    def __init__(self) -> None:
        self.delay_ns: int | None = None

    def came(self, task: asyncio.Task[None]) -> Callable[[int], None]:
        def crash(delay_ns: int) -> None:
            self.delay_ns = delay_ns
            task.cancel()  # the process dies: all its work with it

        return crash


class AgentArm:
    """See the module docstring."""

    def __init__(self, scenario: Scenario, agent: Agent, policy: str, *,
                 say: Say = say_on_stderr) -> None:
        self.scenario = scenario
        self.agent = agent
        self.policy = policy
        self.say = say

    def levels(self) -> list[tuple[int, float | None]]:
        """(load_level, load) of each level, in the run's order."""
        return list(enumerate(load_levels(self.scenario.load)))

    def columns(self, level: int) -> dict[str, Any]:
        """The unit columns of load level `level`'s rows (`toolturn.engine.plan.Unit.columns`),
        added when the run's tables are assembled."""
        return {"policy": self.policy, "profile": "default", "protocol": "anthropic",
                "load_level": level, "load": self.levels()[level][1]}

    def run_level(self, level: int, folder: Path) -> LevelStats:
        """Run load level `level` and write its parts into `folder` (rule 1)."""
        load = self.levels()[level][1]
        parts = UnitParts(folder)
        started = time.perf_counter()
        run = _LevelRun(self, load, parts)
        try:
            # The simulator's collector settings, for the same reason (toolturn.engine.collector).
            with fewer_collections():
                virtual_ns, steps = run_virtual(run.run())
        except BaseException:
            parts.abandon()
            raise
        parts.close(f"agent sessions {run.finished}")
        return LevelStats(run.finished, virtual_ns, time.perf_counter() - started, steps,
                          run.errors)


class _LevelRun:
    """The sessions of one load level (rules 1-4)."""

    def __init__(self, arm: AgentArm, load: float | None, parts: UnitParts) -> None:
        self.arm = arm
        self.scenario = arm.scenario
        self.load = load
        self.parts = parts
        self.model = MockModel(self.scenario.model, self.scenario.seed,
                               tool_inputs(self.scenario.tool_specs))
        self.seen: dict[int, SeenSession] = {}
        self.running: dict[int, tuple[AgentSession, asyncio.Task[None], int, int]] = {}
        self.stalled: set[int] = set()
        self.errors: list[AgentError] = []
        self.finished = 0
        # Set once the level stops (its horizon, or its last session ended): a cancellation is
        # then the stop's, never an interrupt's.
        self.stopping = False
        self.next_id = 0
        self.total = 0
        self.closed = False
        self.all_done: asyncio.Event | None = None
        self.http: httpx2.AsyncClient | None = None

    async def run(self) -> int:
        """Every session of the level; the virtual time at its end."""
        loop = asyncio.get_running_loop()
        setattr(loop, "on_stall", self._stall)  # noqa: B010 (VirtualLoop's hook, rule 3)
        self.all_done = asyncio.Event()
        arrivals = arrivals_for(self.scenario.load, self.scenario.seed, self.load)
        starter = None
        async with httpx2.AsyncClient(transport=MockTransport(self.model, self.seen)) as http:
            self.http = http
            if isinstance(arrivals, ClosedLoop):
                self.closed, self.total = True, arrivals.sessions
                for _ in range(min(arrivals.concurrency, arrivals.sessions)):
                    self._begin(0)
            else:
                self.total = len(arrivals.arrivals_ns)
                starter = asyncio.create_task(self._open(arrivals.arrivals_ns))
            try:
                await self._wait(self.scenario.load.horizon_ns)
            finally:
                self.stopping = True  # also when the run itself is interrupted (Ctrl-C)
            if starter is not None:
                starter.cancel()
            await self._stop_at_horizon()
        return time.monotonic_ns()

    async def _wait(self, horizon_ns: int | None) -> None:
        assert self.all_done is not None
        if not self.total:
            return
        try:
            await asyncio.wait_for(self.all_done.wait(),
                                   None if horizon_ns is None else horizon_ns / NS_PER_S)
        except TimeoutError:
            pass

    async def _open(self, arrivals_ns: tuple[int, ...]) -> None:
        for due in arrivals_ns:
            wait_ns = due - time.monotonic_ns()
            if wait_ns > 0:
                await asyncio.sleep(wait_ns / NS_PER_S)
            self._begin(due)

    def _begin(self, arrival_ns: int) -> None:
        assert self.http is not None
        session_id = self.next_id
        self.next_id += 1
        seen = self.seen[session_id] = SeenSession(session_id)
        session = AgentSession(self.scenario, session_id, self.http, seen,
                               (self.model.name, self.model.fallback_name))
        task = asyncio.create_task(self._session(session))
        session.attach(task)
        self.running[session_id] = (session, task, arrival_ns, time.monotonic_ns())

    async def _session(self, session: AgentSession) -> None:
        task = asyncio.current_task()
        assert task is not None
        refused: list[str] = []
        refused_io_hook.set(refused.append)  # this task's context, and its children's (rule 2)
        crash = _Crash()
        session.on_crash = crash.came(task)
        while True:
            ended = await self._play(session, task, crash)
            if crash.delay_ns is None:
                break
            await self._restart(task, crash)  # rule 5: the agent again, for the rest
        assert ended is not None  # None only while a crash is to be played
        session.on_crash = None  # a crash drawn for later finds the session over
        if refused and ended != INTERRUPTED:
            ended = (RealIORefused.__name__, refused[0])
        outcome = ended if isinstance(ended, str) else self._error(session.session_id, *ended)
        self._ended(session, outcome)

    async def _play(self, session: AgentSession, task: asyncio.Task[None], crash: _Crash
                    ) -> str | tuple[str, str] | None:
        """One run of `agent(session)`: its outcome, or its error's type and message (rules
        2-3); None once a crash stopped it."""
        try:
            await self.arm.agent(session)
        except asyncio.CancelledError:
            if self.stopping:
                raise  # the horizon, or the run itself interrupted
            if crash.delay_ns is not None:
                return None
            if session.session_id in self.stalled:
                return STALLED
            if task.cancelling() == 0:  # raised by the agent itself, not a cancellation of ours
                return ("CancelledError", "the agent raised CancelledError itself (no "
                        "interrupt)")
            if session.facts.interrupts and task.uncancel() == 0:
                return INTERRUPTED
            raise  # the run itself interrupted
        except (Exception, SystemExit) as error:  # SystemExit too: one agent ends, not the run
            if crash.delay_ns is not None:
                return None
            return (type(error).__name__, str(error))
        return None if crash.delay_ns is not None else COMPLETED

    async def _restart(self, task: asyncio.Task[None], crash: _Crash) -> None:
        delay_ns, crash.delay_ns = crash.delay_ns, None
        while task.cancelling():
            task.uncancel()  # the crash's cancellation is spent
        assert delay_ns is not None
        await asyncio.sleep(delay_ns / NS_PER_S)

    def _error(self, session_id: int, kind: str, message: str) -> str:
        error = AgentError(session_id, kind, message)
        self.errors.append(error)
        self.arm.say(f"toolturn run: {self.arm.policy}: {error}")
        return AGENT_ERROR

    def _ended(self, session: AgentSession, outcome: str) -> None:
        _, _, arrival_ns, start_ns = self.running.pop(session.session_id)
        error = None
        if outcome == AGENT_ERROR:
            last = self.errors[-1]
            error = (last.type, last.message)
        end = SessionEnd(arrival_ns, start_ns, time.monotonic_ns(), outcome, error=error)
        self._record(session, end)
        self.finished += 1
        if self.finished == self.total:
            assert self.all_done is not None
            self.all_done.set()
        elif self.closed and self.next_id < self.total:
            self._begin(time.monotonic_ns())

    def _record(self, session: AgentSession, end: SessionEnd) -> None:
        seen = self.seen.pop(session.session_id)
        self.parts.add_session(session.session_id,
                               agent_rows(seen, session.facts, end))
        self.model.forget_session(session.session_id)

    async def _stop_at_horizon(self) -> None:
        horizon_ns = self.scenario.load.horizon_ns
        stopped = sorted(self.running.items())
        for _, (_, task, _, _) in stopped:
            task.cancel()
        await asyncio.gather(*(task for _, (_, task, _, _) in stopped), return_exceptions=True)
        for _, (session, _, arrival_ns, start_ns) in stopped:
            end = SessionEnd(arrival_ns, start_ns, None, HORIZON, horizon_ns)
            self._record(session, end)
        self.running.clear()

    def _stall(self) -> None:
        """Every task waits for nothing: the stuck sessions end (rule 3)."""
        for session_id, (_, task, _, _) in sorted(self.running.items()):
            if session_id not in self.stalled:
                self.stalled.add(session_id)
                task.cancel()


def write_agent_arm(arm: AgentArm, parts: Path) -> tuple[list[tuple[Path, dict[str, Any]]],
                                                          list[LevelStats]]:
    """Every load level of `arm` into its own folder under `parts` (made afresh), in the run's
    order: the folders with their `seed` and unit columns (as `toolturn.engine.runner.RunResult.
    parts_in_order` gives a unit's), and each level's stats."""
    folders: list[tuple[Path, dict[str, Any]]] = []
    stats: list[LevelStats] = []
    for level, _ in arm.levels():
        folder = parts / f"agent-{level}"
        if folder.exists():
            shutil.rmtree(folder)  # an interrupted run's: the arm runs again whole
        stats.append(arm.run_level(level, folder))
        folders.append((folder, {"seed": arm.scenario.seed, **arm.columns(level)}))
    return folders, stats


def level_stats_line(level: int, stats: LevelStats) -> str:
    """One line on a level's speed and the loop's real time per virtual step."""
    per_s = stats.sessions / stats.wall_s if stats.wall_s > 0 else 0.0
    speedup = stats.virtual_ns / NS_PER_S / stats.wall_s if stats.wall_s > 0 else 0.0
    steps = stats.steps
    return (f"load level {level}: {stats.sessions} sessions in {stats.wall_s:.2f} s wall "
            f"({per_s:.1f} sessions/s, {speedup:.0f}x real time); {steps.steps} virtual steps, "
            f"real time per step mean {steps.mean_real_ns / 1e6:.3f} ms, max "
            f"{steps.max_real_ns / 1e6:.1f} ms at virtual {steps.max_at_ns / NS_PER_S:.3f} s; "
            f"{len(stats.errors)} agent errors")
