"""Session-level faults of one simulated session: crashes, rewinds and compaction, and the
persisted transcript (`toolturn.engine.transcript_log`) a crash resumes from.

Rules (`[session.faults]`, `[session.compaction]`):

1. Draws. Each turn draws, when its first response stream is admitted and from streams keyed by
   session and turn (`session_crash`, `session_rewind`: nothing else's draws move), whether it
   crashes (chance `crash`) and whether the user rewinds during it (chance `rewind`), and where:
   a point uniform over the turn as planned, from that admission to the stream's end plus the
   longest of its calls' planned runs (permission delay and duration, `toolturn.tools.plans`). So
   the point may fall while the model streams, while tools run, or between a tool_use written and
   its result written; with several calls, between their results. A fault whose point comes after
   its turn ended (or while no turn runs) does not happen, nor one past `MAX_RESUMES_PER_PROMPT`
   resumes of the prompt.
2. Crash. The process dies: the transcript log keeps the lines on disk by then, the loop resumes
   from what they hold (loop rule 16: the request in flight and the running tools die with it),
   and after `restart_delay` (keyed `session_restart`) the resumed session sends
   `CONTINUE_TEXT` as the user, as `--continue` with a prompt does; its first request goes
   through the boundary repair. Every call of the turn that had started and whose result line did
   not reach the disk is work lost (`toolturn.runtime.record.WorkLost`).
3. Rewind. The user goes back to an earlier message: the transcript is cut after a message drawn
   uniformly from the first to the last, the in-flight work is abandoned as in a crash (cause
   `rewind`), the branch is written as one line (the resumed history keeps the last branch
   only), and the user at once sends `REWIND_TEXT`.
4. Compaction. Before each prompt after the first, a transcript whose input tokens (as the mock
   model counts them: characters / 4) pass `trigger_tokens` is compacted
   (`toolturn.runtime.compaction`, cut `naive` or `turn_boundary`), written as one line.
5. Strict mode. A request after a resume or a compaction whose transcript breaks the pairing
   rules stops its session (`BROKEN_TRANSCRIPT`, the session's outcome), not the run: the seed's
   "fail instead of injecting", for one conversation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from toolturn.engine.clock import Clock
from toolturn.engine.transcript_log import TranscriptLog
from toolturn.model.input_tokens import CHARS_PER_INPUT_TOKEN, content_chars
from toolturn.randomness import stream
from toolturn.runtime.commands import Command, TurnEnded
from toolturn.runtime.compaction import compact
from toolturn.runtime.loop import Phase, ToolTurnLoop
from toolturn.runtime.record import RequestSent, Resume, SessionEnd, WorkLost
from toolturn.scenario.schema import MAX_RESUMES_PER_PROMPT, Scenario
from toolturn.tools.execution import TOOL_TIMEOUT_NS, CallPlan


class FaultySession(Protocol):
    """What the faults need of their session (`toolturn.engine.session.Session`)."""

    env: Clock
    session_id: int
    loop: ToolTurnLoop

    def call_plan(self, name: str, tool_use_id: str) -> CallPlan: ...
    def turn_abandoned(self, commands: list[Command]) -> None: ...
    @property
    def resume_chain(self) -> Callable[[str], None]: ...

CONTINUE_TEXT = "[session resumed] Continue from where you left off."
REWIND_TEXT = "[rewound] Let's go back to this point and take another way."
BROKEN_TRANSCRIPT = "broken_transcript"
CRASH = "crash"
REWIND = "rewind"
COMPACTION = "compaction"


def planned_ns(plan: CallPlan) -> int:
    """How long a call would take from its block's end, as planned (0 if it is refused)."""
    if not plan.permitted:
        return plan.permission_delay_ns
    duration = plan.duration_ns if plan.duration_ns is not None else TOOL_TIMEOUT_NS
    return plan.permission_delay_ns + duration


class SessionFaults:
    """The faults of one session (rules 1-5) and its transcript log."""

    def __init__(self, session: FaultySession, scenario: Scenario, seed: int) -> None:
        config = scenario.session
        self._session = session
        # Calls of other names (the model's unknown-tool fault) are answered at once: no plan.
        self._tools = frozenset(spec.name for spec in scenario.tool_specs)
        self._seed = seed
        self._faults = config.faults
        self._compaction = config.compaction
        self.log = TranscriptLog(config.transcript, seed, session.session_id)
        self._drawn: set[int] = set()  # turns whose faults were drawn
        self._resumes = 0  # of the current prompt
        self.broken = False

    # ----- the session's hooks -----

    def observe(self, commands: list[Command]) -> None:
        """After every callback the loop answered: write what it did; a turn's end flushes."""
        session = self._session
        now = session.env.now
        self.log.observe(session.loop, commands, now)
        for command in commands:
            if type(command) is TurnEnded:
                self.log.flush(now)

    def stream_admitted(self, turn: int, events: list[dict[str, Any]], end_ns: int) -> None:
        """Rule 1: the first stream of `turn` is known; draw its faults."""
        if turn in self._drawn:
            return
        self._drawn.add(turn)
        session = self._session
        now = int(session.env.now)
        calls = [
            event["content_block"] for event in events
            if event["type"] == "content_block_start"
            and event["content_block"].get("type") == "tool_use"
            and event["content_block"].get("name") in self._tools
        ]
        longest = max(
            (planned_ns(session.call_plan(call["name"], call["id"])) for call in calls), default=0
        )
        span = max(end_ns - now, 0) + longest
        for kind, chance in ((CRASH, self._faults.crash), (REWIND, self._faults.rewind)):
            if chance <= 0:
                continue
            rng = stream(self._seed, f"session_{kind}", session.session_id, turn)
            fires, point, where = rng.random() < chance, rng.random(), rng.random()
            if fires:
                session.env.call_at(now + int(point * span), self._fire, kind, turn, where)

    def before_prompt(self) -> None:
        """Rule 4, and a new prompt's count of resumes."""
        self._resumes = 0
        trigger = self._compaction.trigger_tokens
        loop = self._session.loop
        if trigger is None:
            return
        tokens = sum(content_chars(m["content"]) for m in loop.messages) // CHARS_PER_INPUT_TOKEN
        if tokens <= trigger:
            return
        compacted = compact(loop.messages, self._compaction.cut)
        if compacted is not None:
            now = int(self._session.env.now)
            loop.resume(compacted, now, cause=COMPACTION)  # idle: nothing to stop
            self.log.replaced(loop, now)

    def stops_session(self) -> bool:
        """Rule 5: strict mode refused a request; whether it is the first after a resume or a
        compaction (then the session stops, marked), else the run stops."""
        loop = self._session.loop
        for entry in reversed(loop.record.entries):
            kind = type(entry)
            if kind is RequestSent:
                return False
            if kind is Resume:
                break
        else:
            return False
        self.broken = True
        loop.record.add(SessionEnd, int(self._session.env.now), BROKEN_TRANSCRIPT)
        return True

    # ----- crash and rewind -----

    def _fire(self, kind: str, turn: int, where: float) -> None:
        session = self._session
        loop = session.loop
        if (
            loop.turn != turn or loop.phase is Phase.IDLE or self.broken
            or self._resumes >= MAX_RESUMES_PER_PROMPT
        ):
            return
        self._resumes += 1
        now = int(session.env.now)
        if kind == CRASH:
            attempt = loop.record.attempt
            started = [
                call for call in loop.call_records()
                if call.turn == turn and call.attempt == attempt and call.start_ns is not None
            ]
            messages = self.log.crash(now)
            kept = self.log.results_kept()
            commands = loop.resume(messages, now, cause=CRASH)
            for call in started:
                if call.tool_use_id not in kept:
                    loop.record.add(WorkLost, now, call.tool_use_id, call.name)
            self.log.resync(loop)
            session.turn_abandoned(commands)
            rng = stream(self._seed, "session_restart", session.session_id, turn)
            delay = self._faults.restart_delay.sample_ns(rng)
            session.env.call_at(now + delay, session.resume_chain, CONTINUE_TEXT)
        else:
            keep = 1 + min(int(where * len(loop.messages)), len(loop.messages) - 1)
            commands = loop.resume(loop.messages[:keep], now, cause=REWIND)
            self.log.replaced(loop, now)
            session.turn_abandoned(commands)
            session.env.call_at(now, session.resume_chain, REWIND_TEXT)

