"""How long and how busy one session of a scenario can be: the bounds a runaway session passes.

Everything a session does is finite by construction: a bounded number of prompts, turns per
prompt (the loop's `max_turns_per_prompt`), attempts per turn (the retry budget, fresh once after
a fallback), tool calls per response, progress reports per call (`MAX_PROGRESS_PER_CALL`) and
attachments per turn (`MAX_ATTACHMENTS_PER_TURN`), and every wait is a draw of a capped
distribution. These are the worst cases of all of them together, doubled, so a session that goes
past one is not unlucky but broken (a chain of callbacks that never stops):

- `actions`: the callbacks a session may be handed (a prompt, serving a request, a batch of its
  stream, its end or error, a retry's wake, an interrupt, a permission answer, a tool's finish),
  late ones for work already cancelled included. Per attempt: 8 + 4 * tools; per session:
  prompts * (2 + turns * attempts * attempt), each resumed chain (crash, rewind) counted as a
  prompt of its own. Progress reports and attachments are not counted:
  each chain has its own cap (per call, per turn) and ends with its call or turn.
- `span_ns`: simulated time from the session's arrival: `Scenario.longest_session_ns` with as
  many sessions sharing the endpoint as can run at once (every draw at its largest; a scenario
  whose single session could outlast `toolturn.limits.MAX_SESSION_MS` does not validate).

A session past either bound is stopped (`SessionRunaway`), naming the seed, the policy and the
session that reproduce it.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolturn.engine.stopped_session import StoppedSession
from toolturn.errors import UserError
from toolturn.scenario.schema import Scenario

# Worst cases are doubled: the bound is for catching a session that never stops, not a slow one.
MARGIN = 2


@dataclass(frozen=True, slots=True)
class SessionBounds:
    actions: int
    span_ns: int


class SessionRunaway(StoppedSession, UserError):
    """A session went past its bounds: a simulator bug, stopped instead of running forever.

    The fields are the positional args, so that the exception pickles (from a worker process)."""

    def __init__(
        self, seed: int, session_id: int, policy: str, time_ns: int, detail: str,
        profile: str = "default",
    ) -> None:
        super().__init__(seed, session_id, policy, time_ns, detail, profile)
        # What a UserError carries, which its own __init__ (not called: see StoppedSession)
        # would have set.
        self.message = str(self)
        self.details = ()

    def __str__(self) -> str:
        profile = "" if self.profile == "default" else f", profile {self.profile}"
        flags = "--seed and --policy" if not profile else "--seed, --policy and --profile"
        return (
            f"session {self.session_id} (seed {self.seed}, policy {self.policy}{profile}) stopped "
            f"at {self.time_ns / 1e9:.3f} s of simulated time: {self.detail} (a simulator bug: "
            f"reproduce it with {flags} and report it with the scenario)"
        )


def session_bounds(scenario: Scenario, level: float | None) -> SessionBounds:
    """The bounds of one session of `scenario` at load `level` (see the module docstring)."""
    turns = scenario.runtime.max_turns_per_prompt
    attempt_actions = 8 + 4 * scenario.tool_calls_per_response
    # A crash or a rewind starts the prompt's chain again (at most `chains_per_prompt` times).
    prompts = scenario.session.user_prompts.largest() * scenario.session.chains_per_prompt()
    actions = prompts * (2 + turns * scenario.attempts_per_turn * attempt_actions)
    span_ns = scenario.longest_session_ns(_at_once(scenario, level))
    return SessionBounds(actions=MARGIN * actions, span_ns=MARGIN * span_ns)


def _at_once(scenario: Scenario, level: float | None) -> int:
    """The most sessions running at once: the concurrency (closed loop), else every session."""
    load = scenario.load
    if load.mode == "closed":
        concurrency = load.concurrency if level is None else int(level)
        assert concurrency is not None
        return min(concurrency, load.sessions)
    return load.sessions
