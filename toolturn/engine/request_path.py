"""A session's request path: a `SendRequest` from the loop to its stream's end.

The request takes a slot at the endpoint (or queues, or is refused with 429/529), asks the mock
model, then reports an HTTP error at its time or feeds the stream in batches between decision
points (`toolturn.engine.feed_points`). The body's pairing is the loop's verdict
(`pairing_violations`, not checked again): a violation, which only a broken repair makes, is
counted, marks the request and gets the API's 400. A `CancelRequest` abandons the stream and
frees its endpoint slot. Each request gets its `RequestLog`.

Under a protocol that retimes the stream (`toolturn.runtime.protocol_timing`), a misfired
speculative start is retracted at its time: the changing delta is a decision point, and just
before it is fed the loop hears `arguments_changed` for its block (its commands, the
speculative run's `CancelTool`, carried out then).

Cancelled work (an abandoned stream's pending timeout) is left to fire and is ignored: that is
cheaper than removing it and keeps every path simple.
"""

from __future__ import annotations

from typing import Any

import simpy

from toolturn.engine.feed_points import feed_points
from toolturn.engine.session_state import SessionState, acts, acts_strictly, strict_stops
from toolturn.metrics.request_log import CANCELLED, RequestLog
from toolturn.model.response import HttpError, Response, Turn
from toolturn.runtime.commands import SendRequest
from toolturn.runtime.protocol_timing import arm_chat_start, retimed

PAIRING_VIOLATION = "pairing_violation"
ENDPOINT_REFUSED = "endpoint_refused"


class _Stream:
    """The request being answered: its log, and the stream's events once there is one."""

    __slots__ = (
        "closed", "events", "fed", "holds_slot", "log", "queued", "retractions", "times",
    )

    def __init__(self, log: RequestLog) -> None:
        self.log = log
        # The stream's events and their arrival times in simulated time.
        self.events: list[dict[str, Any]] = []
        self.times: list[int] = []
        self.fed = 0
        self.closed = False
        self.holds_slot = False
        self.queued: simpy.Event | None = None
        # Misfires still to tell the loop of: event index -> block index (before that event).
        self.retractions: dict[int, int] = {}


class RequestPath(SessionState):
    """The requests of a session (a part of `toolturn.engine.session.Session`)."""

    # The request being answered, if any.
    _active: _Stream | None
    _honour_retry_after: bool

    def _cancel_request(self) -> None:
        """The loop's `CancelRequest`: the active stream is abandoned."""
        if self._active is not None:
            self._close(self._active, CANCELLED)

    def _feed_active_due_before(self, now: int) -> bool:
        if self._active is None:
            return False
        self._feed_due_before(self._active, now)
        return True

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

    @acts
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

    @acts
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
        events, times, tool_stops = response.events, response.times, response.tool_stops
        # When the protocol lets each call be known complete (toolturn.runtime.protocol_timing).
        chat_start = arm_chat_start(self.context.policy, self.context.scenario.runtime.chat_start)
        protocol = retimed(events, times, self.context.protocol, chat_start)
        if protocol is not None:
            events, times, tool_stops = protocol.events, protocol.times, protocol.tool_stops
            log.misfired = protocol.misfired
            stream.retractions = dict(protocol.retractions)
        stream.events, stream.times = events, times
        if events:
            self._plan_interrupt(self.user.streaming_interrupt(log.turn, times[0]))
        if self.faults is not None:
            self.faults.stream_admitted(log.turn, events, response.end_ns)
        points = feed_points(tool_stops, len(events))
        if stream.retractions:  # each is a decision point too, at its delta's time
            points = sorted({*points, *stream.retractions})
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

    @acts
    def _feed_at(self, stream: _Stream, points: list[int], index: int, end_ns: int) -> None:
        if stream.closed:
            return
        self._feed(stream, points[index] + 1)
        if not stream.closed:
            self._feed_points(stream, points, index + 1, end_ns)

    @strict_stops
    def _feed(self, stream: _Stream, stop: int) -> None:
        """Feed events up to index `stop` (exclusive), each at its own time; carry out the
        commands of an event before the next event is fed; tell the loop of a misfire just
        before its delta (`_Stream.retractions`). With a trace, the events fed are
        added to it (one test per call, none per event without)."""
        on_events = self.loop.on_events
        request_id = stream.log.request_index
        events, times = stream.events, stream.times
        start = fed = stream.fed
        if start == 0 and stop > 0:
            stream.log.first_event_ns = times[0]
        retractions = stream.retractions
        while fed < stop:
            end = stop
            if retractions:
                if fed in retractions:
                    stream.fed = fed
                    self._dispatch(self.loop.arguments_changed(
                        retractions.pop(fed), times[fed], request_id
                    ))
                    if stream.closed:
                        break
                end = min([position for position in retractions if position > fed] + [stop])
            commands, taken = on_events(events[fed:end], times[fed:end], request_id)
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

    @acts_strictly
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

    @acts_strictly
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
        log.end(status, self.env.now, self.loop.response_summary(log.request_index))
        endpoint = self.context.endpoint
        if stream.queued is not None:
            endpoint.withdraw(stream.queued)
        elif stream.holds_slot:
            endpoint.release()
        if self._active is stream:
            self._active = None
