"""Every random draw a session makes, keyed by what it is for (common random numbers).

Each draw comes from its own stream named by concern and identity (`sim.randomness.stream`):
the prompt count and think times of session 7, the interrupt of its turn 3, the plan of one tool
call, the jitter of one retry. Nothing is keyed by the order in which things happen, so every
executor policy and every load level sees the same draws for the same session, turn and call, and
their difference is theirs alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from sim.randomness import stream
from sim.scenario.schema import Scenario
from sim.tools.execution import CallPlan, sample_call
from sim.tools.spec import ToolSpec

InterruptPhase = Literal["streaming", "tools"]
NS_PER_S = 1_000_000_000


@dataclass(frozen=True, slots=True)
class InterruptDraw:
    """The user interrupts this turn `after_ns` after the start of `phase` (if still in it)."""

    phase: InterruptPhase
    after_ns: int


class SessionDraws:
    """The draws of one session of a scenario under one root seed."""

    __slots__ = ("_scenario", "_seed", "session_id", "_specs")

    def __init__(self, scenario: Scenario, seed: int, session_id: int) -> None:
        self._scenario = scenario
        self._seed = seed
        self.session_id = session_id
        self._specs = {spec.name: spec for spec in scenario.tool_specs}

    def prompt_count(self) -> int:
        """How many prompts the user sends in this session (at least 1)."""
        rng = stream(self._seed, "prompts", self.session_id)
        return max(1, self._scenario.session.user_prompts.sample(rng))

    def think_time_ns(self, prompt_index: int) -> int:
        """The user's pause before prompt `prompt_index` (1-based after the first prompt)."""
        rng = stream(self._seed, "think", self.session_id, prompt_index)
        return self._scenario.session.think_time.sample_ns(rng)

    def interrupt(self, turn: int) -> InterruptDraw | None:
        """The interrupt aimed at turn `turn`, or None if the user lets it run. Every draw is made
        whether or not it is used, so the probability does not shift the others."""
        config = self._scenario.session.interrupts
        if config.probability <= 0:
            return None
        rng = stream(self._seed, "interrupt", self.session_id, turn)
        fires, which = rng.random(2)
        after_ns = config.after.sample_ns(rng)
        if fires >= config.probability:
            return None
        weights = config.phase
        phase: InterruptPhase = (
            "streaming" if which * (weights.streaming + weights.tools) < weights.streaming else "tools"
        )
        return InterruptDraw(phase, after_ns)

    def attachment_gaps(self, kind: str, turn: int) -> AttachmentGaps | None:
        """Gaps between arrivals of attachments of `kind` during turn `turn`'s tools (a Poisson
        process), or None when the kind's rate is 0."""
        rate = self._scenario.session.attachments.rates()[kind]
        if rate <= 0:
            return None
        return AttachmentGaps(stream(self._seed, "attachment", kind, self.session_id, turn), rate)

    def tool_plan(self, name: str, tool_use_id: str) -> CallPlan:
        """The plan of one call, keyed by its tool_use id (ids are the same under every policy)."""
        spec: ToolSpec = self._specs[name]
        return sample_call(spec, stream(self._seed, "tool", self.session_id, tool_use_id))

    def retry_jitter(self, turn: int, retry: int) -> float:
        """The fraction of a retry's backoff taken off, in [0, jitter)."""
        jitter = self._scenario.runtime.retries.jitter
        if jitter <= 0:
            return 0.0
        return float(stream(self._seed, "retry_jitter", self.session_id, turn, retry).random()) * jitter


class AttachmentGaps:
    """Exponential gaps in ns, drawn one at a time from one keyed stream."""

    __slots__ = ("_rng", "_mean_ns")

    def __init__(self, rng: np.random.Generator, rate_per_s: float) -> None:
        self._rng = rng
        self._mean_ns = NS_PER_S / rate_per_s

    def next_ns(self) -> int:
        # At least 1 ns, so a process of arrivals always moves time forward.
        return max(1, int(self._rng.exponential(self._mean_ns)))
