"""Distributions of whole-number counts (characters of a result, prompts in a session).

Durations have their own module (`toolturn.distributions`, written in ms, sampled to ns); a count
has no unit and is sampled to a non-negative `int`. A bare integer in a scenario file means a fixed
count:

    user_prompts = 3
    user_prompts = { kind = "uniform", low = 1, high = 6 }          # both ends included
    result_chars = { kind = "lognormal", median = 1800, sigma = 1.0, max = 40000 }
    result_chars = { kind = "empirical", values = [120, 800, 5000] }
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from toolturn.limits import MAX_COUNT
from toolturn.randomness import below


class _Count(BaseModel):
    # Strict, as every table of a scenario (see toolturn.scenario.schema._Section).
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)

    @abstractmethod
    def sample(self, rng: np.random.Generator) -> int:
        """One draw, never negative."""
        raise NotImplementedError

    @abstractmethod
    def smallest(self) -> int:
        """The smallest count a draw can give."""
        raise NotImplementedError

    @abstractmethod
    def largest(self) -> int:
        """The largest count a draw can give."""
        raise NotImplementedError


class FixedCount(_Count):
    kind: Literal["fixed"]
    n: int = Field(ge=0, le=MAX_COUNT, description="The count, every time.")

    def sample(self, rng: np.random.Generator) -> int:
        # Draws nothing, so a fixed count never shifts the random stream it shares.
        return self.n

    def smallest(self) -> int:
        return self.n

    def largest(self) -> int:
        return self.n


class UniformCount(_Count):
    kind: Literal["uniform"]
    low: int = Field(ge=0, le=MAX_COUNT, description="Smallest count (included).")
    high: int = Field(ge=0, le=MAX_COUNT, description="Largest count (included).")

    @model_validator(mode="after")
    def _ordered(self) -> UniformCount:
        if self.high < self.low:
            raise ValueError(f"high ({self.high}) is below low ({self.low})")
        return self

    def sample(self, rng: np.random.Generator) -> int:
        return self.low + below(rng, self.high - self.low + 1)

    def smallest(self) -> int:
        return self.low

    def largest(self) -> int:
        return self.high


class LogNormalCount(_Count):
    """Parameterised by its median and the sigma of the log; heavy-tailed like real output sizes."""

    kind: Literal["lognormal"]
    median: float = Field(gt=0, le=MAX_COUNT, description="Median count.")
    sigma: float = Field(ge=0, description="Standard deviation of the natural log of the count.")
    max: int | None = Field(
        default=None, ge=0, le=MAX_COUNT, description="Cap on a draw; none means MAX_COUNT."
    )

    def sample(self, rng: np.random.Generator) -> int:
        cap = MAX_COUNT if self.max is None else self.max
        # Capped before rounding: an infinite draw has no integer.
        return round(min(rng.lognormal(math.log(self.median), self.sigma), cap))

    def smallest(self) -> int:
        # A draw below one half rounds to 0, however unlikely.
        return 0

    def largest(self) -> int:
        return MAX_COUNT if self.max is None else self.max


class EmpiricalCount(_Count):
    """Draws uniformly from observed counts."""

    kind: Literal["empirical"]
    values: list[Annotated[int, Field(ge=0, le=MAX_COUNT)]] = Field(
        min_length=1, description="Observed counts."
    )

    def sample(self, rng: np.random.Generator) -> int:
        return self.values[below(rng, len(self.values))]

    def smallest(self) -> int:
        return min(self.values)

    def largest(self) -> int:
        return max(self.values)


def _bare_int_is_fixed(value: Any) -> Any:
    # bool is an int in Python; `true` in a scenario is a mistake, not the count 1.
    if isinstance(value, int) and not isinstance(value, bool):
        return {"kind": "fixed", "n": value}
    return value


Count = Annotated[
    FixedCount | UniformCount | LogNormalCount | EmpiricalCount,
    Field(discriminator="kind"),
    BeforeValidator(_bare_int_is_fixed),
]


def fixed_count(n: int) -> FixedCount:
    return FixedCount(kind="fixed", n=n)
