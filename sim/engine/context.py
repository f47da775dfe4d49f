"""What every session of one simulation shares: the environment, the model, the endpoint, the
loop factory, where a finished session goes, the bounds of a session, and the event trace if one
was asked for."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sim.engine.bounds import SessionBounds
from sim.engine.clock import Clock
from sim.engine.endpoint import SimEndpoint
from sim.engine.loop_factory import LoopFactory
from sim.model.model import MockModel
from sim.scenario.schema import Scenario

if TYPE_CHECKING:
    from sim.engine.recorder import EventTrace
    from sim.engine.session import Session


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
    on_session_end: Callable[[Session], None]
    # The most a session may do, and how long it may last, before it is stopped as a runaway.
    bounds: SessionBounds
    # Where every session puts the events it feeds, when a trace was asked for.
    trace: EventTrace | None = None
    # The recovery profile the loops run under (sim.runtime.recovery).
    profile: str = "default"
