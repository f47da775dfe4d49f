"""The bounds of `toolturn.limits`: a scenario beyond them is refused naming the field, and draws of
unbounded distributions stay inside them, so no value becomes a garbage integer, a crash or a
run that eats all memory."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from tests.helpers.scenarios import MINIMAL
from toolturn.cli import main
from toolturn.counts import LogNormalCount
from toolturn.distributions import LogNormal, sample_short_runs
from toolturn.errors import UserError
from toolturn.limits import MAX_COUNT, MAX_DURATION_MS, MAX_PINGS_PER_STREAM
from toolturn.model.disruption import with_keepalive_pings
from toolturn.randomness import stream
from toolturn.scenario.loader import load_scenario

ROOT = Path(__file__).parents[2]
MAX_DURATION_NS = round(MAX_DURATION_MS * 1_000_000)
CLOSED = MINIMAL
OPEN = MINIMAL.replace('mode = "closed"', 'mode = "open"').replace("concurrency = 2\n", "")


def error_of(tmp_path: Path, text: str) -> str:
    path = tmp_path / "s.toml"
    path.write_text(text)
    with pytest.raises(UserError) as info:
        load_scenario(path)
    return str(info.value)


@pytest.mark.parametrize(
    ("text", "field", "reason"),
    [
        (CLOSED + "[session]\nthink_time = { kind = 'fixed', ms = 1e300 }\n",
         "session.think_time.ms", "less than or equal to 1000000000"),
        (CLOSED + "[session]\nthink_time = { kind = 'fixed', ms = inf }\n",
         "session.think_time.ms", "finite"),
        (CLOSED + "[session.interrupts]\nafter = { kind = 'lognormal', median_ms = 1, "
         "sigma = nan }\n", "session.interrupts.after.sigma", "finite"),
        (CLOSED + "[session]\nuser_prompts = { kind = 'uniform', low = 1, high = 10000000 }\n",
         "session.user_prompts.high", "less than or equal to 1000000"),
        (CLOSED + "[model.script]\nkind = 'generated'\ntext_tokens = { kind = 'empirical', "
         "values = [5, 1e7] }\n", "model.script.text_tokens.values", ""),
        (CLOSED + "[model.latency]\ntokens_per_s = 1e-30\n",
         "model.latency.tokens_per_s", "greater than or equal to 0.000001"),
        (CLOSED + "[model.latency]\nping_interval_ms = 1e-9\n",
         "model.latency.ping_interval_ms", "greater than or equal to 1"),
        (CLOSED + "[model.faults]\nretry_after_ms = 1e12\n",
         "model.faults.retry_after_ms", "less than or equal"),
        (CLOSED + "[runtime.retries]\nmax_backoff_ms = 1e12\n",
         "runtime.retries.max_backoff_ms", "less than or equal"),
        (CLOSED + "[session.attachments]\nnotification = 1e300\n",
         "session.attachments.notification", "less than or equal to 1000"),
        (OPEN + "arrival_rate_per_s = 1e-30\n",
         "load.arrival_rate_per_s", "greater than or equal to 0.000001"),
        (OPEN + "sweep = [1, 1e-30]\n", "load.sweep", "at least 1e-06"),
        (OPEN + "trace_ms = [0, 1, 2, 1e30]\n", "load.trace_ms", "less than or equal"),
        (CLOSED + "horizon_s = 1e30\n", "load.horizon_s", "less than or equal"),
        # Issue 13, defect 3: each value within its bound, the run not.
        (CLOSED + "[model.endpoint]\ncapacity = 2\nlatency_growth = 1e300\n",
         "model.endpoint.latency_growth", "less than or equal to 100"),
        (CLOSED + "[model.endpoint]\ncapacity = 2\nlatency_growth = 1e7\n",
         "model.endpoint.latency_growth", "less than or equal to 100"),
        (CLOSED.replace("sessions = 4", "sessions = 10000000"),
         "load.sessions", "less than or equal to 1000000"),
        (CLOSED + "[runtime.retries]\nmax_retries = 1000000000000000000\n",
         "runtime.retries.max_retries", "less than or equal to 100"),
        (CLOSED + "[runtime]\nmax_turns_per_prompt = 1000000000\n",
         "runtime.max_turns_per_prompt", "less than or equal to 1000000"),
        (CLOSED + "[model.latency]\ntoken_gap = { kind = 'fixed', ms = 1e9 }\n",
         "model", "one response could last"),
        (CLOSED + "[model.endpoint]\ncapacity = 2\nlatency_growth = 100\n"
         "[model.latency]\ntoken_gap = { kind = 'fixed', ms = 1e6 }\n",
         "model", "one response could last"),
        (CLOSED + "[session]\nuser_prompts = 1000000\n"
         "think_time = { kind = 'fixed', ms = 1e9 }\n",
         "session", "one session could last"),
    ],
)  # fmt: skip
def test_values_beyond_the_bounds_are_refused_naming_the_field(
    tmp_path: Path, text: str, field: str, reason: str
) -> None:
    message = error_of(tmp_path, text)
    assert f": {field}" in message
    assert reason in message


def test_an_uncapped_lognormal_duration_stays_within_the_ceiling_on_every_path() -> None:
    wild = LogNormal(kind="lognormal", median_ms=1000, sigma=50)
    with np.errstate(over="ignore"):
        many = wild.sample_many_ns(stream(1, "wild"), 1000).tolist()
    one_by_one = [wild.sample_ns(stream(1, "wild", n)) for n in range(200)]
    [short] = sample_short_runs(stream(1, "wild"), [(wild, 1000)])
    for draws in (many, one_by_one, short):
        assert 0 <= min(draws) and max(draws) == MAX_DURATION_NS  # the ceiling bites: sigma 50
    assert short == many
    assert wild.mean_ns() == math.inf  # not an OverflowError
    assert LogNormal(kind="lognormal", median_ms=1, sigma=1e300).mean_ns() == math.inf


def test_an_uncapped_lognormal_count_stays_within_the_ceiling() -> None:
    wild = LogNormalCount(kind="lognormal", median=25, sigma=600)
    capped = LogNormalCount(kind="lognormal", median=25, sigma=600, max=300)
    for count, cap in ((wild, MAX_COUNT), (capped, 300)):
        rng = stream(1, "count")
        with np.errstate(over="ignore"):
            draws = [count.sample(rng) for _ in range(200)]
        assert min(draws) == 0 and max(draws) == cap


def test_a_run_with_extreme_but_valid_draws_writes_its_results(tmp_path: Path) -> None:
    # Before the bounds, this scenario's token counts were generated until memory ran out and
    # its think times were rounded from infinity (Python's round raises on it).
    text = (ROOT / "scenarios" / "default.toml").read_text()
    for old, new in [
        ("median_ms = 15000, sigma = 0.8, max_ms = 300000", "median_ms = 15000, sigma = 40"),
        ("median = 25, sigma = 0.7, max = 300", "median = 25, sigma = 40"),
    ]:
        assert old in text
        text = text.replace(old, new)
    scenario = tmp_path / "wild.toml"
    scenario.write_text(text)
    out = tmp_path / "run"
    with np.errstate(over="ignore"):
        status = main(["run", str(scenario), "--sessions", "6", "--policy", "streaming",
                       "--out", str(out)])  # fmt: skip
    assert status == 0
    turns = pq.read_table(out / "turns.parquet").to_pylist()
    assert turns and all(0 <= row["turn_end_ns"] < 2**63 for row in turns)


def test_a_stream_sends_at_most_so_many_keepalive_pings() -> None:
    # A 1 ms ping interval through a first token of 11.6 days: a billion pings, uncapped.
    times, events = [0, MAX_DURATION_NS, MAX_DURATION_NS + 1], [{"type": "a"}] * 3
    pinged_times, pinged, _ = with_keepalive_pings(
        times, events, 2 * MAX_DURATION_NS, 1_000_000, None
    )
    pings = [event for event in pinged if event["type"] == "ping"]
    assert len(pings) == MAX_PINGS_PER_STREAM
    assert pinged_times == sorted(pinged_times)
    assert [event for event in pinged if event["type"] != "ping"] == events


def test_the_largest_latency_growth_runs_to_its_end(tmp_path: Path) -> None:
    # latency_growth = 1e7 took 886 MB for 3 sessions (a ping every 10 s of months-long
    # responses); the largest growth allowed now is an ordinary run.
    path = tmp_path / "s.toml"
    path.write_text(
        CLOSED.replace("sessions = 4", "sessions = 3").replace("concurrency = 2", "concurrency = 3")
        + "[runtime]\npolicies = ['streaming']\n"
        + "[model.endpoint]\ncapacity = 2\nlatency_growth = 100\n"
    )
    out = tmp_path / "out"
    assert main(["run", str(path), "--no-report", "--out", str(out)]) == 0
    assert pq.read_table(out / "sessions.parquet").num_rows == 3
