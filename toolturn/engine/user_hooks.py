"""The simulated user's hooks in a session: what `toolturn.user` (the same user as the live
driver's) does while a turn runs, scheduled in simulated time.

At most one interrupt per turn, `after` the start of its phase (the turn's first stream event, or
its first tool start), dropped if the phase is over by then; attachments arriving while the
turn's tools run (from its first tool start to its end, or to the end of the prompt's chain when
that comes first). The user sends at most `MAX_ATTACHMENTS_PER_TURN` attachments in one turn.
The user's prompts and think times are the session's process (`toolturn.engine.session`), its
permission answers the tool calls' (`toolturn.engine.tool_calls`).

Why a user interrupt during streaming first feeds the events due before it: the stream is fed in
batches, so the loop may be behind the simulated clock; it must see exactly what had arrived. A
stale interrupt is left to fire and is ignored.
"""

from __future__ import annotations

from toolturn.engine.session_state import SessionState, acts_strictly
from toolturn.limits import MAX_ATTACHMENTS_PER_TURN
from toolturn.runtime.attachments import AttachmentKind
from toolturn.user import AttachmentArrivals, PlannedInterrupt, attachment_block, in_phase
from toolturn.user.draws import InterruptPhase


class UserHooks(SessionState):
    """The simulated user's interrupts and attachments (a part of
    `toolturn.engine.session.Session`)."""

    def _plan_interrupt(self, planned: PlannedInterrupt | None) -> None:
        if planned is not None:
            self.env.call_at(planned.at_ns, self._user_interrupt, planned.turn, planned.phase)

    def _tools_phase_started(self, turn: int) -> None:
        planned, arrivals = self.user.tools_started(turn, self.env.now)
        self._plan_interrupt(planned)
        if arrivals is not None:
            self._next_attachment(arrivals, turn, 1)

    @acts_strictly
    def _user_interrupt(self, turn: int, phase: InterruptPhase) -> None:
        if not in_phase(self.loop, turn, phase):
            return
        now = self.env.now
        if self._feed_active_due_before(now) and not in_phase(self.loop, turn, phase):
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
