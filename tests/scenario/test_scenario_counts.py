"""Count distributions: bare integers, bounds, smallest draws, determinism."""

import numpy as np
import pytest
from pydantic import BaseModel, ValidationError

from toolturn.counts import Count
from toolturn.randomness import stream


class Holder(BaseModel):
    count: Count


def count(value: object) -> Count:
    return Holder.model_validate({"count": value}).count


def draws(value: object, n: int = 5000) -> np.ndarray:
    c, rng = count(value), stream(1, "count")
    return np.array([c.sample(rng) for _ in range(n)])


def test_bare_int_is_fixed_and_draws_nothing() -> None:
    rng = stream(1, "c")
    before = rng.bit_generator.state
    assert count(4).sample(rng) == 4
    assert rng.bit_generator.state == before
    assert count(4).smallest() == 4


def test_uniform_includes_both_ends() -> None:
    assert set(draws({"kind": "uniform", "low": 2, "high": 4}).tolist()) == {2, 3, 4}
    assert count({"kind": "uniform", "low": 2, "high": 4}).smallest() == 2


def test_lognormal_median_and_cap() -> None:
    values = draws({"kind": "lognormal", "median": 100, "sigma": 0.5, "max": 250})
    assert abs(np.median(values) - 100) < 5
    assert values.max() == 250
    assert count({"kind": "lognormal", "median": 100, "sigma": 0.5}).smallest() == 0


def test_empirical_draws_only_observed_values() -> None:
    assert set(draws({"kind": "empirical", "values": [1, 5]}).tolist()) == {1, 5}
    assert count({"kind": "empirical", "values": [3, 5]}).smallest() == 3


@pytest.mark.parametrize(
    "value",
    [
        -1,
        True,
        "3",
        {"kind": "uniform", "low": 5, "high": 2},
        {"kind": "empirical", "values": []},
        {"kind": "fixed", "n": 1, "extra": 2},
        {"kind": "lognormal", "median": 0, "sigma": 1},
    ],
)
def test_invalid_counts_are_rejected(value: object) -> None:
    with pytest.raises(ValidationError):
        count(value)
