"""One session in simulated time: a user, a `ToolTurnLoop`, and the commands it hands out.

The session process sends the user's prompts (with think time between the answer to one and the
next) and carries out every command the loop returns:

- `SendRequest`: take a slot at the endpoint (or queue, or be refused with 429/529), ask the
  mock model, then report an HTTP error at its time or feed the stream in batches between
  decision points (`sim.engine.feed_points`). The body's pairing is the loop's verdict
  (`pairing_violations`, not checked again): a violation, which only a broken repair makes, is
  counted, marks the request and gets the API's 400.
- `WaitUntil`: call `wake` at that time (only the latest wait counts).
- `StartTool` / `CancelTool`: start a tool run (`sim.engine.tool_run`) / cancel it.
- `AskPermission`: the simulated user answers after the plan's decision delay.
- `CancelRequest`: the stream is abandoned and its endpoint slot freed.
- `TurnEnded` / `SessionEnded`: end the turn's tools phase / the prompt's chain of turns.

User behaviour is the simulated user's (`sim.user`, the same as the live driver's): its prompts
and think times, at most one interrupt per turn, `after` the start of its phase (the turn's first
stream event, or its first tool start), dropped if the phase is over by then; attachments
arriving while the turn's tools run (from its first tool start to its end, or to the end of the
prompt's chain when that comes first); permission answers. This module schedules them in
simulated time.

Why a user interrupt during streaming first feeds the events due before it: the stream is fed in
batches, so the loop may be behind the simulated clock; it must see exactly what had arrived.
Cancelled work (an abandoned stream's pending timeout, a stale wake or interrupt) is left to fire
and is ignored: that is cheaper than removing it and keeps every path simple.

Session faults (`sim.engine.session_faults`, when the scenario has any): every list of commands
the loop returns is shown to the session's transcript log first; a response admitted draws its
turn's crash and rewind; a crash or a rewind abandons the turn (`turn_abandoned`) and a new chain
goes on from the resumed transcript (`resume_chain`); compaction runs before each later prompt;
in strict mode a resumed transcript that breaks stops this session (`stopped`), not the run.

Every callback the session is handed counts as one action, except a tool's progress and an
attachment (each of those chains has its own cap and ends with its call or turn). A session that
takes more actions than its scenario allows, or still acts longer after its arrival than it
allows (`sim.engine.bounds`), is broken, not slow: it is stopped with `SessionRunaway` (naming
seed, policy and session) instead of running forever. The user sends at most
`MAX_ATTACHMENTS_PER_TURN` attachments in one turn.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Generator
from typing import Any, ParamSpec, TypeVar, cast

import simpy

from sim.distributions import ms_to_ns
from sim.engine.bounds import SessionRunaway
from sim.engine.context import SimulationContext
from sim.engine.draws import SessionDraws
from sim.engine.feed_points import feed_points
from sim.engine.request_log import CANCELLED, RequestLog
from sim.engine.session_faults import SessionFaults
from sim.engine.strict import StrictModeStop
from sim.engine.tool_run import ToolRun
from sim.limits import MAX_ATTACHMENTS_PER_TURN
from sim.model.response import HttpError, Response, Turn
from sim.runtime.attachments import AttachmentKind
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
from sim.runtime.outcomes import ToolOutcome
from sim.runtime.repair import PairingError
from sim.tools.execution import CallPlan, scripted_plan
from sim.user import (
    AttachmentArrivals,
    PlannedInterrupt,
    SimulatedUser,
    attachment_block,
    in_phase,
    permission_answer,
)
from sim.user.draws import InterruptPhase

P = ParamSpec("P")
R = TypeVar("R")

PAIRING_VIOLATION = "pairing_violation"
ENDPOINT_REFUSED = "endpoint_refused"


def _strict_stops(method: Callable[P, R]) -> Callable[P, R]:
    """Turn the loop's `PairingError` (strict mode) into a `StrictModeStop` naming the session."""

    @functools.wraps(method)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except PairingError as error:
            session = args[0]
            assert isinstance(session, Session)
            if session.faults is not None and session.faults.stops_session():
                session.stopped()  # A resumed transcript broke: the session stops, not the run.
                return cast(R, None)
            raise session.strict_stop(str(error)) from error

    return guarded


def _acts(method: Callable[P, R]) -> Callable[P, R]:
    """Count a callback the session is handed; past the session's bounds, stop the run."""

    @functools.wraps(method)
    def counted(*args: P.args, **kwargs: P.kwargs) -> R:
        session = cast(Session, args[0])
        session.actions += 1
        if session.actions > session.max_actions or session.env.now > session.deadline_ns:
            raise session.runaway()
        return method(*args, **kwargs)

    return counted


def _jitter_of(
    session: weakref.ref[Session], *, unit: bool = False
) -> Callable[[int], float]:
    """The retry jitter of `session`'s loop (with `unit`, its draw in [0, 1)). Through a weak
    reference: the loop keeps its jitter function for life, and a bound method would make
    session and loop a reference cycle, freed only by the cyclic collector (which runs rarely
    while simulating) instead of at once."""

    def jitter(retry: int) -> float:
        alive = session()
        assert alive is not None, "a loop draws jitter only while its session runs"
        return alive.draws.retry_jitter(alive.loop.turn, retry)

    def unit_jitter(retry: int) -> float:
        alive = session()
        assert alive is not None, "a loop draws jitter only while its session runs"
        return alive.draws.retry_unit(alive.loop.turn, retry)

    return unit_jitter if unit else jitter


class _Stream:
    """The request being answered: its log, and the stream's events once there is one."""

    __slots__ = ("closed", "events", "fed", "holds_slot", "log", "queued", "times")

    def __init__(self, log: RequestLog) -> None:
        self.log = log
        # The stream's events and their arrival times in simulated time.
        self.events: list[dict[str, Any]] = []
        self.times: list[int] = []
        self.fed = 0
        self.closed = False
        self.holds_slot = False
        self.queued: simpy.Event | None = None


class Session:
    """One session of the simulation; `process()` is its simpy process."""

    def __init__(self, context: SimulationContext, session_id: int, arrival_ns: int) -> None:
        self.context = context
        self.env = context.env
        self.session_id = session_id
        self.arrival_ns = arrival_ns
        self.start_ns: int | None = None
        self.end_ns: int | None = None
        self.draws = SessionDraws(context.scenario, context.seed, session_id)
        self.user = SimulatedUser(context.scenario, context.seed, session_id)
        me = weakref.ref(self)
        self.loop = context.loops.new_loop(_jitter_of(me), _jitter_of(me, unit=True))
        self.requests: list[RequestLog] = []
        # Pairing violations in the requests sent, as the loop found them (`_send`).
        self.pairing_violations = 0
        bounds = context.bounds
        self.actions = 0
        self.max_actions = bounds.actions
        self.deadline_ns = arrival_ns + bounds.span_ns
        self.events_fed = 0
        # The simulation's event trace, or None (the usual case: nothing per event is kept).
        self.trace = context.trace
        self._honour_retry_after = context.scenario.runtime.retries.honour_retry_after
        self._active: _Stream | None = None
        self._tools: dict[str, ToolRun] = {}
        self._plans: dict[str, CallPlan] = {}
        self._chain_done: simpy.Event | None = None
        self._wake_token = 0
        self._tools_turn = 0
        # Crashes, rewinds, compaction and the persisted transcript (`sim.engine.session_faults`),
        # when the scenario has any.
        scenario = context.scenario
        self.faults = (
            SessionFaults(self, scenario, context.seed) if scenario.session.has_faults else None
        )

    # ----- the session's own process -----

    def process(self) -> Generator[simpy.Event, Any, None]:
        env = self.env
        self.start_ns = env.now
        faults = self.faults
        for prompt in range(self.user.prompt_count()):
            if prompt:
                yield env.timeout(self.user.think_time_ns())
                if faults is not None:
                    faults.before_prompt()
            self._chain_done = env.event()
            self._start(prompt)
            yield self._chain_done
            if faults is not None and faults.broken:
                break
        self.end_ns = env.now
        self.context.on_session_end(self)

    @_acts
    @_strict_stops
    def _start(self, prompt: int) -> None:
        self._dispatch(self.loop.start(self.user.prompt_text(prompt), self.env.now))

    @_acts
    @_strict_stops
    def resume_chain(self, text: str) -> None:
        """A resumed (or rewound) session goes on: the user's `text` starts a new chain."""
        self._dispatch(self.loop.start(text, self.env.now))

    def turn_abandoned(self, commands: list[Command]) -> None:
        """A crash or a rewind ended the turn (`ToolTurnLoop.resume`): stop what it ran."""
        self._tools_turn = 0
        self._dispatch(commands)

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

    # ----- commands -----

    def _dispatch(self, commands: list[Command]) -> None:
        if self.faults is not None:
            self.faults.observe(commands)
        for command in commands:
            match command:
                case StartTool():
                    self._start_tool(command)
                case SendRequest():
                    self._send(command)
                case CancelTool():
                    run = self._tools.pop(command.tool_use_id, None)
                    if run is not None:
                        run.cancel()
                case AskPermission():
                    self._ask(command)
                case WaitUntil():
                    self._wake_token += 1
                    self.env.call_at(command.time_ns, self._wake, self._wake_token)
                case CancelRequest():
                    if self._active is not None:
                        self._close(self._active, CANCELLED)
                case TurnEnded():
                    self._tools_turn = 0
                case SessionEnded():
                    # The chain can end without its turn's TurnEnded (a retry refused after the
                    # tools of a discarded attempt started, an interrupt during the backoff):
                    # the turn's tools phase, and its attachments, end with it.
                    self._tools_turn = 0
                    assert self._chain_done is not None
                    self._chain_done.succeed()
                case _:
                    pass  # ToolProgress, ResultReady, DiscardedResult: for observers only.

    @_acts
    @_strict_stops
    def _wake(self, token: int) -> None:
        if token == self._wake_token:
            self._dispatch(self.loop.wake(self.env.now))

    # ----- requests and streams -----

    def _send(self, command: SendRequest) -> None:
        """Log the request and make it the active one at once (so that a cancellation in the
        same instant finds it), then serve it once the current commands are carried out."""
        log = RequestLog(
            command.request_id, self.loop.turn, command.attempt, command.model, self.env.now
        )
        self.requests.append(log)
        stream = _Stream(log)
        self._active = stream
        self.user.request_sent(log.turn)
        if command.pairing_violations:
            self.pairing_violations += len(command.pairing_violations)
            log.fault = PAIRING_VIOLATION
        self.env.call_at(self.env.now, self._serve, command, stream)

    # A request is served by a chain of callbacks rather than a simpy process: it only waits
    # (for a slot, for its stream's decision points, for its end), and a process costs a
    # generator resumption and more scheduled events per wait.

    @_acts
    def _serve(self, command: SendRequest, stream: _Stream) -> None:
        if stream.closed:
            return  # Cancelled before it was served.
        endpoint = self.context.endpoint
        decision = endpoint.decide()
        if decision == "refuse":
            refusal = self.context.model.refuse(
                self._model_turn(command, stream), endpoint.utilisation(), origin_ns=self.env.now
            )
            stream.log.fault = ENDPOINT_REFUSED
            self.env.call_at(refusal.at_ns, self._failed, stream, refusal)
        elif decision == "queue":
            queued = stream.queued = endpoint.enqueue()
            queued.callbacks.append(lambda _: self._admitted(command, stream))
        else:
            endpoint.admit()
            self._admitted(command, stream)

    @_acts
    def _admitted(self, command: SendRequest, stream: _Stream) -> None:
        """The request holds a slot: ask the model, then report its error or feed its stream."""
        stream.queued = None
        if stream.closed:
            return
        now = self.env.now
        log = stream.log
        endpoint = self.context.endpoint
        stream.holds_slot = True
        model = self.context.model
        turn = self._model_turn(command, stream)
        utilisation = endpoint.utilisation_of_others()
        response: Response
        if command.pairing_violations:  # the API's 400, worded by the loop's check
            response = model.reject(
                command.pairing_violations[0], turn, utilisation, origin_ns=now
            )
        else:
            response = model.answer(command.request_body, turn, utilisation, origin_ns=now)
        if response.faults:
            log.fault = ",".join(response.faults)
        if isinstance(response, HttpError):
            self.env.call_at(response.at_ns, self._failed, stream, response)
            return
        log.status = "200"
        events = stream.events = response.events
        times = stream.times = response.times
        if events:
            self._plan_interrupt(self.user.streaming_interrupt(log.turn, times[0]))
        if self.faults is not None:
            self.faults.stream_admitted(log.turn, events, response.end_ns)
        points = feed_points(response.tool_stops, len(events))
        self._feed_points(stream, points, 0, response.end_ns)

    def _model_turn(self, command: SendRequest, stream: _Stream) -> Turn:
        # The model counts a session's turns from 0 (its scripts are lists of responses).
        return Turn(self.session_id, stream.log.turn - 1, command.attempt)

    def _feed_points(
        self, stream: _Stream, points: list[int], next_point: int, end_ns: int
    ) -> None:
        """Feed the stream up to each decision point from `points[next_point]` on as its time
        comes, then end the stream at `end_ns`; stop as soon as the stream is closed."""
        now = self.env.now
        times = stream.times
        for index in range(next_point, len(points)):
            point = points[index]
            if times[point] > now:
                self.env.call_at(times[point], self._feed_at, stream, points, index, end_ns)
                return
            self._feed(stream, point + 1)
            if stream.closed:
                return
        if end_ns > now:
            self.env.call_at(end_ns, self._stream_ended, stream)
        else:
            self._stream_ended(stream)

    @_acts
    def _feed_at(self, stream: _Stream, points: list[int], index: int, end_ns: int) -> None:
        if stream.closed:
            return
        self._feed(stream, points[index] + 1)
        if not stream.closed:
            self._feed_points(stream, points, index + 1, end_ns)

    @_strict_stops
    def _feed(self, stream: _Stream, stop: int) -> None:
        """Feed events up to index `stop` (exclusive), each at its own time; carry out the
        commands of an event before the next event is fed. With a trace, the events fed are
        added to it (one test per call, none per event without)."""
        on_events = self.loop.on_events
        request_id = stream.log.request_index
        events, times = stream.events, stream.times
        start = fed = stream.fed
        if start == 0 and stop > 0:
            stream.log.first_event_ns = times[0]
        while fed < stop:
            commands, taken = on_events(events[fed:stop], times[fed:stop], request_id)
            fed += taken
            if commands:
                stream.fed = fed
                self._dispatch(commands)
                if stream.closed:
                    break
        stream.fed = fed
        self.events_fed += fed - start
        stream.log.n_events = fed
        trace = self.trace
        if trace is not None:
            trace.take(self.session_id, stream.log.turn, request_id, events, times, start, fed)

    def _feed_due_before(self, stream: _Stream, now: int) -> None:
        """Feed the events of the current stream due strictly before `now`."""
        times = stream.times
        if not times or stream.closed:
            return
        stop = stream.fed
        while stop < len(times) and times[stop] < now:
            stop += 1
        if stop > stream.fed:
            self._feed(stream, stop)

    @_acts
    @_strict_stops
    def _failed(self, stream: _Stream, error: HttpError) -> None:
        if stream.closed:
            return
        now = self.env.now
        stream.log.status = str(error.status)
        self._close(stream, None)
        retry_after = error.retry_after_ns if self._honour_retry_after else None
        self._dispatch(
            self.loop.request_failed(
                error.status, now, retry_after_ns=retry_after, request_id=stream.log.request_index
            )
        )

    @_acts
    @_strict_stops
    def _stream_ended(self, stream: _Stream) -> None:
        if stream.closed:
            return
        self._close(stream, None)
        self._dispatch(self.loop.stream_ended(self.env.now, request_id=stream.log.request_index))

    def _close(self, stream: _Stream, status: str | None) -> None:
        """The request is over (answered, failed or cancelled): free its slot, finish its log."""
        if stream.closed:
            return
        stream.closed = True
        log = stream.log
        if status is not None and log.status == "pending":
            log.status = status
        log.end_ns = self.env.now
        log.response = self.loop.response_summary(log.request_index)
        endpoint = self.context.endpoint
        if stream.queued is not None:
            endpoint.withdraw(stream.queued)
        elif stream.holds_slot:
            endpoint.release()
        if self._active is stream:
            self._active = None

    # ----- tools and permission -----

    def _plan(self, tool_use_id: str, name: str) -> CallPlan:
        plan = self._plans.pop(tool_use_id, None)
        return plan if plan is not None else self.call_plan(name, tool_use_id)

    def call_plan(self, name: str, tool_use_id: str) -> CallPlan:
        """The call's plan: scripted by the model's script when it scripts the run (a replay),
        else drawn."""
        scripted = self.context.model.scripted_call(self.session_id, tool_use_id)
        if scripted is not None and scripted.duration_ms is not None:
            return scripted_plan(ms_to_ns(scripted.duration_ms), scripted.result, scripted.is_error)
        return self.draws.tool_plan(name, tool_use_id)

    def _start_tool(self, command: StartTool) -> None:
        turn = self.loop.turn
        if self._tools_turn != turn:
            self._tools_turn = turn
            self._tools_phase_started(turn)
        plan = self._plan(command.tool_use_id, command.name)
        self._tools[command.tool_use_id] = ToolRun(
            self.env, command.tool_use_id, command.name, plan, self._progress, self._finished
        )

    @_strict_stops
    def _progress(self, tool_use_id: str, progress: Any) -> None:
        self._dispatch(self.loop.tool_progress(tool_use_id, progress, self.env.now))

    @_acts
    @_strict_stops
    def _finished(self, tool_use_id: str, outcome: ToolOutcome, text: str) -> None:
        self._tools.pop(tool_use_id, None)
        self._dispatch(self.loop.tool_finished(tool_use_id, outcome, text, self.env.now))

    def _ask(self, command: AskPermission) -> None:
        plan = self.call_plan(command.name, command.tool_use_id)
        self._plans[command.tool_use_id] = plan
        answer = permission_answer(plan)
        self.env.call_at(
            self.env.now + answer.delay_ns, self._decided, command.tool_use_id, answer.allowed
        )

    @_acts
    @_strict_stops
    def _decided(self, tool_use_id: str, allowed: bool) -> None:
        self._dispatch(self.loop.permission_decided(tool_use_id, allowed, self.env.now))

    # ----- the user: interrupts and attachments -----

    def _plan_interrupt(self, planned: PlannedInterrupt | None) -> None:
        if planned is not None:
            self.env.call_at(planned.at_ns, self._user_interrupt, planned.turn, planned.phase)

    def _tools_phase_started(self, turn: int) -> None:
        planned, arrivals = self.user.tools_started(turn, self.env.now)
        self._plan_interrupt(planned)
        if arrivals is not None:
            self._next_attachment(arrivals, turn, 1)

    @_acts
    @_strict_stops
    def _user_interrupt(self, turn: int, phase: InterruptPhase) -> None:
        if not in_phase(self.loop, turn, phase):
            return
        now = self.env.now
        if self._active is not None:
            self._feed_due_before(self._active, now)
            if not in_phase(self.loop, turn, phase):
                return  # The events the loop had not seen yet ended the phase.
        self._dispatch(self.loop.interrupt(now))

    def _next_attachment(self, arrivals: AttachmentArrivals, turn: int, count: int) -> None:
        """Attachment `count` of `turn` arrives after the next gap, if the tools still run."""
        if count > MAX_ATTACHMENTS_PER_TURN:
            return
        gap_ns, kind = arrivals.next()
        self.env.call_at(self.env.now + gap_ns, self._attach, arrivals, turn, count, kind)

    def _attach(self, arrivals: AttachmentArrivals, turn: int, count: int, kind: str) -> None:
        if self.loop.turn != turn or self._tools_turn != turn:
            return
        block = attachment_block(kind, count, turn)
        self.loop.attachment(block, self.env.now, kind=AttachmentKind(kind))
        self._next_attachment(arrivals, turn, count + 1)
