"""Every random draw the simulated user makes, keyed by what it is for (common random numbers).

Each draw comes from a stream named by concern and identity (`toolturn.randomness.stream`): the user
of session 7 (prompt count, then the think times in prompt order), its interrupts (fixed-size
blocks of draws for `TURNS_AHEAD` turns at a time, in turn order), the first attachment of each
of its turns (drawn for `TURNS_AHEAD` turns at a time, a block by turn number) and the later ones
of its turn 3. Nothing depends on when things happen, so every executor policy, every load level
and a live run see the same draws for the same session and turn. (Prompts and turns are numbered
the same under every policy and each is drawn exactly once, in order, which is why one stream per
session serves them: a stream costs more to make than a turn's own draws.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from toolturn.randomness import stream
from toolturn.scenario.schema import Scenario
from toolturn.user.attachments import AttachmentArrivals, AttachmentRates

InterruptPhase = Literal["streaming", "tools"]
# Turns whose interrupt draws, or first attachment draws, are made at once.
TURNS_AHEAD = 16


@dataclass(frozen=True, slots=True)
class InterruptDraw:
    """The user interrupts this turn `after_ns` after the start of `phase` (if still in it)."""

    phase: InterruptPhase
    after_ns: int


class UserDraws:
    """The user's draws in one session of a scenario under one root seed."""

    __slots__ = (
        "_first_attachments", "_interrupt_draws", "_interrupts", "_rates", "_scenario", "_seed",
        "_turns_drawn", "_user", "session_id",
    )

    def __init__(self, scenario: Scenario, seed: int, session_id: int) -> None:
        self._scenario = scenario
        self._seed = seed
        self.session_id = session_id
        self._user: np.random.Generator | None = None
        self._interrupts: np.random.Generator | None = None
        self._turns_drawn = 0
        # Per turn drawn ahead: (fires, which phase, after_ns), next turn last.
        self._interrupt_draws: list[tuple[float, float, int]] = []
        rates = scenario.session.attachments.rates()
        self._rates = AttachmentRates(rates) if any(rate > 0 for rate in rates.values()) else None
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
