"""The random draws of a session that are not the user's, keyed by what they are for.

The plan of one tool call (`toolturn.tools.plans`, keyed by the call's tool_use id, which is the
same under every policy) and the jitter of one retry (keyed by turn and retry). The user's draws
(prompts, think times, interrupts, attachments) are `toolturn.user.draws`. Nothing depends on when
things happen, so every executor policy and every load level sees the same draws for the same
session, turn and call, and their difference is theirs alone.
"""

from __future__ import annotations

from toolturn.randomness import stream
from toolturn.scenario.schema import Scenario
from toolturn.tools.execution import CallPlan
from toolturn.tools.plans import call_streams, planned_call


class SessionDraws:
    """The tool and retry draws of one session of a scenario under one root seed."""

    __slots__ = ("_calls", "_scenario", "_seed", "_specs", "session_id")

    def __init__(self, scenario: Scenario, seed: int, session_id: int) -> None:
        self._scenario = scenario
        self._seed = seed
        self.session_id = session_id
        self._specs = {spec.name: spec for spec in scenario.tool_specs}
        self._calls = call_streams(seed, session_id)

    def tool_plan(self, name: str, tool_use_id: str) -> CallPlan:
        """The plan of one call, keyed by its tool_use id (ids are the same under every policy)."""
        return planned_call(self._specs[name], self._calls, tool_use_id)

    def retry_jitter(self, turn: int, retry: int) -> float:
        """The fraction of a retry's backoff taken off, in [0, jitter)."""
        jitter = self._scenario.runtime.retries.jitter
        if jitter <= 0:
            return 0.0
        return self.retry_unit(turn, retry) * jitter

    def retry_unit(self, turn: int, retry: int) -> float:
        """The uniform draw in [0, 1) behind a retry's jitter: the same for every profile."""
        rng = stream(self._seed, "retry_jitter", self.session_id, turn, retry)
        return float(rng.random())
