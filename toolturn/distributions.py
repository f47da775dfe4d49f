"""Distributions of durations, as scenario files spell them, sampled to integer nanoseconds.

A scenario writes a duration in milliseconds (what people think in); sampling returns integer
nanoseconds (what the simulator counts in), so simulated time never accumulates float error.

    ttft = { kind = "lognormal", median_ms = 1500, sigma = 0.3 }
    gap  = { kind = "uniform", low_ms = 10, high_ms = 20 }
    cost = { kind = "fixed", ms = 5 }
    seen = { kind = "empirical", values_ms = [3, 5, 8, 13] }
"""

from __future__ import annotations

import itertools
import math
import sys
from abc import abstractmethod
from collections.abc import Iterable, Sequence
from typing import Annotated, Literal, cast

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from toolturn.limits import MAX_DURATION_MS

NS_PER_MS = 1_000_000


def ms_to_ns(ms: float) -> int:
    return round(ms * NS_PER_MS)


_LOG_FLOAT_MAX = math.log(sys.float_info.max)


def _rounded_ns(draws_ms: np.ndarray) -> np.ndarray:
    """Milliseconds (a fresh float array, consumed) to integer nanoseconds, rounded half to
    even; in place, as this runs for every token of every response."""
    draws_ms *= NS_PER_MS
    rounded: np.ndarray = np.rint(draws_ms, out=draws_ms).astype(np.int64)
    return rounded


class _Distribution(BaseModel):
    """Each kind samples one draw (`sample_ns`) in plain Python and many at once in numpy: the
    same draws from the generator and the same integers (a test checks it). One numpy call on a
    one-element array costs about as much as the whole scalar draw, and single draws are what
    tool calls, think times and first tokens take."""

    # Strict, as every table of a scenario (see toolturn.scenario.schema._Section).
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)

    @abstractmethod
    def sample_ns(self, rng: np.random.Generator) -> int:
        """One draw in nanoseconds: `sample_many_ns(rng, 1)[0]`, faster."""
        raise NotImplementedError

    @abstractmethod
    def sample_many_ns(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """`n` draws as an int64 array of nanoseconds, never negative."""
        raise NotImplementedError

    @abstractmethod
    def mean_ns(self) -> float:
        raise NotImplementedError


class Fixed(_Distribution):
    kind: Literal["fixed"]
    ms: float = Field(ge=0, le=MAX_DURATION_MS, description="The duration, every time.")

    def sample_ns(self, rng: np.random.Generator) -> int:
        return ms_to_ns(self.ms)

    def sample_many_ns(self, rng: np.random.Generator, n: int) -> np.ndarray:
        # Draws nothing, so a fixed value never shifts the random stream it shares.
        return np.full(n, ms_to_ns(self.ms), dtype=np.int64)

    def mean_ns(self) -> float:
        return float(ms_to_ns(self.ms))


class Uniform(_Distribution):
    kind: Literal["uniform"]
    low_ms: float = Field(ge=0, le=MAX_DURATION_MS, description="Shortest duration.")
    high_ms: float = Field(
        ge=0, le=MAX_DURATION_MS, description="Longest duration (at least low_ms)."
    )

    @model_validator(mode="after")
    def _ordered(self) -> Uniform:
        if self.high_ms < self.low_ms:
            raise ValueError(f"high_ms ({self.high_ms}) is below low_ms ({self.low_ms})")
        return self

    def sample_ns(self, rng: np.random.Generator) -> int:
        # Python's round() rounds halves to even, as np.rint does.
        return round(rng.uniform(self.low_ms, self.high_ms) * NS_PER_MS)

    def sample_many_ns(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return _rounded_ns(rng.uniform(self.low_ms, self.high_ms, size=n))

    def mean_ns(self) -> float:
        return (self.low_ms + self.high_ms) / 2 * NS_PER_MS


class LogNormal(_Distribution):
    """Parameterised by its median (intuitive for latencies) and the sigma of the log."""

    kind: Literal["lognormal"]
    median_ms: float = Field(gt=0, le=MAX_DURATION_MS, description="Median duration.")
    sigma: float = Field(ge=0, description="Standard deviation of the natural log of a draw.")
    # A cap keeps one extreme draw from dominating a small run; None means no cap but
    # `MAX_DURATION_MS`.
    max_ms: float | None = Field(
        default=None, gt=0, le=MAX_DURATION_MS,
        description="Cap on a draw; none: the largest duration a scenario may hold.",
    )

    @property
    def cap_ms(self) -> float:
        return MAX_DURATION_MS if self.max_ms is None else self.max_ms

    def sample_ns(self, rng: np.random.Generator) -> int:
        draw = rng.lognormal(math.log(self.median_ms), self.sigma)
        return round(min(draw, self.cap_ms) * NS_PER_MS)

    def sample_many_ns(self, rng: np.random.Generator, n: int) -> np.ndarray:
        draws = rng.lognormal(math.log(self.median_ms), self.sigma, size=n)
        # `cap_ms` inline: a property call per response's token gaps, for one comparison.
        np.minimum(draws, MAX_DURATION_MS if self.max_ms is None else self.max_ms, out=draws)
        return _rounded_ns(draws)

    def ns_of_normals(self, normals: Iterable[float]) -> list[int]:
        """The draws in nanoseconds that standard normals `normals` make: numpy draws a
        lognormal as exp(mu + sigma * z) of a normal z, so these are the numbers
        `sample_many_ns` gives from the generator those normals came from."""
        mu, sigma, cap = math.log(self.median_ms), self.sigma, self.cap_ms
        logs = [mu + sigma * z for z in normals]
        return [
            # Beyond the largest float's log numpy's exp is infinite, where math's raises.
            round(min(math.exp(log) if log <= _LOG_FLOAT_MAX else math.inf, cap) * NS_PER_MS)
            for log in logs
        ]

    def mean_ns(self) -> float:
        # The cap is ignored here: the mean is for reporting, not for sampling. Infinite when
        # it passes the largest float (`sigma**2` and `math.exp` would raise instead).
        exponent = self.sigma * self.sigma / 2
        if exponent > _LOG_FLOAT_MAX:
            return math.inf
        return self.median_ms * math.exp(exponent) * NS_PER_MS


class Empirical(_Distribution):
    """Draws uniformly from observed values (a recorded trace of latencies, say)."""

    kind: Literal["empirical"]
    values_ms: list[Annotated[float, Field(ge=0, le=MAX_DURATION_MS)]] = Field(
        min_length=1, description="Observed durations, each drawn with equal chance."
    )

    def sample_ns(self, rng: np.random.Generator) -> int:
        return round(self.values_ms[int(rng.integers(0, len(self.values_ms)))] * NS_PER_MS)

    def sample_many_ns(self, rng: np.random.Generator, n: int) -> np.ndarray:
        values = np.rint(np.asarray(self.values_ms) * NS_PER_MS).astype(np.int64)
        drawn: np.ndarray = values[rng.integers(0, len(values), size=n)]
        return drawn

    def mean_ns(self) -> float:
        return float(np.mean(self.values_ms)) * NS_PER_MS


Distribution = Annotated[Fixed | Uniform | LogNormal | Empirical, Field(discriminator="kind")]


def sample_short_runs(
    rng: np.random.Generator, runs: Sequence[tuple[Distribution, int]]
) -> list[list[int]]:
    """`sample_many_ns(rng, count)` of each `(distribution, count)` in turn, as lists: the same
    values, leaving `rng` in the same state.

    For a few values each (a response's first-token time, its block gaps and tool_use pauses)
    numpy's cost is per call, not per value. When every distribution is lognormal, their normal
    draws are made in one call and the rest in plain arithmetic (`LogNormal.ns_of_normals`).
    """
    if not all(type(dist) is LogNormal for dist, _ in runs):
        return [dist.sample_many_ns(rng, count).tolist() for dist, count in runs]
    normals = iter(rng.standard_normal(sum(count for _, count in runs)).tolist())
    return [
        dist.ns_of_normals(itertools.islice(normals, count))
        for dist, count in cast(Sequence[tuple[LogNormal, int]], runs)
    ]


def fixed_ms(ms: float) -> Fixed:
    return Fixed(kind="fixed", ms=ms)
