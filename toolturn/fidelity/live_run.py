"""A scenario run live: each executor policy at each load level, its sessions driven in real time
by the live driver (`toolturn.live`) over the official SDK, against an embedded `toolturn serve` of
the same scenario (or any Anthropic-compatible `base_url`), recorded as the simulator records its
own.

    result = asyncio.run(run_live(scenario, LiveSettings(speed=10.0)))
    units = [(unit.columns, unit.rows) for unit in result.results]
    write_run_from_rows(folder, units, metadata)  # a run folder

What is the simulator's, shared: the loops (`toolturn.engine.loop_factory`, the scenario's policy,
retries with the same keyed jitter, fallback, strict mode), the simulated user (`toolturn.user`),
the tool plans (`toolturn.tools.plans`), the arrival schedule (`toolturn.engine.arrivals`, closed or
open) and the recorder (`toolturn.engine.recorder`). What is real: the HTTP, the SDK's parsing, the
event loop, the tools' sleeps, except each request's transit to the embedded server: the driver
says when it sent the request (`toolturn.wire.sent_at`) and the server times the response from
then, since the simulator has no transit (about 8 ms of wall time a request, which speed 10 made
a 5-14% error on the first event). Times are in the scenario's scale (wall clock times
`speed`), so the tables read as a simulated run's do.

Each unit gets a fresh embedded server (its sessions' attempt counts start afresh, as each
simulation's do) on a free loopback port, and one client for all its sessions. The embedded
server's model notes the faults it injected per (session, turn, attempt), which become the
requests' `fault` column; against another endpoint it is null. A horizon stops the unit there:
sessions still running are cancelled and recorded as they stand (outcome `horizon`). An
interrupt (Ctrl-C) cancels everything and raises: nothing is written.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anthropic

from toolturn.engine.arrivals import ClosedLoop, arrivals_for
from toolturn.engine.draws import SessionDraws
from toolturn.engine.loop_factory import LoopFactory
from toolturn.engine.recorder import record_session
from toolturn.engine.runner import Unit, units_of
from toolturn.errors import UserError
from toolturn.fidelity.overhead import LagSampler
from toolturn.fidelity.settings import LiveSettings
from toolturn.live.simulated_tools import simulated_tools
from toolturn.live.user_session import LiveSession, run_user_session
from toolturn.live.warm_up import warm_up_sdk
from toolturn.metrics.row_columns import Rows, empty_rows
from toolturn.model.model import MockModel
from toolturn.model.response import HttpError, Response, Turn
from toolturn.model.tool_inputs import tool_inputs
from toolturn.runtime.commands import AskPermission
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.scenario.schema import Scenario
from toolturn.user import PermissionAnswer, SimulatedUser, permission_answer
from toolturn.wire.identity import RUN_HEADER
from toolturn.wire.server import MockServer

NS_PER_S = 1_000_000_000
ENDPOINT_REFUSED = "endpoint_refused"
# Called with (unit index, sessions finished in that unit).
UnitProgress = Callable[[int, int], None]


@dataclass(slots=True)
class LiveUnitResult:
    # The unit's columns (`toolturn.engine.plan.Unit.columns`), which its rows lack.
    columns: dict[str, Any]
    rows: Rows
    sessions_finished: int
    wall_s: float
    # CPU seconds this process spent meanwhile (the embedded server's included): near `wall_s`,
    # the harness itself was the bottleneck.
    cpu_s: float


@dataclass(slots=True)
class LiveRunResult:
    scenario: Scenario
    units: list[Unit]
    results: list[LiveUnitResult] = field(default_factory=list)
    # The event loop's lateness samples, when asked for.
    sampler: LagSampler | None = None


class _NotingModel(MockModel):
    """The mock model, noting the faults it injected per turn identity for the requests table."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.faults: dict[tuple[int, int, int], str] = {}

    # `answer`, not `respond`: the server checks a body itself and asks `answer` for one that
    # passed (and `respond` too ends in `answer`).
    def answer(self, body: Mapping[str, Any], turn: Turn, *args: Any, **kwargs: Any) -> Response:
        response = super().answer(body, turn, *args, **kwargs)
        if response.faults:
            self.faults[(turn.session_id, turn.turn_index, turn.attempt)] = ",".join(
                response.faults
            )
        return response

    def refuse(self, turn: Turn, *args: Any, **kwargs: Any) -> HttpError:
        self.faults[(turn.session_id, turn.turn_index, turn.attempt)] = ENDPOINT_REFUSED
        return super().refuse(turn, *args, **kwargs)


async def run_live(
    scenario: Scenario, settings: LiveSettings, *, progress: UnitProgress | None = None
) -> LiveRunResult:
    """Run every unit of `scenario` live, one after another, in `toolturn run`'s unit order, the SDK
    warmed first (`toolturn.live.warm_up`) so that no session's clock counts the process's cold
    first request. Raises UserError for a scenario on another wire protocol than the Messages
    API (the live driver speaks it through the anthropic SDK alone)."""
    others = [protocol for protocol in scenario.model.protocols if protocol != "anthropic"]
    if others:
        raise UserError(f"{scenario.name}: [model] protocol {', '.join(others)}: the live driver "
                        "speaks the Messages API only (anthropic); simulate the others")
    result = LiveRunResult(scenario, units_of(scenario))
    await warm_up_sdk()
    if settings.sample_lag:
        result.sampler = LagSampler()
        result.sampler.start()
    try:
        for index, unit in enumerate(result.units):
            report = None if progress is None else _bind(progress, index)
            result.results.append(await run_unit(scenario, unit, settings, report))
    finally:
        if result.sampler is not None:
            await result.sampler.stop()
    return result


def _bind(progress: UnitProgress, index: int) -> Callable[[int], None]:
    return lambda finished: progress(index, finished)


async def run_unit(
    scenario: Scenario,
    unit: Unit,
    settings: LiveSettings,
    progress: Callable[[int], None] | None = None,
) -> LiveUnitResult:
    """One policy at one load level, live."""
    wall_start = time.perf_counter()
    cpu_start = time.process_time()
    model = _NotingModel(scenario.model, scenario.seed, tool_inputs(scenario.tool_specs))
    server: MockServer | None = None
    base_url = settings.base_url
    if base_url is None:
        server = MockServer(model, speed=settings.speed, log=lambda line: None)
        await server.start("127.0.0.1", 0)
        base_url = server.base_url
    # The unit names its run: the units of one `toolturn live` share a `--base-url` server,
    # and each has sessions 0, 1, ...; the server tells them apart by it (toolturn.wire.identity).
    run = unit.label.encode("ascii", "backslashreplace").decode()
    client = anthropic.AsyncAnthropic(base_url=base_url, api_key=settings.api_key,
                                      max_retries=0, timeout=settings.timeout_s,
                                      default_headers={RUN_HEADER: run})
    try:
        unit_run = _UnitRun(scenario, unit, settings, client, model, progress)
        await unit_run.run()
    finally:
        await client.close()
        if server is not None:
            await server.close()
    return LiveUnitResult(unit.columns, unit_run.rows, unit_run.finished,
                          time.perf_counter() - wall_start, time.process_time() - cpu_start)


class _UnitRun:
    """The sessions of one unit: started as the load says, recorded as they end."""

    def __init__(
        self,
        scenario: Scenario,
        unit: Unit,
        settings: LiveSettings,
        client: anthropic.AsyncAnthropic,
        model: _NotingModel,
        progress: Callable[[int], None] | None,
    ) -> None:
        self.scenario = scenario
        self.unit = unit
        self.speed = settings.speed
        self.client = client
        self.model = model
        self.progress = progress
        self.embedded = settings.base_url is None
        self.loops = LoopFactory(
            scenario, unit.policy, model.name, model.fallback_name, profile=unit.profile
        )
        self.rows = empty_rows()
        self.finished = 0
        self.origin_ns = time.monotonic_ns()
        self.running: dict[int, tuple[LiveSession, asyncio.Task[LiveSession]]] = {}
        self.next_id = 0
        self.total = 0
        self.closed = False
        self.all_done = asyncio.Event()
        self.failure: BaseException | None = None

    def now(self) -> int:
        return round((time.monotonic_ns() - self.origin_ns) * self.speed)

    async def run(self) -> None:
        scenario = self.scenario
        arrivals = arrivals_for(scenario.load, scenario.seed, self.unit.load)
        horizon_ns = scenario.load.horizon_ns
        starter: asyncio.Task[None] | None = None
        if isinstance(arrivals, ClosedLoop):
            self.closed = True
            self.total = arrivals.sessions
            for _ in range(min(arrivals.concurrency, arrivals.sessions)):
                self._begin(0)
        else:
            self.total = len(arrivals.arrivals_ns)
            starter = asyncio.create_task(self._open_arrivals(arrivals.arrivals_ns))
        try:
            if self.total:
                wait = self.all_done.wait()
                if horizon_ns is None:
                    await wait
                else:
                    try:
                        await asyncio.wait_for(wait, (horizon_ns / self.speed) / NS_PER_S)
                    except TimeoutError:
                        pass
        finally:
            if starter is not None:
                starter.cancel()
            stopped = [task for _, task in self.running.values()]
            for task in stopped:
                task.cancel()
            await asyncio.gather(*stopped, return_exceptions=True)
        if self.failure is not None:
            raise self.failure
        for session_id in sorted(self.running):
            self._record(self.running[session_id][0], horizon_ns)
        self.running.clear()

    async def _open_arrivals(self, arrivals_ns: tuple[int, ...]) -> None:
        for due in arrivals_ns:
            wait_ns = due - self.now()
            if wait_ns > 0:
                await asyncio.sleep(wait_ns / self.speed / NS_PER_S)
            self._begin(due)

    def _begin(self, arrival_ns: int) -> None:
        session_id = self.next_id
        self.next_id += 1
        scenario, seed = self.scenario, self.scenario.seed
        draws = SessionDraws(scenario, seed, session_id)
        holder: list[ToolTurnLoop] = []
        loop = self.loops.new_loop(
            lambda retry: draws.retry_jitter(holder[0].turn, retry),
            lambda retry: draws.retry_unit(holder[0].turn, retry),
        )
        holder.append(loop)
        session = LiveSession(session_id, arrival_ns, loop)

        def answer(ask: AskPermission) -> PermissionAnswer:
            return permission_answer(draws.tool_plan(ask.name, ask.tool_use_id))

        tools = simulated_tools(scenario.tool_specs, seed, session=session_id, speed=self.speed)
        work = run_user_session(
            self.client, session, SimulatedUser(scenario, seed, session_id), tools,
            origin_ns=self.origin_ns, speed=self.speed, permission_answers=answer,
            sent_at_header=self.embedded,
        )
        task = asyncio.create_task(work)
        self.running[session_id] = (session, task)
        task.add_done_callback(lambda done: self._ended(session, done))

    def _ended(self, session: LiveSession, task: asyncio.Task[LiveSession]) -> None:
        if task.cancelled():
            return  # Stopped at the horizon or interrupted: recorded (or not) by `run`.
        error = task.exception()
        if error is not None:
            # A bug of the loop or the driver: the unit ends with it.
            self.all_done.set()
            self.failure = error
            return
        del self.running[session.session_id]
        self._record(session, None)
        self.model.forget_session(session.session_id)
        self.finished += 1
        if self.progress is not None:
            self.progress(self.finished)
        if self.finished == self.total:
            self.all_done.set()
        elif self.closed and self.next_id < self.total:
            self._begin(self.now())

    def _record(self, session: LiveSession, horizon_ns: int | None) -> None:
        if self.embedded:
            faults = self.model.faults
            for log in session.requests:
                log.fault = faults.get((session.session_id, log.turn - 1, log.attempt))
        record_session(session, self.rows, horizon_ns=horizon_ns)
