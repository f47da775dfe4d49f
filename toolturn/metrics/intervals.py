"""Confidence intervals over the replications of an experiment point: Student's t.

A replication is one seed of one point, so a metric's values over the replications are
independent draws of the same run. Rules:

1. The interval is 95%, two-sided: ``mean ± t(0.975, n - 1) · s / sqrt(n)``, ``s`` the standard
   deviation with ``n - 1`` degrees of freedom. It needs two values; with fewer there is none.
2. ``t`` is computed, not looked up: the Student-t CDF for integer degrees of freedom has a
   closed form (Abramowitz and Stegun 26.7.3 and 26.7.4), inverted by bisection to a fixed
   number of steps, so every machine gets the same bytes.
3. The values are summed in the order given (the replication order), so the same values give
   the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

CONFIDENCE = 0.95
# Bisection steps: 2^-200 of the bracket is far below a double's resolution.
_STEPS = 200


@dataclass(frozen=True)
class Interval:
    """The mean of ``n`` values and its confidence interval (None with fewer than two)."""

    n: int
    mean: float
    low: float | None
    high: float | None

    def excludes(self, value: float) -> bool:
        """Whether ``value`` lies outside the interval (False when there is none)."""
        return (
            self.low is not None and self.high is not None and not (self.low <= value <= self.high)
        )


def t_interval(values: Sequence[float]) -> Interval:
    """The mean of ``values`` and its t interval (rules 1 and 3); ``values`` must not be empty."""
    n = len(values)
    mean = math.fsum(values) / n
    if n < 2:
        return Interval(n, mean, None, None)
    variance = math.fsum((value - mean) ** 2 for value in values) / (n - 1)
    half = t_quantile(n - 1) * math.sqrt(variance / n)
    return Interval(n, mean, mean - half, mean + half)


@cache
def t_quantile(degrees: int, confidence: float = CONFIDENCE) -> float:
    """The ``t`` of a two-sided ``confidence`` interval with ``degrees`` degrees of freedom."""
    if degrees < 1:
        raise ValueError(f"degrees of freedom must be at least 1, got {degrees}")
    low, high = 0.0, 1.0
    while _central(high, degrees) < confidence:
        high *= 2
    for _ in range(_STEPS):
        middle = (low + high) / 2
        if _central(middle, degrees) < confidence:
            low = middle
        else:
            high = middle
    return high


def _central(t: float, degrees: int) -> float:
    """P(|T| <= t) for T Student-t with ``degrees`` degrees of freedom (rule 2)."""
    theta = math.atan(t / math.sqrt(degrees))
    cos2 = math.cos(theta) ** 2
    if degrees % 2 == 1:
        # Odd: (2/pi)(theta + sin cos (1 + 2/3 cos^2 + 2*4/(3*5) cos^4 + ...)), degrees - 3 terms.
        total, term = 0.0, 1.0
        if degrees > 1:
            total = 1.0
            for k in range(1, (degrees - 1) // 2):
                term *= cos2 * (2 * k) / (2 * k + 1)
                total += term
        return 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)
    # Even: sin (1 + 1/2 cos^2 + 1*3/(2*4) cos^4 + ...), up to cos^(degrees - 2).
    total, term = 1.0, 1.0
    for k in range(1, degrees // 2):
        term *= cos2 * (2 * k - 1) / (2 * k)
        total += term
    return math.sin(theta) * total
