"""One simulation: one executor policy under one recovery profile at one load level, in its own
simpy environment.

Sessions arrive as `sim.engine.arrivals` says, run (`sim.engine.session`) against one mock model
and one endpoint, and become metric rows as they end (`sim.engine.recorder`). With a horizon the
run stops there, and the sessions still running are recorded as they stand (unfinished turns get
the outcome `horizon`). With `trace=True` every stream event fed to the runtime is also kept
(`sim.engine.recorder.EventTrace`, the `events` table); without it nothing per event is kept.

    result = simulate(load_scenario("scenarios/default.toml"), "streaming", 32.0)
    simulate(scenario, "streaming", 32.0, profile="claude-code")   # the same draws, other rules
    result.rows["turns"][0]["ttfts_ns"]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

import simpy

from sim.engine.arrivals import Arrivals, ClosedLoop, OpenLoop, arrivals_for
from sim.engine.bounds import session_bounds
from sim.engine.clock import Clock
from sim.engine.collector import fewer_collections
from sim.engine.context import SimulationContext
from sim.engine.endpoint import SimEndpoint
from sim.engine.loop_factory import LoopFactory
from sim.engine.recorder import EventTrace, Rows, empty_rows, record_session
from sim.engine.session import Session
from sim.model.model import MockModel
from sim.model.tool_inputs import tool_inputs
from sim.scenario.schema import Scenario

# Called with the number of sessions finished so far.
Progress = Callable[[int], None]


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
) -> SimulationResult:
    """Run `scenario` under `policy` and recovery `profile` at load `level` (sweep level
    `load_level`); `trace` keeps each event fed. Raises StrictModeStop, SessionRunaway."""
    wall_start = time.perf_counter()
    env = Clock()
    model = MockModel(scenario.model, scenario.seed, tool_inputs(scenario.tool_specs))
    rows = empty_rows()
    running: dict[int, Session] = {}
    totals = {"finished": 0, "events": 0, "violations": 0}
    horizon_ns = scenario.load.horizon_ns
    arrivals = arrivals_for(scenario.load, scenario.seed, level)
    next_id = 0
    events_trace = EventTrace() if trace else None
    unit: dict[str, Any] = {"policy": policy, "load": level, "load_level": load_level,
                            "profile": profile}

    def begin(arrival_ns: int) -> None:
        nonlocal next_id
        session = Session(context, next_id, arrival_ns)
        running[next_id] = session
        next_id += 1
        env.process(session.process())

    def collect(session: Session) -> None:
        del running[session.session_id]
        record_session(session, rows, horizon_ns=horizon_ns, **unit)
        totals["events"] += session.events_fed
        totals["violations"] += session.pairing_violations

    def on_session_end(session: Session) -> None:
        collect(session)
        model.forget_session(session.session_id)
        totals["finished"] += 1
        if progress is not None:
            progress(totals["finished"])
        if isinstance(arrivals, ClosedLoop) and next_id < arrivals.sessions:
            begin(int(env.now))

    context = SimulationContext(
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
    )

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
    )


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
