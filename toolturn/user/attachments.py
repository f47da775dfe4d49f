"""Attachments the simulated user's environment sends while a turn's tools run: notifications,
queued user input, file changes; arrival after arrival, and the text block each one is.

Every kind together is one Poisson process per turn (`AttachmentRates`); its first gap comes from
draws made ahead for several turns, the later ones from the turn's own stream
(`toolturn.user.draws.UserDraws.attachments`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

NS_PER_S = 1_000_000_000


def attachment_block(kind: str, count: int, turn: int) -> dict[str, Any]:
    """The content block attachment `count` (from 1) of `kind` during turn `turn` is."""
    return {"type": "text", "text": f"[{kind} {count} during turn {turn}]"}


class AttachmentRates:
    """Attachments of every kind as one Poisson process (the sum of the kinds' rates), each
    arrival's kind drawn in proportion to the rates: the same as one process per kind."""

    __slots__ = ("_bounds", "_kinds", "mean_gap_ns")

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

    __slots__ = ("_first", "_later", "_rates", "_rng")

    def __init__(
        self,
        rates: AttachmentRates,
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
