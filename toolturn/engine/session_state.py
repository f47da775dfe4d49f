"""What the parts of one session share: its state, the two guards its callbacks pass, and the few
calls one part makes of another.

A session (`toolturn.engine.session.Session`) is put together from its parts, one module per job:
the request path (`toolturn.engine.request_path`), the tool calls (`toolturn.engine.tool_calls`) and
the simulated user's hooks (`toolturn.engine.user_hooks`), with the session's own process and its
commands in `toolturn.engine.session`. Each part is a mixin of `SessionState` and imports no other
part: a call from one part to another goes through a method declared here, defined by the part
named beside it. Mixins rather than objects per part: a call stays one method call, and no part
holds the session (a reference cycle, freed only by the cyclic collector, which runs rarely
while simulating). `Session.__init__` sets every attribute declared here and in the parts.

Every callback the session is handed counts as one action (`acts`), except a tool's progress and
an attachment (each of those chains has its own cap and ends with its call or turn). A session
that takes more actions than its scenario allows, or still acts longer after its arrival than it
allows (`toolturn.engine.bounds`), is broken, not slow: it is stopped with `SessionRunaway` (naming
seed, policy and session) instead of running forever. A callback that hands the loop something
passes `strict_stops`: the loop's `PairingError` (strict mode) stops the run with
`StrictModeStop`, or only this session when its resumed transcript broke
(`toolturn.engine.session_faults`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

import simpy

from toolturn.engine.bounds import SessionRunaway
from toolturn.engine.clock import Clock
from toolturn.engine.context import SimulationContext
from toolturn.engine.draws import SessionDraws
from toolturn.engine.event_trace import EventTrace
from toolturn.engine.session_faults import SessionFaults
from toolturn.engine.strict import StrictModeStop
from toolturn.metrics.request_log import RequestLog
from toolturn.runtime.commands import Command
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.repair import PairingError
from toolturn.user import PlannedInterrupt, SimulatedUser

F = TypeVar("F", bound=Callable[..., Any])

# The guards take their arguments positionally (every callback is called so, by `Clock.call_at`
# or by another part of the session): no keyword dict per call. A callback that needs both is
# `acts_strictly`, one frame instead of two: the callbacks run thousands of times per simulated
# second.


def strict_stops(method: F) -> F:
    """Turn the loop's `PairingError` (strict mode) into a `StrictModeStop` naming the session."""

    @functools.wraps(method)
    def guarded(session: SessionState, *args: Any) -> Any:
        try:
            return method(session, *args)
        except PairingError as error:
            _stop_strictly(session, error)
            return None

    return cast(F, guarded)


def acts(method: F) -> F:
    """Count a callback the session is handed; past the session's bounds, stop the run."""
    return _counted(method, ())


def acts_strictly(method: F) -> F:
    """`acts(strict_stops(method))` in one frame."""
    return _counted(method, (PairingError,))


def _counted(method: F, stops: tuple[type[PairingError], ...]) -> F:
    """`method` counted as an action, with `stops` (none for `acts`: an empty tuple catches
    nothing) stopping strictly. One body for both guards: a `try` costs nothing until it
    catches."""

    @functools.wraps(method)
    def counted(session: SessionState, *args: Any) -> Any:
        session.actions += 1
        if session.actions > session.max_actions or session.env.now > session.deadline_ns:
            raise session.runaway()
        try:
            return method(session, *args)
        except stops as error:
            _stop_strictly(session, error)
            return None

    return cast(F, counted)


def _stop_strictly(session: SessionState, error: PairingError) -> None:
    """Strict mode's stop: of the session alone when its resumed transcript broke, else of the
    run (`StrictModeStop`)."""
    if session.faults is not None and session.faults.stops_session():
        session.stopped()  # A resumed transcript broke: the session stops, not the run.
        return
    raise session.strict_stop(str(error)) from error


class SessionState:
    """The state every part of a session reads, and what the parts call of one another."""

    context: SimulationContext
    env: Clock
    session_id: int
    arrival_ns: int
    start_ns: int | None
    end_ns: int | None
    draws: SessionDraws
    user: SimulatedUser
    loop: ToolTurnLoop
    requests: list[RequestLog]
    # Pairing violations in the requests sent, as the loop found them (`RequestPath._send`).
    pairing_violations: int
    actions: int
    max_actions: int
    deadline_ns: int
    events_fed: int
    # The simulation's event trace, or None (the usual case: nothing per event is kept).
    trace: EventTrace | None
    # Crashes, rewinds, compaction and the persisted transcript (`toolturn.engine.session_faults`),
    # when the scenario has any.
    faults: SessionFaults | None
    # Succeeds when the current prompt's chain of turns ends.
    _chain_done: simpy.Event | None
    # The turn whose tools phase is on (its first tool started, the turn not over), else 0.
    _tools_turn: int

    # ----- what the parts call of one another -----

    def _dispatch(self, commands: list[Command]) -> None:
        """Carry out the loop's commands (`toolturn.engine.session`)."""
        raise NotImplementedError

    def _feed_active_due_before(self, now: int) -> bool:
        """Feed the active request's events due strictly before `now`; False when no request is
        active (`toolturn.engine.request_path`)."""
        raise NotImplementedError

    def _plan_interrupt(self, planned: PlannedInterrupt | None) -> None:
        """Schedule the user's interrupt, if one is planned (`toolturn.engine.user_hooks`)."""
        raise NotImplementedError

    def _tools_phase_started(self, turn: int) -> None:
        """The first tool of `turn` started (`toolturn.engine.user_hooks`)."""
        raise NotImplementedError

    # ----- the guards' stops -----

    def stopped(self) -> None:
        """Strict mode stopped the session: its chain, and the session, end here."""
        assert self._chain_done is not None
        self._chain_done.succeed()

    def strict_stop(self, detail: str) -> StrictModeStop:
        context = self.context
        return StrictModeStop(
            context.seed, self.session_id, context.policy, int(self.env.now), detail,
            context.profile,
        )

    def runaway(self) -> SessionRunaway:
        bounds = self.context.bounds
        if self.actions > self.max_actions:
            detail = f"more than {bounds.actions:,} actions, the most its scenario allows"
        else:
            detail = (
                f"still acting {bounds.span_ns / 1e9:,.3f} s after its arrival, longer than "
                "its scenario allows"
            )
        context = self.context
        return SessionRunaway(
            context.seed, self.session_id, context.policy, int(self.env.now), detail,
            context.profile,
        )
