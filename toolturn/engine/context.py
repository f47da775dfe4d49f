"""What every session of one simulation shares: the environment, the model, the endpoint, the
loop factory, where a finished session goes, the bounds of a session, and the event trace if one
was asked for.

A session reaches `on_session_end` as an `EndedSession`: what is read of it once it is over (its
record for the recorder, its counters), not the live `toolturn.engine.session.Session`, which holds
this context (so the context names no session class)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from toolturn.engine.bounds import SessionBounds
from toolturn.engine.clock import Clock
from toolturn.engine.endpoint import SimEndpoint
from toolturn.engine.event_trace import EventTrace
from toolturn.engine.loop_factory import LoopFactory
from toolturn.engine.recorder import FinishedSession
from toolturn.model.model import MockModel
from toolturn.scenario.schema import Scenario


class EndedSession(FinishedSession, Protocol):
    """A session as the simulation reads it at its end (or at the horizon): what the recorder
    reads (`FinishedSession`), and the session's counters."""

    @property
    def events_fed(self) -> int: ...
    @property
    def pairing_violations(self) -> int: ...


@dataclass(slots=True)
class SimulationContext:
    env: Clock
    scenario: Scenario
    seed: int
    policy: str
    model: MockModel
    endpoint: SimEndpoint
    loops: LoopFactory
    # Called once per session when its last prompt has been answered.
    on_session_end: Callable[[EndedSession], None]
    # The most a session may do, and how long it may last, before it is stopped as a runaway.
    bounds: SessionBounds
    # Where every session puts the events it feeds, when a trace was asked for.
    trace: EventTrace | None = None
    # The recovery profile the loops run under (toolturn.runtime.recovery).
    profile: str = "default"
    # The wire protocol the turns are spoken in (toolturn.runtime.protocol_timing).
    protocol: str = "anthropic"
