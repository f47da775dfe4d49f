"""Duration distributions: units, bounds, validation, and determinism of the random streams."""

import numpy as np
import pytest
from pydantic import TypeAdapter, ValidationError

from toolturn.distributions import (
    Distribution,
    Empirical,
    Fixed,
    LogNormal,
    Uniform,
    sample_short_runs,
)
from toolturn.randomness import stream

ADAPTER: TypeAdapter[Fixed | Uniform | LogNormal | Empirical] = TypeAdapter(Distribution)


def test_fixed_is_exact_nanoseconds_and_draws_nothing() -> None:
    rng = stream(1, "x")
    before = rng.bit_generator.state
    assert ADAPTER.validate_python({"kind": "fixed", "ms": 1.5}).sample_ns(rng) == 1_500_000
    assert rng.bit_generator.state == before


def test_uniform_stays_in_bounds() -> None:
    draws = Uniform(kind="uniform", low_ms=10, high_ms=20).sample_many_ns(stream(1, "u"), 10_000)
    assert draws.dtype == np.int64
    assert draws.min() >= 10_000_000 and draws.max() <= 20_000_000


def test_lognormal_median_and_cap() -> None:
    dist = LogNormal(kind="lognormal", median_ms=100, sigma=0.5, max_ms=300)
    draws = dist.sample_many_ns(stream(2, "l"), 20_000)
    assert abs(np.median(draws) / 1e6 - 100) < 3
    assert draws.max() <= 300_000_000


def test_empirical_draws_only_observed_values() -> None:
    draws = Empirical(kind="empirical", values_ms=[1, 2, 3]).sample_many_ns(stream(3, "e"), 1000)
    assert set(draws.tolist()) == {1_000_000, 2_000_000, 3_000_000}


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ({"kind": "uniform", "low_ms": 5, "high_ms": 1}, "below low_ms"),
        ({"kind": "fixed", "ms": -1}, "greater than or equal to 0"),
        ({"kind": "gamma", "ms": 1}, "does not match any of the expected tags"),
        ({"kind": "fixed", "ms": 1, "extra": 2}, "Extra inputs are not permitted"),
        ({"kind": "empirical", "values_ms": []}, "at least 1 item"),
    ],
)
def test_invalid_specs_say_why(spec: dict[str, object], reason: str) -> None:
    with pytest.raises(ValidationError, match=reason):
        ADAPTER.validate_python(spec)


def test_streams_are_keyed_not_ordered() -> None:
    first = stream(7, "latency", 3).random()
    stream(7, "other", 1).random()
    assert stream(7, "latency", 3).random() == first
    assert stream(7, "latency", 4).random() != first
    assert stream(8, "latency", 3).random() != first


LOGNORMALS = [
    LogNormal(kind="lognormal", median_ms=1500, sigma=0.3, max_ms=30_000),
    LogNormal(kind="lognormal", median_ms=5, sigma=0.5, max_ms=5.5),  # the cap bites often
    LogNormal(kind="lognormal", median_ms=300, sigma=0.5),  # no cap
]
MIXED = [LOGNORMALS[0], Uniform(kind="uniform", low_ms=1, high_ms=3), Fixed(kind="fixed", ms=2)]


@pytest.mark.parametrize("dists", [LOGNORMALS, MIXED], ids=["lognormal", "mixed"])
@pytest.mark.parametrize("counts", [(1, 3, 2), (1, 40, 0), (0, 0, 0)])
def test_short_runs_draw_what_each_distribution_would_in_turn(
    dists: list[Distribution], counts: tuple[int, int, int]
) -> None:
    for seed in range(20):
        one_by_one = stream(seed, "runs")
        expected = [
            dist.sample_many_ns(one_by_one, count).tolist()
            for dist, count in zip(dists, counts, strict=True)
        ]
        together = stream(seed, "runs")
        assert sample_short_runs(together, list(zip(dists, counts, strict=True))) == expected
        assert together.random() == one_by_one.random()  # the stream is left where they leave it


def test_short_runs_cap_a_draw_beyond_the_largest_float_as_numpy_does() -> None:
    # exp(2000 z) overflows a float for any z above 0.36: a third of the draws.
    wild = LogNormal(kind="lognormal", median_ms=1, sigma=2000, max_ms=30_000)
    for seed in range(10):
        with np.errstate(over="ignore"):
            expected = wild.sample_many_ns(stream(seed, "wild"), 8).tolist()
        assert sample_short_runs(stream(seed, "wild"), [(wild, 8)]) == [expected]
