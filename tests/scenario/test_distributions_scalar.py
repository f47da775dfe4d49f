"""One draw (`sample_ns`, plain Python) is exactly the first of many (`sample_many_ns`, numpy):
the same integer, and the generator left in the same state."""

from __future__ import annotations

import pytest

from toolturn.distributions import Distribution, Empirical, Fixed, LogNormal, Uniform
from toolturn.randomness import stream

DISTRIBUTIONS: list[Distribution] = [
    Fixed(kind="fixed", ms=2.5),
    Uniform(kind="uniform", low_ms=0.5, high_ms=3.0),
    Uniform(kind="uniform", low_ms=4.0, high_ms=4.0),
    LogNormal(kind="lognormal", median_ms=1500, sigma=0.3),
    LogNormal(kind="lognormal", median_ms=5.0, sigma=0.5, max_ms=6.0),  # often capped
    LogNormal(kind="lognormal", median_ms=0.0004, sigma=0.2),  # halves of a nanosecond
    Empirical(kind="empirical", values_ms=[0.0000005, 0.0000015, 3, 5.25, 13]),
]


@pytest.mark.parametrize("distribution", DISTRIBUTIONS, ids=lambda d: repr(d))
def test_one_draw_is_the_first_of_many(distribution: Distribution) -> None:
    for seed in range(300):
        one, many = stream(seed, "one"), stream(seed, "one")
        value = distribution.sample_ns(one)
        assert type(value) is int
        assert value == int(distribution.sample_many_ns(many, 1)[0])
        assert one.bit_generator.state == many.bit_generator.state
