"""One session in simulated time: a user, a `ToolTurnLoop`, and the commands it hands out.

The session process sends the user's prompts (with think time between the answer to one and the
next) and carries out every command the loop returns, each by the part of the session whose job
it is (`toolturn.engine.session_state` says how the parts fit):

- `SendRequest`, `CancelRequest`: the request path (`toolturn.engine.request_path`).
- `StartTool` / `CancelTool`, `AskPermission`: the tool calls (`toolturn.engine.tool_calls`).
- `WaitUntil`: call `wake` at that time (only the latest wait counts; a stale wake is left to
  fire and is ignored).
- `TurnEnded` / `SessionEnded`: end the turn's tools phase / the prompt's chain of turns.

The simulated user's interrupts and attachments are `toolturn.engine.user_hooks`.

Session faults (`toolturn.engine.session_faults`, when the scenario has any): every list of commands
the loop returns is shown to the session's transcript log first; a response admitted draws its
turn's crash and rewind; a crash or a rewind abandons the turn (`turn_abandoned`) and a new chain
goes on from the resumed transcript (`resume_chain`); compaction runs before each later prompt;
in strict mode a resumed transcript that breaks stops this session (`stopped`), not the run.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Generator
from typing import Any

import simpy

from toolturn.engine.context import SimulationContext
from toolturn.engine.draws import SessionDraws
from toolturn.engine.request_path import RequestPath
from toolturn.engine.session_faults import SessionFaults
from toolturn.engine.session_state import acts_strictly
from toolturn.engine.tool_calls import ToolCalls
from toolturn.engine.user_hooks import UserHooks
from toolturn.runtime import commands as rc
from toolturn.user import SimulatedUser

# The loop's commands that the session does not carry out (a tool's progress, a result handed
# over or discarded): only observers read them (the transcript log, a live driver).
_FOR_OBSERVERS = frozenset({rc.ToolProgress, rc.ResultReady, rc.DiscardedResult})


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


class Session(RequestPath, ToolCalls, UserHooks):
    """One session of the simulation; `process()` is its simpy process."""

    def __init__(self, context: SimulationContext, session_id: int, arrival_ns: int) -> None:
        self.context = context
        self.env = context.env
        self.session_id = session_id
        self.arrival_ns = arrival_ns
        self.start_ns = None
        self.end_ns = None
        self.draws = SessionDraws(context.scenario, context.seed, session_id)
        self.user = SimulatedUser(context.scenario, context.seed, session_id)
        me = weakref.ref(self)
        self.loop = context.loops.new_loop(_jitter_of(me), _jitter_of(me, unit=True))
        self.requests = []
        self.pairing_violations = 0
        bounds = context.bounds
        self.actions = 0
        self.max_actions = bounds.actions
        self.deadline_ns = arrival_ns + bounds.span_ns
        self.events_fed = 0
        self.trace = context.trace
        self._honour_retry_after = context.scenario.runtime.retries.honour_retry_after
        self._active = None
        self._tools = {}
        self._plans = {}
        self._chain_done = None
        self._wake_token = 0
        self._tools_turn = 0
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

    @acts_strictly
    def _start(self, prompt: int) -> None:
        self._dispatch(self.loop.start(self.user.prompt_text(prompt), self.env.now))

    @acts_strictly
    def resume_chain(self, text: str) -> None:
        """A resumed (or rewound) session goes on: the user's `text` starts a new chain."""
        self._dispatch(self.loop.start(text, self.env.now))

    def turn_abandoned(self, commands: list[rc.Command]) -> None:
        """A crash or a rewind ended the turn (`ToolTurnLoop.resume`): stop what it ran."""
        self._tools_turn = 0
        self._dispatch(commands)

    # ----- commands -----

    def _dispatch(self, commands: list[rc.Command]) -> None:
        if self.faults is not None:
            self.faults.observe(commands)
        for command in commands:
            if type(command) in _FOR_OBSERVERS:
                continue  # Half the commands: skipped before the eight cases below.
            match command:
                case rc.StartTool():
                    self._start_tool(command)
                case rc.SendRequest():
                    self._send(command)
                case rc.CancelTool():
                    self._cancel_tool(command.tool_use_id)
                case rc.AskPermission():
                    self._ask(command)
                case rc.WaitUntil():
                    self._wake_token += 1
                    self.env.call_at(command.time_ns, self._wake, self._wake_token)
                case rc.CancelRequest():
                    self._cancel_request()
                case rc.TurnEnded():
                    self._tools_turn = 0
                case rc.SessionEnded():
                    # The chain can end without its turn's TurnEnded (a retry refused after the
                    # tools of a discarded attempt started, an interrupt during the backoff):
                    # the turn's tools phase, and its attachments, end with it.
                    self._tools_turn = 0
                    assert self._chain_done is not None
                    self._chain_done.succeed()
                case _:
                    pass  # Anything else is for observers only, as `_FOR_OBSERVERS`.

    @acts_strictly
    def _wake(self, token: int) -> None:
        if token == self._wake_token:
            self._dispatch(self.loop.wake(self.env.now))
