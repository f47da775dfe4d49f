"""Distributions of whole numbers (tokens in a text, tool calls in a turn), as scenarios spell them.

    text_tokens = { kind = "lognormal", median = 120, sigma = 0.6, max = 2000 }
    tool_calls  = { kind = "choice", values = [1, 2, 3], weights = [0.6, 0.3, 0.1] }
    thinking    = { kind = "uniform", low = 0, high = 400 }
    fixed       = { kind = "fixed", value = 2 }
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Count(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def sample(self, rng: np.random.Generator) -> int:
        """One draw, never negative."""
        raise NotImplementedError

    def minimum(self) -> int:
        """The smallest value this distribution can draw."""
        raise NotImplementedError


class FixedCount(_Count):
    kind: Literal["fixed"]
    value: int = Field(ge=0, description="The value every draw returns.")

    def sample(self, rng: np.random.Generator) -> int:
        # Draws nothing, so a fixed count never shifts the random stream it shares.
        return self.value

    def minimum(self) -> int:
        return self.value


class UniformCount(_Count):
    kind: Literal["uniform"]
    low: int = Field(ge=0, description="Smallest value, inclusive.")
    high: int = Field(ge=0, description="Largest value, inclusive.")

    @model_validator(mode="after")
    def _ordered(self) -> UniformCount:
        if self.high < self.low:
            raise ValueError(f"high ({self.high}) is below low ({self.low})")
        return self

    def sample(self, rng: np.random.Generator) -> int:
        return int(rng.integers(self.low, self.high + 1))

    def minimum(self) -> int:
        return self.low


class LogNormalCount(_Count):
    """Right-skewed lengths (most answers short, a few long), parameterised by the median."""

    kind: Literal["lognormal"]
    median: float = Field(gt=0, description="Median of the draws.")
    sigma: float = Field(ge=0, description="Standard deviation of the logarithm.")
    max: int | None = Field(default=None, ge=0, description="Cap on a draw; none if omitted.")

    def sample(self, rng: np.random.Generator) -> int:
        draw = int(round(rng.lognormal(math.log(self.median), self.sigma)))
        return draw if self.max is None else min(draw, self.max)

    def minimum(self) -> int:
        return 0


class ChoiceCount(_Count):
    kind: Literal["choice"]
    values: list[Annotated[int, Field(ge=0)]] = Field(
        min_length=1, description="The values a draw may return."
    )
    weights: list[Annotated[float, Field(ge=0)]] | None = Field(
        default=None, description="Relative weight of each value; equal if omitted."
    )

    @model_validator(mode="after")
    def _weights_match(self) -> ChoiceCount:
        if self.weights is not None:
            if len(self.weights) != len(self.values):
                raise ValueError(
                    f"weights has {len(self.weights)} entries but values has {len(self.values)}"
                )
            if sum(self.weights) <= 0:
                raise ValueError("weights must not all be zero")
        return self

    def sample(self, rng: np.random.Generator) -> int:
        if self.weights is None:
            return self.values[int(rng.integers(0, len(self.values)))]
        p = np.asarray(self.weights) / sum(self.weights)
        return self.values[int(rng.choice(len(self.values), p=p))]

    def minimum(self) -> int:
        if self.weights is None:
            return min(self.values)
        return min(v for v, w in zip(self.values, self.weights, strict=True) if w > 0)


Count = Annotated[
    FixedCount | UniformCount | LogNormalCount | ChoiceCount, Field(discriminator="kind")
]


def fixed_count(value: int) -> FixedCount:
    return FixedCount(kind="fixed", value=value)
