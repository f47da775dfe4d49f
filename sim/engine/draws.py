"""Every random draw a session makes, keyed by what it is for (common random numbers).

Each draw comes from a stream named by concern and identity (`sim.randomness.stream`): the user
of session 7 (prompt count, then the think times in prompt order), its interrupts (fixed-size
blocks of draws for `TURNS_AHEAD` turns at a time, in turn order), the first attachment of each
of its turns (drawn for `TURNS_AHEAD` turns at a time, a block by turn number) and the later ones
of its turn 3, the plan of one tool call, the jitter of one retry. Nothing depends on when things
happen, so every executor policy and every load level sees the same draws for the same session,
turn and call, and their difference is theirs alone. (Prompts and turns are numbered the same
under every policy and each is drawn exactly once, in order, which is why one stream per session
serves them: a stream costs more to make than a turn's own draws.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from sim.randomness import stream
from sim.scenario.schema import Scenario
from sim.tools.execution import CallPlan, sample_call
from sim.tools.spec import ToolSpec

InterruptPhase = Literal["streaming", "tools"]
# Turns whose interrupt draws, or first attachment draws, are made at once.
TURNS_AHEAD = 16
NS_PER_S = 1_000_000_000


@dataclass(frozen=True, slots=True)
class InterruptDraw:
    """The user interrupts this turn `after_ns` after the start of `phase` (if still in it)."""

    phase: InterruptPhase
    after_ns: int


class SessionDraws:
    """The draws of one session of a scenario under one root seed."""

    __slots__ = (
        "_scenario", "_seed", "session_id", "_specs", "_user", "_interrupts", "_turns_drawn",
        "_interrupt_draws", "_rates", "_first_attachments",
    )

    def __init__(self, scenario: Scenario, seed: int, session_id: int) -> None:
        self._scenario = scenario
        self._seed = seed
        self.session_id = session_id
        self._specs = {spec.name: spec for spec in scenario.tool_specs}
        self._user: np.random.Generator | None = None
        self._interrupts: np.random.Generator | None = None
        self._turns_drawn = 0
        # Per turn drawn ahead: (fires, which phase, after_ns), next turn last.
        self._interrupt_draws: list[tuple[float, float, int]] = []
        rates = scenario.session.attachments.rates()
        self._rates = _AttachmentRates(rates) if any(rate > 0 for rate in rates.values()) else None
        # Block number -> per turn of the block: the first attachment's (gap, kind draw).
        self._first_attachments: dict[int, list[tuple[float, float]]] = {}

    def prompt_count(self) -> int:
        """How many prompts the user sends in this session (at least 1). Call it first, once."""
        self._user = stream(self._seed, "user", self.session_id)
        return max(1, self._scenario.session.user_prompts.sample(self._user))

    def think_time_ns(self) -> int:
        """The user's pause before the next prompt (call once per prompt after the first)."""
        assert self._user is not None, "prompt_count() comes first"
        return self._scenario.session.think_time.sample_ns(self._user)

    def interrupt(self, turn: int) -> InterruptDraw | None:
        """The interrupt aimed at turn `turn` (turns are drawn in order, each once), or None if
        the user lets it run. Every draw is made whether or not it is used, so each turn takes
        the same number of draws and the probability does not shift the others."""
        config = self._scenario.session.interrupts
        if config.probability <= 0:
            return None
        if turn != self._turns_drawn + 1:
            raise ValueError(
                f"interrupt draws go turn by turn: turn {turn} after {self._turns_drawn}"
            )
        self._turns_drawn = turn
        if not self._interrupt_draws:
            self._draw_interrupts_ahead()
        fires, which, after_ns = self._interrupt_draws.pop()
        if fires >= config.probability:
            return None
        weights = config.phase
        streaming = which * (weights.streaming + weights.tools) < weights.streaming
        phase: InterruptPhase = "streaming" if streaming else "tools"
        return InterruptDraw(phase, after_ns)

    def _draw_interrupts_ahead(self) -> None:
        """The next `TURNS_AHEAD` turns' draws at once (three numpy calls, not three
        per turn): per block, the firing draws, the phase draws, then the delays."""
        if self._interrupts is None:
            self._interrupts = stream(self._seed, "interrupt", self.session_id)
        rng = self._interrupts
        fires = rng.random(TURNS_AHEAD).tolist()
        which = rng.random(TURNS_AHEAD).tolist()
        after = self._scenario.session.interrupts.after.sample_many_ns(rng, TURNS_AHEAD)
        self._interrupt_draws = list(zip(fires, which, after.tolist(), strict=True))[::-1]

    def attachments(self, turn: int) -> AttachmentArrivals | None:
        """Attachments arriving during turn `turn`'s tools, or None when every rate is 0.

        Most turns' tools end before the first attachment arrives: its draws come from a block
        made for `TURNS_AHEAD` turns at once (turns with no tools skip theirs), and a turn makes
        its own stream only for the attachments after it."""
        rates = self._rates
        if rates is None:
            return None
        block, position = divmod(turn - 1, TURNS_AHEAD)
        firsts = self._first_attachments.get(block)
        if firsts is None:
            rng = stream(self._seed, "first_attachments", self.session_id, block)
            gaps = rng.exponential(rates.mean_gap_ns, TURNS_AHEAD).tolist()
            firsts = list(zip(gaps, rng.random(TURNS_AHEAD).tolist(), strict=True))
            # Only the latest block is kept: turns go forward (an older block asked for again
            # would be drawn again, the same).
            self._first_attachments = {block: firsts}

        def later() -> np.random.Generator:
            return stream(self._seed, "attachments", self.session_id, turn)

        return AttachmentArrivals(rates, firsts[position], later)

    def tool_plan(self, name: str, tool_use_id: str) -> CallPlan:
        """The plan of one call, keyed by its tool_use id (ids are the same under every policy)."""
        spec: ToolSpec = self._specs[name]
        return sample_call(spec, stream(self._seed, "tool", self.session_id, tool_use_id))

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


class _AttachmentRates:
    """Attachments of every kind as one Poisson process (the sum of the kinds' rates), each
    arrival's kind drawn in proportion to the rates: the same as one process per kind."""

    __slots__ = ("mean_gap_ns", "_kinds", "_bounds")

    def __init__(self, rates_per_s: dict[str, float]) -> None:
        total = sum(rates_per_s.values())
        self.mean_gap_ns = NS_PER_S / total
        self._kinds = [kind for kind, rate in rates_per_s.items() if rate > 0]
        running = 0.0
        self._bounds = []
        for kind in self._kinds:
            running += rates_per_s[kind] / total
            self._bounds.append(running)

    def arrival(self, gap: float, pick: float) -> tuple[int, str]:
        """The gap in ns (at least 1, so time moves) and the kind of the arrival drawn as an
        exponential `gap` and a uniform `pick`."""
        for kind, bound in zip(self._kinds, self._bounds, strict=True):
            if pick < bound:
                return max(1, int(gap)), kind
        return max(1, int(gap)), self._kinds[-1]


class AttachmentArrivals:
    """The attachments of one turn, arrival after arrival: the first from draws made ahead,
    the others from the turn's own stream, made when the second is asked for."""

    __slots__ = ("_rates", "_first", "_later", "_rng")

    def __init__(
        self,
        rates: _AttachmentRates,
        first: tuple[float, float],
        later: Callable[[], np.random.Generator],
    ) -> None:
        self._rates = rates
        self._first: tuple[float, float] | None = first
        self._later = later
        self._rng: np.random.Generator | None = None

    def next(self) -> tuple[int, str]:
        """The gap in ns (at least 1) to the next arrival, and its kind."""
        if self._first is not None:
            first, self._first = self._first, None
            return self._rates.arrival(*first)
        if self._rng is None:
            self._rng = self._later()
        rng = self._rng
        return self._rates.arrival(rng.exponential(self._rates.mean_gap_ns), rng.random())
