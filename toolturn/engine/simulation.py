"""One simulation: one executor policy under one recovery profile at one load level, in its own
simpy environment.

Sessions arrive as `toolturn.engine.arrivals` says, run (`toolturn.engine.session`) against one mock
model and one endpoint, and become metric rows as they end (`toolturn.engine.recorder`). With a
horizon the run stops there, and the sessions still running are recorded as they stand (unfinished
turns get the outcome `horizon`). With `trace=True` every stream event fed to the runtime is also
kept (`toolturn.engine.event_trace`, the `events` table); without it nothing per event is kept.

The rows do not carry the simulation's own columns (policy, profile, load level: the same on
every row; `toolturn.metrics.row_columns.ADDED_COLUMNS`): the run's tables get them at assembly.

With a `sink`, each session's rows go there as the session is recorded and the result's rows
stay empty (memory holds the sessions in flight only). `sessions` simulates one block of an
open loop's sessions alone (their ids and arrival times as in the whole run): valid only when
sessions are independent (`toolturn.engine.blocks.splittable`).

    result = simulate(load_scenario("scenarios/default.toml"), "streaming", 32.0)
    simulate(scenario, "streaming", 32.0, profile="claude-code")   # the same draws, other rules
    result.rows["turns"]["ttfts_ns"][0]        # rows by table, column by column
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

import simpy

from toolturn.engine.arrivals import Arrivals, ClosedLoop, OpenLoop, arrivals_for
from toolturn.engine.bounds import session_bounds
from toolturn.engine.clock import Clock
from toolturn.engine.collector import fewer_collections
from toolturn.engine.context import EndedSession, SimulationContext
from toolturn.engine.endpoint import SimEndpoint
from toolturn.engine.event_trace import EventTrace
from toolturn.engine.loop_factory import LoopFactory
from toolturn.engine.recorder import record_session
from toolturn.engine.session import Session
from toolturn.metrics.row_columns import Rows, empty_rows
from toolturn.model.model import MockModel
from toolturn.model.tool_inputs import tool_inputs
from toolturn.scenario.schema import Scenario

# Called with the number of sessions finished so far.
Progress = Callable[[int], None]
# Called with a session's id and its rows once it is recorded (then the result keeps none).
RowSink = Callable[[int, Rows], None]


@dataclass(slots=True)
class SimulationResult:
    """The rows and counters of one simulation."""

    policy: str
    load: float | None
    load_level: int
    rows: Rows
    sessions_finished: int
    # Stream events fed to the runtime, and the wall-clock seconds the simulation took.
    events: int
    wall_s: float
    pairing_violations: int
    # The events fed, when the simulation was traced.
    trace: EventTrace | None = None
    profile: str = "default"
    protocol: str = "anthropic"

    @property
    def columns(self) -> dict[str, Any]:
        """The columns its rows lack, the same on every row (`toolturn.engine.plan.Unit.columns`):
        give them to `toolturn.metrics.row_columns.with_constants` for whole tables in memory."""
        return {
            "policy": self.policy, "profile": self.profile, "protocol": self.protocol,
            "load_level": self.load_level, "load": self.load,
        }

    @property
    def events_per_wall_s(self) -> float:
        return self.events / self.wall_s if self.wall_s > 0 else 0.0


def simulate(
    scenario: Scenario,
    policy: str,
    level: float | None,
    *,
    progress: Progress | None = None,
    trace: bool = False,
    load_level: int = 0,
    profile: str = "default",
    sink: RowSink | None = None,
    sessions: range | None = None,
    protocol: str = "anthropic",
) -> SimulationResult:
    """Run `scenario` under `policy` and recovery `profile` on wire `protocol` at load `level`
    (sweep level `load_level`); `trace` keeps each event fed; `sink`, `sessions`: the module
    docstring.
    Raises StrictModeStop, SessionRunaway."""
    wall_start = time.perf_counter()
    env = Clock()
    model = MockModel(scenario.model, scenario.seed, tool_inputs(scenario.tool_specs))
    rows = empty_rows()
    running: dict[int, Session] = {}
    totals = {"finished": 0, "events": 0, "violations": 0}
    horizon_ns = scenario.load.horizon_ns
    arrivals = _arrivals(scenario, level, sessions)
    next_id = 0 if sessions is None else sessions.start
    events_trace = EventTrace() if trace else None

    def begin(arrival_ns: int) -> None:
        nonlocal next_id
        session = Session(context, next_id, arrival_ns)
        running[next_id] = session
        next_id += 1
        env.process(session.process())

    def collect(session: EndedSession) -> None:
        del running[session.session_id]
        mine = rows if sink is None else empty_rows()
        record_session(session, mine, horizon_ns=horizon_ns)
        if sink is not None:
            sink(session.session_id, mine)
        totals["events"] += session.events_fed
        totals["violations"] += session.pairing_violations

    def on_session_end(session: EndedSession) -> None:
        collect(session)
        model.forget_session(session.session_id)
        totals["finished"] += 1
        if progress is not None:
            progress(totals["finished"])
        if isinstance(arrivals, ClosedLoop) and next_id < arrivals.sessions:
            begin(int(env.now))

    context = _context(env, scenario, (policy, profile, protocol), level, model, on_session_end,
                       events_trace)

    _start_arrivals(env, arrivals, begin)
    with fewer_collections():
        env.run(until=horizon_ns)
        for session_id in sorted(running):
            collect(running[session_id])
    return SimulationResult(
        policy=policy,
        load=level,
        load_level=load_level,
        rows=rows,
        sessions_finished=totals["finished"],
        events=totals["events"],
        wall_s=time.perf_counter() - wall_start,
        pairing_violations=totals["violations"],
        trace=events_trace,
        profile=profile,
        protocol=protocol,
    )


def _context(
    env: Clock,
    scenario: Scenario,
    arm: tuple[str, str, str],
    level: float | None,
    model: MockModel,
    on_session_end: Callable[[EndedSession], None],
    events_trace: EventTrace | None,
) -> SimulationContext:
    """What the sessions of one simulation share; `arm`: its policy, profile and protocol."""
    policy, profile, protocol = arm
    return SimulationContext(
        env=env,
        scenario=scenario,
        seed=scenario.seed,
        policy=policy,
        model=model,
        endpoint=SimEndpoint(env, model.endpoint),
        loops=LoopFactory(scenario, policy, model.name, model.fallback_name, profile=profile),
        on_session_end=on_session_end,
        bounds=session_bounds(scenario, level),
        trace=events_trace,
        profile=profile,
        protocol=protocol,
    )


def _arrivals(scenario: Scenario, level: float | None, sessions: range | None) -> Arrivals:
    """The schedule at `level`, of the block `sessions` alone when given (their times in the
    whole run's schedule)."""
    arrivals = arrivals_for(scenario.load, scenario.seed, level)
    if sessions is None:
        return arrivals
    assert isinstance(arrivals, OpenLoop), "only an open loop's sessions are independent"
    return OpenLoop(arrivals.arrivals_ns[sessions.start : sessions.stop])


def _start_arrivals(env: Clock, arrivals: Arrivals, begin: Callable[[int], None]) -> None:
    """Begin the first sessions: as many as run at once (closed loop), or the arrival process
    (open loop)."""
    if isinstance(arrivals, ClosedLoop):
        for _ in range(min(arrivals.concurrency, arrivals.sessions)):
            begin(0)
    else:
        env.process(_open_arrivals(env, arrivals, begin))


def _open_arrivals(
    env: Clock, arrivals: OpenLoop, begin: Callable[[int], None]
) -> Generator[simpy.Event, Any, None]:
    for due in arrivals.arrivals_ns:
        if due > env.now:
            yield env.timeout(due - env.now)
        begin(due)
