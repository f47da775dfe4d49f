"""The simulated user of one session: what it sends, and when it steps into a turn.

Model-free and clock-free: the driver (the simulator's session in virtual time, the live driver
in real time) says what happened and when, and schedules what comes back on its own clock, so
the engine and the live driver have one user, turn by turn the same.

Rules (each from the keyed draws of `toolturn.user.draws`):

1. Prompts: `prompt_count()` prompts (at least 1), prompt `i`'s text `prompt_text(i)`; before
   each prompt after the first the user thinks `think_time_ns()`.
2. Interrupts: at most one per turn, drawn when the turn's first request is sent
   (`request_sent`), aimed `after_ns` after the start of its phase: the turn's first stream
   event (`streaming_interrupt`, asked at each stream's first event until one takes it) or its
   first tool start (`tools_started`). When it comes due, it applies only if the loop is still in
   that turn and phase (`in_phase`); otherwise it is dropped.
3. Attachments: while a turn's tools run (from its first tool start), a Poisson process of every
   kind together (`toolturn.user.attachments`); attachment `count` is `attachment_block(...)`.
4. Permission: a call that asks is answered with its plan's `permitted`, after the plan's
   `permission_delay_ns` (`permission_answer`; the plan is the call's, `toolturn.tools.plans`).
"""

from __future__ import annotations

from dataclasses import dataclass

from toolturn.runtime.loop import Phase, ToolTurnLoop
from toolturn.scenario.schema import Scenario
from toolturn.tools.execution import CallPlan
from toolturn.user.attachments import AttachmentArrivals
from toolturn.user.draws import InterruptDraw, InterruptPhase, UserDraws

_STREAMING_PHASES = frozenset({Phase.AWAITING_RESPONSE, Phase.STREAMING, Phase.BACKOFF})


@dataclass(frozen=True, slots=True)
class PlannedInterrupt:
    """The user presses Esc at `at_ns` if turn `turn` is still in `phase` then (rule 2)."""

    turn: int
    phase: InterruptPhase
    at_ns: int


@dataclass(frozen=True, slots=True)
class PermissionAnswer:
    """The user's answer to a permission ask, `delay_ns` after it was asked (rule 4)."""

    allowed: bool
    delay_ns: int


def permission_answer(plan: CallPlan) -> PermissionAnswer:
    """How the user answers call `plan`'s permission ask."""
    return PermissionAnswer(plan.permitted, plan.permission_delay_ns)


def in_phase(loop: ToolTurnLoop, turn: int, phase: InterruptPhase) -> bool:
    """Whether `loop` is still in `turn`, in `phase` (waiting, backing off or streaming count as
    `streaming`)."""
    if loop.turn != turn:
        return False
    if phase == "streaming":
        return loop.phase in _STREAMING_PHASES
    return loop.phase is Phase.TOOLS


class SimulatedUser:
    """The user of session `session_id` of `scenario` under root seed `seed`."""

    __slots__ = ("_drawn_turn", "_interrupt", "draws", "session_id")

    def __init__(self, scenario: Scenario, seed: int, session_id: int) -> None:
        self.session_id = session_id
        self.draws = UserDraws(scenario, seed, session_id)
        self._drawn_turn = 0
        self._interrupt: InterruptDraw | None = None

    def prompt_count(self) -> int:
        """Rule 1: how many prompts the session has. Call it first, once."""
        return self.draws.prompt_count()

    def think_time_ns(self) -> int:
        """Rule 1: the pause before the next prompt (once per prompt after the first)."""
        return self.draws.think_time_ns()

    def prompt_text(self, prompt: int) -> str:
        """Rule 1: the text of prompt `prompt` (from 0)."""
        return f"Prompt {prompt + 1} of session {self.session_id}: please continue the task."

    def request_sent(self, turn: int) -> None:
        """A request of `turn` was sent: its interrupt is drawn at the first (rule 2)."""
        if turn != self._drawn_turn:
            self._drawn_turn = turn
            self._interrupt = self.draws.interrupt(turn)

    def streaming_interrupt(self, turn: int, first_event_ns: int) -> PlannedInterrupt | None:
        """A stream of `turn` has its first event at `first_event_ns`: the interrupt aimed at
        its streaming phase, if the turn has one not yet planned (rule 2)."""
        draw = self._interrupt
        if draw is None or draw.phase != "streaming":
            return None
        self._interrupt = None  # At most one interrupt per turn.
        return PlannedInterrupt(turn, "streaming", first_event_ns + draw.after_ns)

    def tools_started(
        self, turn: int, now_ns: int
    ) -> tuple[PlannedInterrupt | None, AttachmentArrivals | None]:
        """The first tool of `turn` started at `now_ns`: the interrupt aimed at its tools phase
        (rule 2) and the attachments arriving while they run (rule 3), each if any."""
        draw = self._interrupt
        planned = None
        if draw is not None and draw.phase == "tools" and self._drawn_turn == turn:
            self._interrupt = None
            planned = PlannedInterrupt(turn, "tools", now_ns + draw.after_ns)
        return planned, self.draws.attachments(turn)
